-- Halverson & Reed seed. The pack clock (pack.json) is Friday 2026-07-31 09:00.

-- The states the firm's attorneys are licensed in, in the order the firm lists them.
INSERT INTO licensed_states (code, name, sort_order) VALUES
    ('CA', 'California', 1),
    ('FL', 'Florida', 2),
    ('NY', 'New York', 3),
    ('TX', 'Texas', 4),
    ('GA', 'Georgia', 5),
    ('IL', 'Illinois', 6),
    ('WA', 'Washington', 7),
    ('PA', 'Pennsylvania', 8),
    ('NC', 'North Carolina', 9);

INSERT INTO practice_areas (area, label, accepted, fee_type, contingency_pct_prefiling, contingency_pct_litigation, consult_fee, eval_group) VALUES
    ('personal_injury', 'Personal injury (vehicle crashes, falls, bites, other injuries)', 1, 'contingency', 33.33, 40, 0, 'injury'),
    ('premises_liability', 'Premises liability (injuries on someone else''s property)', 1, 'contingency', 33.33, 40, 0, 'injury'),
    ('product_liability', 'Product liability (defective or dangerous products)', 1, 'contingency', 35, 40, 0, 'injury'),
    ('wrongful_death', 'Wrongful death', 1, 'contingency', 33.33, 40, 0, 'injury'),
    ('medical_malpractice', 'Medical malpractice', 1, 'contingency', 35, 40, 0, 'medical'),
    ('employment', 'Employment (wrongful termination, retaliation, discrimination, harassment)', 1, 'contingency', 33.33, 40, 0, 'employment'),
    ('wage_and_hour', 'Wage and hour (unpaid wages and overtime)', 1, 'contingency', 30, 35, 0, 'employment'),
    ('workers_compensation', 'Workers'' compensation', 0, NULL, NULL, NULL, NULL, NULL),
    ('family_law', 'Family law (divorce, custody, support)', 0, NULL, NULL, NULL, NULL, NULL),
    ('criminal_defense', 'Criminal defense', 0, NULL, NULL, NULL, NULL, NULL),
    ('immigration', 'Immigration', 0, NULL, NULL, NULL, NULL, NULL),
    ('bankruptcy', 'Bankruptcy', 0, NULL, NULL, NULL, NULL, NULL),
    ('real_estate', 'Real estate and landlord-tenant', 0, NULL, NULL, NULL, NULL, NULL);

-- Limitation periods in whole years, from the date of the incident, for every accepted area in every licensed state.
INSERT INTO limitation_periods (state, practice_area, years) VALUES
    ('CA', 'personal_injury', 2),
    ('FL', 'personal_injury', 2),
    ('NY', 'personal_injury', 3),
    ('TX', 'personal_injury', 2),
    ('GA', 'personal_injury', 2),
    ('IL', 'personal_injury', 2),
    ('WA', 'personal_injury', 3),
    ('PA', 'personal_injury', 2),
    ('NC', 'personal_injury', 3),
    ('CA', 'premises_liability', 2),
    ('FL', 'premises_liability', 2),
    ('NY', 'premises_liability', 3),
    ('TX', 'premises_liability', 2),
    ('GA', 'premises_liability', 2),
    ('IL', 'premises_liability', 2),
    ('WA', 'premises_liability', 3),
    ('PA', 'premises_liability', 2),
    ('NC', 'premises_liability', 3),
    ('CA', 'product_liability', 2),
    ('FL', 'product_liability', 4),
    ('NY', 'product_liability', 3),
    ('TX', 'product_liability', 2),
    ('GA', 'product_liability', 2),
    ('IL', 'product_liability', 2),
    ('WA', 'product_liability', 3),
    ('PA', 'product_liability', 2),
    ('NC', 'product_liability', 3),
    ('CA', 'wrongful_death', 2),
    ('FL', 'wrongful_death', 2),
    ('NY', 'wrongful_death', 2),
    ('TX', 'wrongful_death', 2),
    ('GA', 'wrongful_death', 2),
    ('IL', 'wrongful_death', 2),
    ('WA', 'wrongful_death', 3),
    ('PA', 'wrongful_death', 2),
    ('NC', 'wrongful_death', 2),
    ('CA', 'medical_malpractice', 1),
    ('FL', 'medical_malpractice', 2),
    ('NY', 'medical_malpractice', 2),
    ('TX', 'medical_malpractice', 2),
    ('GA', 'medical_malpractice', 2),
    ('IL', 'medical_malpractice', 2),
    ('WA', 'medical_malpractice', 3),
    ('PA', 'medical_malpractice', 2),
    ('NC', 'medical_malpractice', 3),
    ('CA', 'employment', 3),
    ('FL', 'employment', 4),
    ('NY', 'employment', 3),
    ('TX', 'employment', 2),
    ('GA', 'employment', 2),
    ('IL', 'employment', 2),
    ('WA', 'employment', 3),
    ('PA', 'employment', 2),
    ('NC', 'employment', 3),
    ('CA', 'wage_and_hour', 3),
    ('FL', 'wage_and_hour', 5),
    ('NY', 'wage_and_hour', 6),
    ('TX', 'wage_and_hour', 2),
    ('GA', 'wage_and_hour', 2),
    ('IL', 'wage_and_hour', 5),
    ('WA', 'wage_and_hour', 3),
    ('PA', 'wage_and_hour', 3),
    ('NC', 'wage_and_hour', 2);

