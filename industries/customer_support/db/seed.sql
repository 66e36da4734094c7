-- Kestrel Electronics seed. The pack clock (pack.json) is Wednesday 2026-10-14 10:00.
-- Money is integer cents. Every edge case the README lists is marked here with "edge:".

INSERT INTO stores (id, name, city, state, address, hours, techcrew_bench) VALUES
    ('st_denver', 'Kestrel Denver Cherry Creek', 'Denver', 'CO', '3000 East First Avenue, Denver', 'Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 6 p.m.', 1),
    ('st_seattle', 'Kestrel Seattle Northgate', 'Seattle', 'WA', '401 Northeast Northgate Way, Seattle', 'Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 7 p.m.', 1),
    ('st_manhattan', 'Kestrel Manhattan Union Square', 'New York', 'NY', '52 East Fourteenth Street, New York', 'Every day 8 a.m. to 10 p.m.', 1),
    ('st_austin', 'Kestrel Austin Domain', 'Austin', 'TX', '11410 Century Oaks Terrace, Austin', 'Monday to Saturday 10 a.m. to 9 p.m., Sunday 11 a.m. to 6 p.m.', 1),
    ('st_phoenix', 'Kestrel Phoenix Camelback', 'Phoenix', 'AZ', '2502 East Camelback Road, Phoenix', 'Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 6 p.m.', 1),
    ('st_portland', 'Kestrel Portland Lloyd', 'Portland', 'OR', '1260 Lloyd Center, Portland', 'Monday to Saturday 10 a.m. to 8 p.m., closed Sunday', 0);

INSERT INTO store_info (topic, answer) VALUES
    ('hours', 'Denver Cherry Creek: Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 6 p.m. Seattle Northgate: Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 7 p.m. Manhattan Union Square: every day 8 a.m. to 10 p.m. Austin Domain: Monday to Saturday 10 a.m. to 9 p.m., Sunday 11 a.m. to 6 p.m. Phoenix Camelback: Monday to Saturday 9 a.m. to 9 p.m., Sunday 10 a.m. to 6 p.m. Portland Lloyd: Monday to Saturday 10 a.m. to 8 p.m., closed Sunday. Phone support is open every day 7 a.m. to 11 p.m. Eastern.'),
    ('locations', 'Kestrel has six stores: Denver Cherry Creek (3000 East First Avenue), Seattle Northgate (401 Northeast Northgate Way), Manhattan Union Square (52 East Fourteenth Street), Austin Domain (11410 Century Oaks Terrace), Phoenix Camelback (2502 East Camelback Road) and Portland Lloyd (1260 Lloyd Center). Every store except Portland has a TechCrew repair bench.'),
    ('return_policy', 'Return windows count from the delivery date and depend on the product and on membership. General electronics, TVs, audio and small appliances: 30 days, 45 with Kestrel Plus, 60 with Kestrel Elite. Computers and tablets, cameras and drones: 15 days, 30 with Plus, 45 with Elite. Major appliances: 15 days, 15 with Plus, 30 with Elite. Open-box items: 14 days for everyone. A membership counts when it started on or before the order date. Items sold by marketplace sellers are returned through the seller. Recalled products can be returned at any time for a full refund.'),
    ('restocking_fees', 'Opened computers and tablets, cameras and drones carry a 15 percent restocking fee; opened major appliances 10 percent; other products none. Unopened items and recalled products have no fee. In Colorado the fee is capped at 10 percent, and in Oregon there is no restocking fee. The state is the one the order was delivered to.'),
    ('price_match', 'Kestrel matches the current price of an identical new item at BrightBuy, MegaMart, Tech Depot and Circuit Hub, for up to 15 days after the order was placed. It does not match marketplace-seller items, open-box items, other retailers, auction or marketplace sites, or a price that is not lower than what was paid. The difference is refunded to the original payment.'),
    ('delivery', 'Large items come by Kestrel scheduled home delivery, Monday to Saturday; the date can be changed by phone up to the day before. A change made two days or fewer before the scheduled date costs 14.99 dollars; earlier changes are free. The new date can be at most 14 days after the scheduled date. Smaller items ship by carrier and cannot be rescheduled by Kestrel.'),
    ('membership', 'Kestrel Plus costs 59.99 dollars a year and Kestrel Elite 179.99 dollars a year. Both give longer return windows and free standard shipping; Elite adds the longest windows. Cancel within 30 days of joining for a full refund; after that the refund is prorated for the unused days. Upgrades from Plus to Elite are charged for the remaining days of the current term.'),
    ('techcrew', 'TechCrew repairs are done at the store repair benches and installations in your home. A malfunction repair is 89.99 dollars and an accidental-damage repair 149.99 dollars, both free when a protection plan covers the item. TV mounting is 129.99 dollars, appliance installation 149.99 dollars and home theater setup 199.99 dollars.'),
    ('protection_plans', 'Kestrel protection plans are bought with a product. The standard plan covers malfunctions; the accident plan covers malfunctions and accidental damage such as drops and spills. Covered repairs cost nothing. Plans do not cover installation.'),
    ('contact', 'Kestrel customer care calls from 888-555-0100 and TechCrew from 888-555-0177; order and delivery texts come from the short code 53735, and emails only from kestrelelectronics.com addresses. Kestrel never asks for gift cards, wire transfers, cryptocurrency, passwords, a full card number or remote access to your computer.');

