-- Straus Dermatology: seeded state. The pack clock is Monday 2026-08-03 09:00 (pack.json).

-- Edge cases worth knowing are listed in the pack README ("Seeded data worth knowing").
-- Billing: Straus Dermatology is a participating Medicare practice, so a Medicare patient's balance
-- is only her share of the Medicare-approved amount (Part B deductible, then 20% coinsurance), never
-- the difference up to the practice's charge. The large balance that qualifies for financing is on a
-- commercial high-deductible plan (Ellen Kowalski, Aetna HDHP), not on a Medicare patient.



INSERT INTO offices (id, name, address, hours, parking, sort_order) VALUES
    ('park_ave', 'Park Avenue', '480 Park Avenue, 6th floor, New York, NY 10022', 'Monday to Friday 8 a.m. to 6 p.m.; Saturday 9 a.m. to 1 p.m.', 'Garage on East 58th Street; we validate two hours.', 1),
    ('brooklyn', 'Brooklyn Heights', '150 Court Street, 2nd floor, Brooklyn, NY 11201', 'Monday to Friday 8:30 a.m. to 5 p.m.', 'Street parking only; the Borough Hall subway station is two blocks away.', 2),
    ('hoboken', 'Hoboken', '600 Washington Street, Hoboken, NJ 07030', 'Monday to Friday 8 a.m. to 5:30 p.m.', 'Municipal garage on 6th Street; bring your ticket for a discount.', 3),
    ('white_plains', 'White Plains', '12 Mamaroneck Avenue, White Plains, NY 10601', 'Monday to Friday 8 a.m. to 5 p.m.', 'Free parking lot behind the building.', 4);

INSERT INTO carriers (code, name) VALUES
    ('CIGNA', 'Cigna'),
    ('AETNA', 'Aetna'),
    ('UHC', 'UnitedHealthcare'),
    ('BCBS', 'Empire Blue Cross Blue Shield'),
    ('OXFORD', 'Oxford Health Plans'),
    ('MEDICARE', 'Medicare'),
    ('SELF_PAY', 'Self-pay (no insurance)');

INSERT INTO plan_acceptance (office_id, carrier, accepted) VALUES
    ('park_ave', 'CIGNA', 1),
    ('park_ave', 'AETNA', 1),
    ('park_ave', 'UHC', 1),
    ('park_ave', 'BCBS', 1),
    ('park_ave', 'OXFORD', 0),
    ('park_ave', 'MEDICARE', 1),
    ('park_ave', 'SELF_PAY', 1),
    ('brooklyn', 'CIGNA', 0),
    ('brooklyn', 'AETNA', 1),
    ('brooklyn', 'UHC', 0),
    ('brooklyn', 'BCBS', 1),
    ('brooklyn', 'OXFORD', 1),
    ('brooklyn', 'MEDICARE', 1),
    ('brooklyn', 'SELF_PAY', 1),
    ('hoboken', 'CIGNA', 1),
    ('hoboken', 'AETNA', 0),
    ('hoboken', 'UHC', 1),
    ('hoboken', 'BCBS', 0),
    ('hoboken', 'OXFORD', 1),
    ('hoboken', 'MEDICARE', 0),
    ('hoboken', 'SELF_PAY', 1),
    ('white_plains', 'CIGNA', 1),
    ('white_plains', 'AETNA', 1),
    ('white_plains', 'UHC', 1),
    ('white_plains', 'BCBS', 1),
    ('white_plains', 'OXFORD', 1),
    ('white_plains', 'MEDICARE', 1),
    ('white_plains', 'SELF_PAY', 1);