-- Parties the firm represents or has represented. A caller's opposing party that matches one of these is a conflict.
INSERT INTO conflict_index (party, relationship) VALUES
    ('Marlow Freight Lines', 'current client'),
    ('Cascade Valley Hospital', 'current client'),
    ('Orion Home Goods, Inc.', 'former client'),
    ('Peterson Dental Group', 'current client'),
    ('Sunmark Property Management LLC', 'current client'),
    ('Kessler Manufacturing Co.', 'former client'),
    ('Dr. Evelyn Sato', 'current client'),
    ('Brightline Logistics', 'adverse party in active litigation');

INSERT INTO staff (id, name, role) VALUES
    ('s_halverson', 'Margaret Halverson', 'partner'),
    ('s_reed', 'Daniel Reed', 'partner'),
    ('s_alvarez', 'Sofia Alvarez', 'associate'),
    ('s_osei', 'Kevin Osei', 'associate'),
    ('s_kim', 'Rachel Kim', 'associate'),
    ('s_blake', 'Jordan Blake', 'paralegal'),
    ('s_patel', 'Nina Patel', 'paralegal'),
    ('s_liu', 'Grace Liu', 'intake manager');

INSERT INTO office_info (topic, answer) VALUES
    ('hours', 'The office is open Monday to Friday, 8:30 a.m. to 5:30 p.m. Pacific time. The phone line answers at all hours.'),
    ('address', 'Halverson & Reed, 1420 Fifth Avenue, Suite 900, Seattle, Washington 98101.'),
    ('parking', 'Validated parking is in the Pine Street garage; bring the ticket to the front desk.'),
    ('languages', 'Consultations are available in English and Spanish; interpreters for other languages can be arranged at no cost.'),
    ('fees', 'Accepted cases are taken on contingency: no fee unless the client recovers. The first case evaluation is free. Exact percentages depend on the practice area.'),
    ('practice_areas', 'Personal injury, premises liability, product liability, wrongful death, medical malpractice, employment, and wage and hour.'),
    ('states', 'California, Florida, New York, Texas, Georgia, Illinois, Washington, Pennsylvania and North Carolina.');

-- Callers the firm already knows (clients and earlier callers). Phones are digits only.
INSERT INTO callers (id, full_name, phone, email) VALUES
    ('c_1001', 'Marisol Vega', '3125550148', 'marisol.vega@example.com'),
    ('c_1002', 'Derek Okonkwo', '7135550199', NULL),
    ('c_1003', 'Priya Raman', '2065550173', 'priya.raman@example.com'),
    ('c_1004', 'Tom Brennan', '9195550124', 'tbrennan@example.com'),
    ('c_1005', 'Alicia Fontaine', '3055550186', 'alicia.fontaine@example.com'),
    ('c_1006', 'Samuel Whitaker', '2155550131', NULL),
    ('c_1007', 'Helen Achterberg', '4045550162', 'helen.a@example.com'),
    ('c_1008', 'Luis Carranza', '2135550107', 'lcarranza@example.com'),
    ('c_1009', 'Beatrice Nkemelu', '9175550155', 'bnkemelu@example.com'),
    ('c_1010', 'Owen Fairbanks', '5125550190', NULL);