INSERT INTO product_classes (class, label, window_none, window_plus, window_elite, restocking_pct) VALUES
    ('general', 'General electronics, TVs, audio and small appliances', 30, 45, 60, 0),
    ('computers', 'Computers and tablets', 15, 30, 45, 15),
    ('cameras_drones', 'Cameras and drones', 15, 30, 45, 15),
    ('major_appliances', 'Major appliances', 15, 15, 30, 10);

INSERT INTO state_fee_caps (state, max_pct) VALUES
    ('CO', 10),   -- edge: Colorado caps the fee at 10 percent
    ('OR', 0);    -- edge: no restocking fee in Oregon

INSERT INTO products (sku, model_number, name, class) VALUES
    ('SKU-1001', 'AB14-2026', 'Aerobook 14 laptop', 'computers'),
    ('SKU-1002', 'AB16-PRO', 'Aerobook Pro 16 laptop', 'computers'),
    ('SKU-1010', 'V65-OLED', 'Vista 65-inch OLED TV', 'general'),
    ('SKU-1011', 'V55-4K', 'Vista 55-inch 4K TV', 'general'),
    ('SKU-1020', 'SA-510', 'SoundArc 5.1 soundbar', 'general'),
    ('SKU-1021', 'QL-700', 'Quietline wireless headphones', 'general'),
    ('SKU-1022', 'TB-3', 'TrailBeat portable speaker', 'general'),
    ('SKU-1030', 'SKM-2', 'Skyline Mini drone', 'cameras_drones'),
    ('SKU-1031', 'CM-50', 'Corvid M50 mirrorless camera', 'cameras_drones'),
    ('SKU-1040', 'FL-W45', 'Frostline front-load washer', 'major_appliances'),
    ('SKU-1041', 'FL-D45', 'Frostline electric dryer', 'major_appliances'),
    ('SKU-1050', 'KH-1500', 'Kestrel Home ceramic space heater', 'general'),
    ('SKU-1051', 'BM-20', 'Brewmatic espresso machine', 'general');

INSERT INTO recalls (id, model_number, product, hazard, remedy, announced_on) VALUES
    ('RC-2026-07', 'KH-1500', 'Kestrel Home ceramic space heater', 'The power cord connection can overheat and melt, posing a fire hazard.',
     'Stop using the heater and unplug it. Kestrel refunds the full price at any time, with no restocking fee: bring it to any store or ask for a prepaid return label.', '2026-09-28'),
    ('RC-2026-03', 'PB-20K', 'VoltPack 20K power bank', 'The battery can swell and overheat while charging.',
     'Stop using the power bank. Bring it to any Kestrel store for a full refund or a replacement.', '2026-03-16');