INSERT INTO insurance_members (carrier, member_id, full_name, date_of_birth, status, plan_name, specialist_copay, deductible_remaining, termination_date) VALUES
    ('AETNA', 'AET-55102', 'Rosa Delgado', '1979-03-14', 'active', 'Aetna Open Access', 40.0, 250.0, NULL),
    ('BCBS', 'BCB-771203', 'Marcus Bell', '1985-11-02', 'active', 'Empire PPO', 35.0, 0.0, NULL),
    ('CIGNA', 'CGN-310877', 'Priya Natarajan', '1990-06-21', 'active', 'Cigna OAP', 45.0, 500.0, NULL),
    ('AETNA', 'AET-93027', 'Ellen Kowalski', '1962-09-30', 'active', 'Aetna HDHP Silver', 50.0, 0.0, NULL),
    ('UHC', 'UHC-902114', 'Leo Hartmann', '2012-07-19', 'active', 'UnitedHealthcare Choice Plus', 30.0, 100.0, NULL),
    ('UHC', 'UHC-415590', 'Tomasz Nowak', '1971-05-08', 'active', 'UnitedHealthcare Choice Plus', 30.0, 0.0, NULL),
    ('CIGNA', 'CGN-448812', 'Hana Kimura', '1998-08-22', 'inactive', 'Cigna OAP', 45.0, 0.0, '2026-06-30'),
    ('CIGNA', 'CGN-730215', 'Maya Lindqvist', '1991-04-09', 'active', 'Cigna LocalPlus', 50.0, 750.0, NULL),
    ('OXFORD', 'OXF-208861', 'Daniel Cho', '1988-04-12', 'active', 'Oxford Freedom', 40.0, 300.0, NULL),
    ('MEDICARE', '3KT7-RD2-WP15', 'Daniel Cho', '1956-10-03', 'active', 'Medicare Part B', 0.0, 0.0, NULL),
    ('AETNA', 'AET-60418', 'Gregory Lutz', '1969-02-27', 'active', 'Aetna Choice POS II', 40.0, 0.0, NULL),
    ('OXFORD', 'OXF-118420', 'Kevin Marsh', '1987-05-30', 'active', 'Oxford Liberty', 35.0, 200.0, NULL),
    ('UHC', 'UHC-377201', 'Aaron Whitfield', '1992-10-11', 'active', 'UnitedHealthcare Choice', 30.0, 400.0, NULL),
    ('MEDICARE', '5QW2-HX8-NC41', 'Yvonne Baptiste', '1958-01-25', 'active', 'Medicare Part B', 0.0, 0.0, NULL),
    ('BCBS', 'BCB-552904', 'Nadia Farouk', '1983-12-05', 'active', 'Empire EPO', 30.0, 0.0, NULL),
    ('AETNA', 'AET-71266', 'Owen Gallagher', '1977-07-07', 'active', 'Aetna Open Access', 40.0, 0.0, NULL),
    ('BCBS', 'BCB-640033', 'Beatriz Santos', '1966-03-03', 'active', 'Empire PPO', 35.0, 150.0, NULL),
    ('AETNA', 'AET-80142', 'Samuel Osei', '1995-02-18', 'active', 'Aetna Open Access', 40.0, 500.0, NULL),
    ('UHC', 'UHC-660318', 'Hana Kimura', '1998-08-22', 'active', 'UnitedHealthcare Choice Plus', 30.0, 250.0, NULL);

INSERT INTO providers (id, name, credentials, office_id, practice) VALUES
    ('PR-01', 'Dr. Miriam Straus', 'MD', 'park_ave', 'medical'),
    ('PR-02', 'Dr. Anil Rao', 'MD', 'park_ave', 'medical'),
    ('PR-03', 'Dr. Hannah Feld', 'MD', 'brooklyn', 'medical'),
    ('PR-04', 'Dr. Marcus Oyelaran', 'MD', 'hoboken', 'medical'),
    ('PR-05', 'Dr. Teresa Quon', 'MD', 'white_plains', 'medical'),
    ('PR-06', 'Claire Dumont', 'NP', 'park_ave', 'cosmetic'),
    ('PR-07', 'Dr. Julian Meyers', 'MD', 'hoboken', 'cosmetic');

INSERT INTO visit_types (code, label, minutes, practice) VALUES
    ('new_patient', 'new-patient visit', 30, 'medical'),
    ('follow_up', 'follow-up visit', 15, 'medical'),
    ('skin_check', 'full-body skin check', 30, 'medical'),
    ('procedure', 'procedure visit (biopsy or excision)', 45, 'medical'),
    ('cosmetic_consult', 'cosmetic consultation', 30, 'cosmetic'),
    ('cosmetic_treatment', 'cosmetic treatment', 60, 'cosmetic');