INSERT INTO matters (matter_number, client_id, practice_area, state, status, stage, attorney_id, paralegal_id, next_event, next_event_date) VALUES
    ('HR-24-0117', 'c_1001', 'premises_liability', 'IL', 'open', 'Discovery: both sides are exchanging documents.', 's_osei', 's_blake', 'deposition of the property manager', '2026-08-19'),
    ('HR-25-0342', 'c_1002', 'personal_injury', 'TX', 'open', 'Negotiation: a settlement demand was sent to the insurer.', 's_osei', 's_patel', 'insurer response due', '2026-08-14'),
    ('HR-23-0881', 'c_1005', 'medical_malpractice', 'FL', 'settled', 'Settled: settlement funds are being disbursed.', 's_kim', 's_patel', 'disbursement statement to the client', '2026-08-07'),
    ('HR-25-0410', 'c_1006', 'product_liability', 'PA', 'open', 'Filed: the complaint was filed and served.', 's_reed', 's_blake', 'defendant''s answer due', '2026-08-24'),
    ('HR-22-0263', 'c_1007', 'employment', 'GA', 'closed', 'Closed: the matter ended with a settlement in 2024.', 's_alvarez', NULL, NULL, NULL),
    ('HR-26-0058', 'c_1007', 'wage_and_hour', 'GA', 'open', 'Investigation: the firm is gathering pay records.', 's_alvarez', 's_blake', 'records request deadline', '2026-08-12'),
    ('HR-25-0519', 'c_1009', 'wrongful_death', 'NY', 'open', 'Expert review: medical experts are reviewing records.', 's_halverson', 's_patel', 'expert report due', '2026-09-30');

-- Case-evaluation slots. E-205 is held by another caller until 09:20 today; the hold on E-206 expired yesterday.
INSERT INTO evaluation_slots (id, starts_at, attorney_id, eval_group, mode) VALUES
    ('E-201', '2026-08-03T10:00', 's_alvarez', 'employment', 'video'),
    ('E-202', '2026-08-03T14:00', 's_osei', 'injury', 'phone'),
    ('E-203', '2026-08-04T09:30', 's_kim', 'medical', 'office'),
    ('E-204', '2026-08-04T15:00', 's_alvarez', 'employment', 'phone'),
    ('E-205', '2026-08-05T11:00', 's_osei', 'injury', 'office'),
    ('E-206', '2026-08-05T13:00', 's_reed', 'injury', 'video'),
    ('E-207', '2026-08-06T10:00', 's_alvarez', 'employment', 'office'),
    ('E-208', '2026-08-07T09:00', 's_osei', 'injury', 'phone'),
    ('E-209', '2026-08-07T13:30', 's_kim', 'medical', 'video'),
    ('E-210', '2026-08-10T10:00', 's_halverson', 'injury', 'office'),
    ('E-211', '2026-08-10T15:30', 's_alvarez', 'employment', 'video'),
    ('E-212', '2026-07-31T15:00', 's_reed', 'injury', 'phone');

INSERT INTO holds (id, slot_id, caller_id, expires_at, status, created_at) VALUES
    (1, 'E-205', 'c_1002', '2026-07-31T09:20', 'active', '2026-07-31T08:58'),
    (2, 'E-206', 'c_1001', '2026-07-30T16:10', 'active', '2026-07-30T16:00');

INSERT INTO evaluations (id, caller_id, slot_id, practice_area, starts_at, attorney_id, mode, status, created_at) VALUES
    (1, 'c_1003', 'E-207', 'employment', '2026-08-06T10:00', 's_alvarez', 'office', 'scheduled', '2026-07-20T11:04'),
    (2, 'c_1004', 'E-208', 'personal_injury', '2026-08-07T09:00', 's_osei', 'phone', 'scheduled', '2026-07-22T14:31'),
    (3, 'c_1008', 'E-212', 'personal_injury', '2026-07-31T15:00', 's_reed', 'phone', 'scheduled', '2026-07-24T10:12');

-- Earlier intakes of returning callers (they may book an evaluation without a new intake).
INSERT INTO intakes (id, caller_id, caller_name, caller_phone, practice_area, state, incident_date, opposing_party, status, reason, summary, created_at) VALUES
    (1, 'c_1003', 'Priya Raman', '2065550173', 'employment', 'WA', '2026-03-12', 'Tidewater Analytics', 'recorded', NULL, 'Passed over for promotion after complaining about harassment.', '2026-07-20T10:40'),
    (2, 'c_1004', 'Tom Brennan', '9195550124', 'personal_injury', 'NC', '2026-06-02', 'Coastal Pavers LLC', 'recorded', NULL, 'Rear-ended by a company truck.', '2026-07-22T14:10'),
    (3, 'c_1008', 'Luis Carranza', '2135550107', 'personal_injury', 'CA', '2026-05-18', 'Valley Transit Authority', 'recorded', NULL, 'Fell on a bus when it braked hard.', '2026-07-24T09:55'),
    (4, 'c_1010', 'Owen Fairbanks', '5125550190', 'wage_and_hour', 'TX', '2026-01-15', 'Lone Star Roofing', 'recorded', NULL, 'Unpaid overtime for six months.', '2026-07-28T16:22');