INSERT INTO competitors (name) VALUES ('BrightBuy'), ('MegaMart'), ('Tech Depot'), ('Circuit Hub');
INSERT INTO competitor_prices (competitor, sku, price_cents, checked_on) VALUES
    ('BrightBuy', 'SKU-1021', 27999, '2026-10-14'),     -- headphones: $20.00 under Kestrel's $299.99
    ('MegaMart', 'SKU-1021', 31999, '2026-10-14'),      -- edge: not lower
    ('Tech Depot', 'SKU-1021', 29999, '2026-10-14'),    -- edge: equal is not lower
    ('Tech Depot', 'SKU-1020', 40999, '2026-10-14'),    -- soundbar: $40.00 under $449.99
    ('Circuit Hub', 'SKU-1020', 41999, '2026-10-14'),   -- soundbar: $30.00 under
    ('Circuit Hub', 'SKU-1011', 59999, '2026-10-14'),   -- TV: $50.00 under $649.99
    ('Tech Depot', 'SKU-1011', 59999, '2026-10-14'),
    ('MegaMart', 'SKU-1002', 179999, '2026-10-14'),     -- laptop pro: $100.00 under $1,899.99
    ('BrightBuy', 'SKU-1022', 10999, '2026-10-14'),     -- speaker: $20.00 under $129.99
    ('BrightBuy', 'SKU-1030', 69900, '2026-10-14');     -- drone: lower, but Kevin Osei's came from a marketplace seller

INSERT INTO official_contacts (contact, kind, used_for) VALUES
    ('8885550100', 'phone', 'Kestrel customer care'),
    ('8885550177', 'phone', 'TechCrew appointment scheduling and reminders'),
    ('53735', 'short_code', 'Order and delivery text messages'),
    ('kestrelelectronics.com', 'email_domain', 'Kestrel email');

INSERT INTO membership_tiers (tier, label, annual_fee_cents, rank) VALUES
    ('plus', 'Kestrel Plus', 5999, 1),
    ('elite', 'Kestrel Elite', 17999, 2);

INSERT INTO service_types (service_type, label, category, price_cents) VALUES
    ('repair_malfunction', 'Malfunction repair', 'repair', 8999),
    ('repair_accidental_damage', 'Accidental-damage repair', 'repair', 14999),
    ('tv_mounting', 'TV mounting', 'install', 12999),
    ('appliance_install', 'Appliance installation', 'install', 14999),
    ('home_theater_setup', 'Home theater setup', 'install', 19999);

INSERT INTO service_slots (id, category, starts_at, location, technician) VALUES
    ('TS-301', 'repair', '2026-10-15T11:00', 'Kestrel Denver Cherry Creek', 'Marcus Lee'),
    ('TS-302', 'repair', '2026-10-16T14:00', 'Kestrel Denver Cherry Creek', 'Marcus Lee'),
    ('TS-303', 'repair', '2026-10-15T10:00', 'Kestrel Manhattan Union Square', 'Alana Brooks'),
    ('TS-304', 'repair', '2026-10-17T13:00', 'Kestrel Manhattan Union Square', 'Alana Brooks'),  -- booked by Hannah Cole
    ('TS-305', 'repair', '2026-10-19T09:00', 'Kestrel Seattle Northgate', 'Devon Price'),
    ('TS-306', 'repair', '2026-10-20T15:00', 'Kestrel Austin Domain', 'Rita Gomez'),
    ('TS-307', 'repair', '2026-10-14T16:00', 'Kestrel Phoenix Camelback', 'Sam Ortega'),        -- booked by Sofia Marquez, today
    ('TS-308', 'repair', '2026-10-16T10:00', 'Kestrel Phoenix Camelback', 'Sam Ortega'),
    ('TS-311', 'install', '2026-10-16T09:00', 'in-home', 'Install team A'),
    ('TS-312', 'install', '2026-10-16T13:00', 'in-home', 'Install team A'),                  -- edge: held by another customer until 10:20
    ('TS-313', 'install', '2026-10-19T09:00', 'in-home', 'Install team B'),                  -- edge: its hold lapsed yesterday
    ('TS-314', 'install', '2026-10-20T13:00', 'in-home', 'Install team B'),                  -- booked by Daniel Kim (Seattle)
    ('TS-315', 'install', '2026-10-22T09:00', 'in-home', 'Install team A');