INSERT INTO slots (id, office_id, provider_id, starts_at, minutes, held_until) VALUES
    ('S-301', 'park_ave', 'PR-02', '2026-08-03T08:30', 15, NULL),
    ('S-302', 'park_ave', 'PR-02', '2026-08-03T11:00', 15, NULL),
    ('S-303', 'park_ave', 'PR-02', '2026-08-03T15:00', 30, NULL),
    ('S-304', 'park_ave', 'PR-01', '2026-08-03T16:30', 15, NULL),
    ('S-305', 'park_ave', 'PR-01', '2026-08-04T09:30', 30, '2026-08-03T09:30'),
    ('S-306', 'park_ave', 'PR-02', '2026-08-04T11:00', 30, '2026-08-03T08:45'),
    ('S-307', 'park_ave', 'PR-02', '2026-08-05T08:30', 15, NULL),
    ('S-308', 'park_ave', 'PR-01', '2026-08-05T10:00', 45, NULL),
    ('S-309', 'park_ave', 'PR-02', '2026-08-06T13:00', 15, NULL),
    ('S-310', 'park_ave', 'PR-01', '2026-08-06T14:00', 30, NULL),
    ('S-311', 'park_ave', 'PR-02', '2026-08-06T15:30', 45, NULL),
    ('S-312', 'park_ave', 'PR-01', '2026-08-10T09:00', 30, NULL),
    ('S-313', 'park_ave', 'PR-02', '2026-08-10T10:30', 15, NULL),
    ('S-314', 'park_ave', 'PR-02', '2026-08-12T10:00', 15, NULL),
    ('S-315', 'park_ave', 'PR-01', '2026-08-12T14:00', 60, NULL),
    ('S-316', 'park_ave', 'PR-02', '2026-08-13T09:00', 30, NULL),
    ('S-317', 'park_ave', 'PR-02', '2026-08-14T09:00', 15, NULL),
    ('S-401', 'white_plains', 'PR-05', '2026-08-03T13:30', 15, NULL),
    ('S-402', 'white_plains', 'PR-05', '2026-08-04T10:00', 30, NULL),
    ('S-403', 'white_plains', 'PR-05', '2026-08-04T08:30', 15, NULL),
    ('S-404', 'white_plains', 'PR-05', '2026-08-05T09:00', 45, NULL),
    ('S-405', 'white_plains', 'PR-05', '2026-08-07T11:00', 30, NULL),
    ('S-406', 'white_plains', 'PR-05', '2026-08-11T09:30', 15, NULL),
    ('S-407', 'white_plains', 'PR-05', '2026-08-13T14:00', 30, NULL),
    ('S-408', 'white_plains', 'PR-05', '2026-08-07T14:00', 15, NULL),
    ('S-501', 'brooklyn', 'PR-03', '2026-08-04T09:00', 15, NULL),
    ('S-502', 'brooklyn', 'PR-03', '2026-08-04T11:30', 30, NULL),
    ('S-503', 'brooklyn', 'PR-03', '2026-08-05T13:00', 45, NULL),
    ('S-504', 'brooklyn', 'PR-03', '2026-08-06T09:00', 15, NULL),
    ('S-505', 'brooklyn', 'PR-03', '2026-08-10T13:00', 45, NULL),
    ('S-506', 'brooklyn', 'PR-03', '2026-08-11T10:00', 30, NULL),
    ('S-507', 'brooklyn', 'PR-03', '2026-08-12T15:00', 15, NULL),
    ('S-508', 'brooklyn', 'PR-03', '2026-08-13T11:00', 15, NULL),
    ('S-601', 'hoboken', 'PR-04', '2026-08-04T13:00', 15, NULL),
    ('S-602', 'hoboken', 'PR-04', '2026-08-05T14:00', 30, NULL),
    ('S-603', 'hoboken', 'PR-04', '2026-08-06T09:00', 15, NULL),
    ('S-604', 'hoboken', 'PR-04', '2026-08-06T10:00', 30, NULL),
    ('S-605', 'hoboken', 'PR-04', '2026-08-07T09:30', 45, NULL),
    ('S-606', 'hoboken', 'PR-04', '2026-08-11T11:00', 30, NULL),
    ('S-607', 'hoboken', 'PR-04', '2026-08-13T16:00', 15, NULL),
    ('S-701', 'hoboken', 'PR-07', '2026-08-05T10:00', 60, NULL),
    ('S-702', 'hoboken', 'PR-07', '2026-08-06T11:00', 30, NULL),
    ('S-703', 'hoboken', 'PR-07', '2026-08-10T15:00', 60, NULL),
    ('S-801', 'park_ave', 'PR-06', '2026-08-04T15:00', 30, NULL),
    ('S-802', 'park_ave', 'PR-06', '2026-08-07T13:00', 60, NULL),
    ('S-803', 'park_ave', 'PR-06', '2026-08-11T10:00', 30, NULL),
    ('S-804', 'park_ave', 'PR-06', '2026-08-14T11:00', 60, NULL),
    ('S-805', 'park_ave', 'PR-06', '2026-08-12T13:00', 30, NULL),
    ('S-806', 'park_ave', 'PR-06', '2026-08-05T11:00', 60, NULL);