INSERT INTO customers (id, full_name, phone, email, billing_zip, card_last4, home_state, failed_verifications, account_locked) VALUES
    ('cu_1001', 'Maya Thompson', '3035550141', 'maya.thompson@example.com', '80205', '4417', 'CO', 0, 0),
    ('cu_1002', 'Daniel Kim', '2065550112', 'dkim.sea@example.com', '98103', '9021', 'WA', 0, 0),      -- edge: same name as cu_1003
    ('cu_1003', 'Daniel Kim', '5125550187', 'daniel.kim.atx@example.com', '78704', '3350', 'TX', 0, 0),
    ('cu_1004', 'Priya Nair', '6025550163', 'priya.nair@example.com', '85004', '7788', 'AZ', 0, 0),
    ('cu_1005', 'Rosa Delgado', '7205550129', 'rosa.delgado@example.com', '80219', '2204', 'CO', 0, 0),
    ('cu_1006', 'Gregory Hale', '2125550176', 'greg.hale@example.com', '10027', '6612', 'NY', 0, 0),
    ('cu_1007', 'Aisha Bello', '5035550150', 'aisha.bello@example.com', '97214', '0937', 'OR', 0, 0),
    ('cu_1008', 'Tomas Reyes', '2145550133', 'tomas.reyes@example.com', '75201', '5519', 'TX', 0, 0),
    ('cu_1009', 'Linda Park', '4255550190', 'linda.park@example.com', '98004', '8842', 'WA', 0, 0),
    ('cu_1010', 'Walter Briggs', '4805550118', NULL, '85251', '1460', 'AZ', 3, 1),                 -- edge: locked from earlier failed verifications
    ('cu_1011', 'Hannah Cole', '7185550145', 'hannah.cole@example.com', '11201', '3077', 'NY', 0, 0),
    ('cu_1012', 'Omar Haddad', '3035550198', 'omar.haddad@example.com', '80302', '7265', 'CO', 0, 0),
    ('cu_1013', 'Grace Okafor', '7135550121', 'grace.okafor@example.com', '77002', '5120', 'TX', 0, 0),
    ('cu_1014', 'Sofia Marquez', '6025550111', 'sofia.marquez@example.com', '85016', '4021', 'AZ', 0, 0),
    ('cu_1015', 'Nora Lindqvist', '5035550172', 'nora.lindqvist@example.com', '97211', '2846', 'OR', 0, 0),  -- edge: Oregon, no restocking fee
    ('cu_1016', 'Marisol Vega', '4805550137', 'marisol.vega@example.com', '85281', '6604', 'AZ', 0, 0),      -- edge: dryer on its last return day
    ('cu_1017', 'Kevin Osei', '5125550166', 'kevin.osei@example.com', '78745', '7310', 'TX', 0, 0),          -- edge: one order, a marketplace item and a Kestrel item
    ('cu_1018', 'Paula Greene', '6025550184', 'paula.greene@example.com', '85008', '9157', 'AZ', 0, 0);      -- edge: a price-matched soundbar