INSERT INTO cosmetic_prices (treatment, label, unit, unit_price, minimum_quantity, package_quantity, package_discount_pct) VALUES
    ('botox', 'Botox', 'unit', 14.0, 20, NULL, NULL),
    ('filler', 'dermal filler', 'syringe', 725.0, 1, NULL, NULL),
    ('chemical_peel', 'chemical peel', 'session', 195.0, 1, 3, 10.0),
    ('microneedling', 'microneedling', 'session', 375.0, 1, 3, 10.0),
    ('laser_resurfacing', 'laser resurfacing', 'session', 1150.0, 1, 3, 15.0);

INSERT INTO prescriptions (id, patient_id, medication, refills_remaining, requires_visit) VALUES
    (1, 'P-2013', 'tretinoin 0.05% cream', 2, 0),
    (2, 'P-2013', 'clobetasol 0.05% ointment', 0, 0),
    (3, 'P-2013', 'isotretinoin 40 mg', 0, 1),
    (4, 'P-2014', 'doxycycline 100 mg', 1, 0),
    (5, 'P-2003', 'ketoconazole 2% shampoo', 3, 0),
    (6, 'P-2010', 'triamcinolone 0.1% cream', 1, 0);

INSERT INTO billing_items (id, patient_id, service_date, description, amount) VALUES
    (1, 'P-2004', '2026-07-14', 'Mohs surgery, left cheek: your deductible and coinsurance after Aetna paid', 1160.0),
    (2, 'P-2004', '2026-07-14', 'Pathology: your deductible after Aetna paid', 124.6),
    (3, 'P-2002', '2026-07-08', 'Office visit copay', 40.0),
    (4, 'P-2014', '2026-07-20', 'Skin biopsy', 287.45),
    (5, 'P-2014', '2026-07-20', 'Office visit copay', 25.0),
    (6, 'P-2016', '2026-06-30', 'Cryotherapy, three lesions: the Medicare-approved amount, applied to your Part B deductible', 96.3);

INSERT INTO patients (id, full_name, date_of_birth, phone, email, home_office, carrier, member_id, guardian_name, balance, payment_plan_months, failed_verifications, locked) VALUES
    ('P-2001', 'Rosa Delgado', '1979-03-14', '7185550142', 'rosa.delgado@example.com', 'brooklyn', 'AETNA', 'AET-55102', NULL, 0.0, NULL, 0, 0),
    ('P-2002', 'Marcus Bell', '1985-11-02', '2125550187', 'marcus.bell@example.com', 'park_ave', 'BCBS', 'BCB-771203', NULL, 40.0, NULL, 0, 0),
    ('P-2003', 'Priya Natarajan', '1990-06-21', '9175550133', 'priya.n@example.com', 'park_ave', 'CIGNA', 'CGN-310877', NULL, 0.0, NULL, 0, 0),
    ('P-2004', 'Ellen Kowalski', '1962-09-30', '9145550119', 'ellen.kowalski@example.com', 'white_plains', 'AETNA', 'AET-93027', NULL, 1284.6, NULL, 0, 0),
    ('P-2005', 'Jasmine Ortiz', '1994-01-17', '2015550164', 'jasmine.ortiz@example.com', 'hoboken', 'UHC', 'UHC-118234', NULL, 0.0, NULL, 0, 0),
    ('P-2006', 'Tomasz Nowak', '1971-05-08', '6465550175', NULL, 'park_ave', 'UHC', 'UHC-415590', NULL, 0.0, NULL, 0, 0),
    ('P-2007', 'Daniel Cho', '1988-04-12', '3475550121', 'dcho88@example.com', 'brooklyn', 'OXFORD', 'OXF-208861', NULL, 0.0, NULL, 0, 0),
    ('P-2008', 'Daniel Cho', '1956-10-03', '9145550158', NULL, 'white_plains', 'MEDICARE', '3KT7-RD2-WP15', NULL, 0.0, NULL, 0, 0),
    ('P-2009', 'Leo Hartmann', '2012-07-19', '2015550190', 'greta.hartmann@example.com', 'hoboken', 'UHC', 'UHC-902114', 'Greta Hartmann', 0.0, NULL, 0, 0),
    ('P-2010', 'Nadia Farouk', '1983-12-05', '7185550109', 'nadia.farouk@example.com', 'brooklyn', 'BCBS', 'BCB-552904', NULL, 0.0, NULL, 0, 0),
    ('P-2011', 'Gregory Lutz', '1969-02-27', '2125550166', 'glutz@example.com', 'park_ave', 'AETNA', 'AET-60418', NULL, 0.0, NULL, 3, 1),
    ('P-2012', 'Hana Kimura', '1998-08-22', '9175550150', 'hana.kimura@example.com', 'park_ave', 'CIGNA', 'CGN-448812', NULL, 0.0, NULL, 0, 0),
    ('P-2013', 'Owen Gallagher', '1977-07-07', '6465550102', 'owen.gallagher@example.com', 'park_ave', 'AETNA', 'AET-71266', NULL, 0.0, NULL, 0, 0),
    ('P-2014', 'Beatriz Santos', '1966-03-03', '7185550177', NULL, 'brooklyn', 'BCBS', 'BCB-640033', NULL, 312.45, NULL, 0, 0),
    ('P-2015', 'Aaron Whitfield', '1992-10-11', '2125550129', 'aaron.whitfield@example.com', 'park_ave', 'UHC', 'UHC-377201', NULL, 0.0, NULL, 0, 0),
    ('P-2016', 'Yvonne Baptiste', '1958-01-25', '9145550184', 'yvonne.b@example.com', 'white_plains', 'MEDICARE', '5QW2-HX8-NC41', NULL, 96.3, NULL, 0, 0),
    ('P-2017', 'Kevin Marsh', '1987-05-30', '2015550112', 'kevin.marsh@example.com', 'hoboken', 'OXFORD', 'OXF-118420', NULL, 0.0, NULL, 0, 0),
    ('P-2018', 'Sylvia Bell', '1986-02-14', '2125550187', 'sylvia.bell@example.com', 'park_ave', 'BCBS', 'BCB-771204', NULL, 0.0, NULL, 0, 0),
    ('P-2019', 'Denise Okafor', '1990-03-08', '6465550419', 'denise.okafor@example.com', 'park_ave', 'CIGNA', 'CGN-552730', NULL, 0.0, NULL, 0, 0);