INSERT INTO orders (order_number, customer_id, placed_on, status, fulfillment, ship_state, scheduled_delivery, delivered_on, carrier) VALUES
    ('KE-100234', 'cu_1001', '2026-09-22', 'delivered', 'parcel', 'CO', NULL, '2026-09-25', 'UPS'),        -- laptop, 19 days: outside 15, inside Plus 30; CO cap
    ('KE-100236', 'cu_1001', '2026-10-10', 'in_transit', 'parcel', 'CO', '2026-10-16', NULL, 'UPS'),        -- edge: parcel, cannot be rescheduled
    ('KE-100311', 'cu_1002', '2026-10-05', 'in_transit', 'scheduled', 'WA', '2026-10-16', NULL, 'Kestrel Delivery'),  -- edge: scheduled in 2 days, change fee
    ('KE-100402', 'cu_1003', '2026-08-17', 'delivered', 'parcel', 'TX', NULL, '2026-08-20', 'FedEx'),       -- camera, 55 days: outside even Elite 45
    ('KE-100405', 'cu_1003', '2026-10-09', 'delivered', 'parcel', 'TX', NULL, '2026-10-12', 'FedEx'),       -- soundbar, price-match candidate
    ('KE-099871', 'cu_1004', '2026-02-06', 'delivered', 'parcel', 'AZ', NULL, '2026-02-10', 'UPS'),         -- edge: recalled heater + espresso machine, 8 months ago
    ('KE-100520', 'cu_1005', '2026-10-01', 'delivered', 'parcel', 'CO', NULL, '2026-10-06', 'USPS'),        -- edge: marketplace drone + open-box headphones
    ('KE-100120', 'cu_1006', '2026-04-02', 'delivered', 'scheduled', 'NY', NULL, '2026-04-06', 'Kestrel Delivery'),  -- washer with accident plan
    ('KE-100640', 'cu_1006', '2026-10-03', 'delivered', 'parcel', 'NY', NULL, '2026-10-07', 'UPS'),         -- laptop pro, Elite window, NY 15 percent
    ('KE-100702', 'cu_1007', '2026-09-24', 'delivered', 'parcel', 'OR', NULL, '2026-09-26', 'UPS'),         -- edge: drone 18 days; Plus joined after the order
    ('KE-100815', 'cu_1008', '2026-10-12', 'in_transit', 'scheduled', 'TX', '2026-10-20', NULL, 'Kestrel Delivery'),  -- washer + dryer, free change 6 days out
    ('KE-100790', 'cu_1008', '2026-09-15', 'delivered', 'parcel', 'TX', NULL, '2026-09-18', 'FedEx'),       -- edge: price match outside 15 days
    ('KE-100777', 'cu_1009', '2026-10-14', 'processing', 'parcel', 'WA', NULL, NULL, NULL),                 -- edge: order placed this morning, still cancellable
    ('KE-100610', 'cu_1009', '2026-08-28', 'delivered', 'parcel', 'WA', NULL, '2026-09-01', 'UPS'),         -- edge: headphones already returned
    ('KE-100455', 'cu_1010', '2026-09-26', 'delivered', 'parcel', 'AZ', NULL, '2026-09-30', 'UPS'),
    ('KE-099500', 'cu_1011', '2024-09-01', 'delivered', 'scheduled', 'NY', NULL, '2024-09-05', 'Kestrel Delivery'),  -- edge: TV whose plan has ended
    ('KE-100300', 'cu_1011', '2026-06-10', 'delivered', 'scheduled', 'NY', NULL, '2026-06-14', 'Kestrel Delivery'),  -- OLED with standard plan
    ('KE-100850', 'cu_1012', '2026-10-08', 'delivered', 'parcel', 'CO', NULL, '2026-10-10', 'UPS'),         -- headphones, price-match candidate
    ('KE-100851', 'cu_1012', '2026-10-13', 'in_transit', 'parcel', 'CO', '2026-10-17', NULL, 'FedEx'),      -- TV in transit, price-match candidate
    ('KE-100560', 'cu_1013', '2026-09-02', 'delivered', 'parcel', 'TX', NULL, '2026-09-04', 'UPS'),         -- edge: drone 40 days, inside Elite 45 only
    ('KE-100333', 'cu_1014', '2026-07-01', 'delivered', 'parcel', 'AZ', NULL, '2026-07-03', 'UPS'),         -- laptop with accident plan
    ('KE-100910', 'cu_1015', '2026-10-03', 'delivered', 'parcel', 'OR', NULL, '2026-10-06', 'UPS'),         -- edge: opened laptop in Oregon, 8 days: no fee
    ('KE-100930', 'cu_1016', '2026-09-25', 'delivered', 'scheduled', 'AZ', NULL, '2026-09-29', 'Kestrel Delivery'),  -- edge: dryer, 15-day window ends today; 10% fee
    ('KE-100940', 'cu_1017', '2026-10-09', 'delivered', 'parcel', 'TX', NULL, '2026-10-12', 'UPS'),         -- edge: marketplace drone + Kestrel speaker
    ('KE-100950', 'cu_1018', '2026-10-06', 'delivered', 'parcel', 'AZ', NULL, '2026-10-09', 'FedEx');       -- edge: soundbar price-matched on 10/12 ($40.00)