INSERT INTO appointments (id, patient_id, new_patient_name, new_patient_dob, new_patient_phone, carrier, visit_type, office_id, provider_id, slot_id, starts_at, status, cancel_fee, created_at) VALUES
    ('A-0998', 'P-2019', NULL, NULL, NULL, NULL, 'cosmetic_treatment', 'park_ave', 'PR-06', 'S-806', '2026-08-05T11:00', 'scheduled', 0.0, '2026-07-10T10:00'),
    ('A-0999', 'P-2016', NULL, NULL, NULL, NULL, 'follow_up', 'white_plains', 'PR-05', 'S-408', '2026-08-07T14:00', 'scheduled', 0.0, '2026-07-10T10:00'),
    ('A-1001', 'P-2002', NULL, NULL, NULL, NULL, 'follow_up', 'park_ave', 'PR-02', 'S-314', '2026-08-12T10:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1002', 'P-2003', NULL, NULL, NULL, NULL, 'skin_check', 'park_ave', 'PR-02', 'S-303', '2026-08-03T15:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1003', 'P-2004', NULL, NULL, NULL, NULL, 'follow_up', 'white_plains', 'PR-05', 'S-403', '2026-08-04T08:30', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1004', 'P-2005', NULL, NULL, NULL, NULL, 'cosmetic_treatment', 'hoboken', 'PR-07', 'S-701', '2026-08-05T10:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1005', 'P-2006', NULL, NULL, NULL, NULL, 'follow_up', 'park_ave', 'PR-01', 'S-304', '2026-08-03T16:30', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1006', 'P-2013', NULL, NULL, NULL, NULL, 'follow_up', 'park_ave', 'PR-02', 'S-317', '2026-08-14T09:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1007', 'P-2014', NULL, NULL, NULL, NULL, 'procedure', 'brooklyn', 'PR-03', 'S-505', '2026-08-10T13:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1008', 'P-2018', NULL, NULL, NULL, NULL, 'cosmetic_consult', 'park_ave', 'PR-06', 'S-805', '2026-08-12T13:00', 'scheduled', 0.0, '2026-07-15T10:00'),
    ('A-1009', 'P-2007', NULL, NULL, NULL, NULL, 'follow_up', 'brooklyn', 'PR-03', 'S-508', '2026-08-13T11:00', 'scheduled', 0.0, '2026-07-15T10:00');

INSERT INTO waitlist (id, patient_id, full_name, phone, visit_type, offices, earliest_date, latest_date, status, created_at) VALUES
    (1, 'P-2014', 'Beatriz Santos', '7185550177', 'procedure', 'brooklyn', '2026-08-03', '2026-08-09', 'active', '2026-07-28T11:00');