INSERT INTO order_items (order_number, sku, price_cents, condition, seller) VALUES
    ('KE-100234', 'SKU-1001', 109999, 'new', 'Kestrel'),
    ('KE-100236', 'SKU-1022', 12999, 'new', 'Kestrel'),
    ('KE-100311', 'SKU-1010', 179999, 'new', 'Kestrel'),
    ('KE-100402', 'SKU-1031', 124999, 'new', 'Kestrel'),
    ('KE-100405', 'SKU-1020', 44999, 'new', 'Kestrel'),
    ('KE-099871', 'SKU-1050', 8999, 'new', 'Kestrel'),
    ('KE-099871', 'SKU-1051', 34999, 'new', 'Kestrel'),
    ('KE-100520', 'SKU-1030', 74900, 'new', 'SkyHobby Outlet'),
    ('KE-100520', 'SKU-1021', 21999, 'open_box', 'Kestrel'),
    ('KE-100120', 'SKU-1040', 94999, 'new', 'Kestrel'),
    ('KE-100640', 'SKU-1002', 189999, 'new', 'Kestrel'),
    ('KE-100702', 'SKU-1030', 79999, 'new', 'Kestrel'),
    ('KE-100815', 'SKU-1040', 94999, 'new', 'Kestrel'),
    ('KE-100815', 'SKU-1041', 89999, 'new', 'Kestrel'),
    ('KE-100790', 'SKU-1011', 64999, 'new', 'Kestrel'),
    ('KE-100777', 'SKU-1002', 189999, 'new', 'Kestrel'),
    ('KE-100610', 'SKU-1021', 29999, 'new', 'Kestrel'),
    ('KE-100455', 'SKU-1011', 64999, 'new', 'Kestrel'),
    ('KE-099500', 'SKU-1011', 64999, 'new', 'Kestrel'),
    ('KE-100300', 'SKU-1010', 179999, 'new', 'Kestrel'),
    ('KE-100850', 'SKU-1021', 29999, 'new', 'Kestrel'),
    ('KE-100851', 'SKU-1011', 64999, 'new', 'Kestrel'),
    ('KE-100560', 'SKU-1030', 79999, 'new', 'Kestrel'),
    ('KE-100333', 'SKU-1001', 109999, 'new', 'Kestrel'),
    ('KE-100910', 'SKU-1001', 109999, 'new', 'Kestrel'),
    ('KE-100930', 'SKU-1041', 89999, 'new', 'Kestrel'),
    ('KE-100940', 'SKU-1030', 74900, 'new', 'SkyHobby Outlet'),
    ('KE-100940', 'SKU-1022', 12999, 'new', 'Kestrel'),
    ('KE-100950', 'SKU-1020', 44999, 'new', 'Kestrel');

INSERT INTO protection_plans (id, customer_id, order_number, sku, plan_type, starts_on, ends_on) VALUES
    ('PP-5490', 'cu_1011', 'KE-099500', 'SKU-1011', 'standard', '2024-09-05', '2026-09-05'),   -- edge: ended last month
    ('PP-5501', 'cu_1006', 'KE-100120', 'SKU-1040', 'accident', '2026-04-06', '2029-04-06'),
    ('PP-5530', 'cu_1011', 'KE-100300', 'SKU-1010', 'standard', '2026-06-14', '2029-06-14'),   -- edge: covers malfunctions, not accidents
    ('PP-5540', 'cu_1014', 'KE-100333', 'SKU-1001', 'accident', '2026-07-03', '2028-07-03');

INSERT INTO memberships (id, customer_id, tier, started_on, renews_on, fee_paid_cents, status, cancelled_on) VALUES
    (1, 'cu_1001', 'plus', '2026-03-02', '2027-03-02', 5999, 'active', NULL),
    (2, 'cu_1003', 'elite', '2026-06-01', '2027-06-01', 17999, 'active', NULL),
    (3, 'cu_1006', 'elite', '2026-01-15', '2027-01-15', 17999, 'active', NULL),    -- edge: mid-term, 93 of 365 days left
    (4, 'cu_1007', 'plus', '2026-09-30', '2027-09-30', 5999, 'active', NULL),      -- edge: joined 14 days ago, full refund
    (5, 'cu_1009', 'plus', '2025-11-20', '2026-11-20', 5999, 'active', NULL),
    (6, 'cu_1013', 'elite', '2025-12-01', '2026-12-01', 17999, 'active', NULL),
    (7, 'cu_1014', 'plus', '2026-05-20', '2027-05-20', 5999, 'active', NULL),      -- edge: Plus mid-term, upgrade candidate
    (8, 'cu_1012', 'plus', '2025-03-01', '2026-03-01', 5999, 'cancelled', '2025-08-14'),  -- a past membership, not active
    (9, 'cu_1016', 'plus', '2026-01-10', '2027-01-10', 5999, 'active', NULL);      -- edge: Plus gives major appliances no longer window

INSERT INTO returns (id, customer_id, order_number, sku, kind, opened, restocking_fee_cents, refund_cents, method, status, reason, created_at) VALUES
    (1, 'cu_1009', 'KE-100610', 'SKU-1021', 'standard', 1, 0, 29999, 'store_drop_off', 'authorized', 'Did not fit well.', '2026-09-10T15:12');

INSERT INTO refunds (id, customer_id, order_number, sku, kind, amount_cents, status, created_at) VALUES
    (1, 'cu_1009', 'KE-100610', 'SKU-1021', 'return', 29999, 'issued', '2026-09-10T15:12'),
    (2, 'cu_1018', 'KE-100950', 'SKU-1020', 'price_match', 4000, 'issued', '2026-10-12T15:30');  -- edge: Tech Depot's $409.99

INSERT INTO service_holds (id, slot_id, customer_id, expires_at, status, created_at) VALUES
    (1, 'TS-312', 'cu_1013', '2026-10-14T10:20', 'active', '2026-10-14T10:10'),
    (2, 'TS-313', 'cu_1008', '2026-10-13T16:10', 'active', '2026-10-13T16:00');

INSERT INTO service_appointments (id, customer_id, slot_id, starts_at, service_type, order_number, sku, plan_id, price_cents, status, created_at) VALUES
    (1, 'cu_1011', 'TS-304', '2026-10-17T13:00', 'repair_malfunction', 'KE-100300', 'SKU-1010', 'PP-5530', 0, 'scheduled', '2026-10-09T12:30'),
    (2, 'cu_1014', 'TS-307', '2026-10-14T16:00', 'repair_malfunction', 'KE-100333', 'SKU-1001', 'PP-5540', 0, 'scheduled', '2026-10-10T09:05'),
    (3, 'cu_1002', 'TS-314', '2026-10-20T13:00', 'tv_mounting', 'KE-100311', 'SKU-1010', NULL, 12999, 'scheduled', '2026-10-05T18:40');
