INSERT INTO owners (id, full_name, phone, email) VALUES
    ('o1', 'Dana Whitfield',  '5035550142', 'dana.whitfield@example.com'),
    ('o2', 'Marcus Oyelaran', '5035550187', NULL),
    ('o3', 'Lena Fischer',    '9715550110', 'lena.fischer@example.com');

INSERT INTO pets VALUES
    ('p1', 'o1', 'Biscuit', 'dog', '2026-09-01', '2027-01-10'),
    ('p2', 'o1', 'Pepper',  'cat', '2026-03-15', '2026-11-20'),
    ('p3', 'o2', 'Juniper', 'dog', '2027-02-02', '2026-12-01'),
    ('p4', 'o3', 'Moose',   'dog', '2026-04-30', '2026-10-05');

INSERT INTO clinic_hours VALUES
    ('monday', '08:00', '18:00'), ('tuesday', '08:00', '18:00'), ('wednesday', '08:00', '18:00'),
    ('thursday', '08:00', '20:00'), ('friday', '08:00', '18:00'), ('saturday', '09:00', '13:00'),
    ('sunday', NULL, NULL);

INSERT INTO slots VALUES
    ('S-101', 'wellness', '2026-05-13T10:00', 'Dr. Patel',  1),
    ('S-102', 'wellness', '2026-05-14T15:30', 'Dr. Okafor', 1),
    ('S-103', 'vaccine',  '2026-05-13T11:00', 'Dr. Patel',  1),
    ('S-104', 'vaccine',  '2026-05-15T09:30', 'Dr. Okafor', 1),
    ('S-105', 'dental',   '2026-05-18T08:00', 'Dr. Lind',   1),
    ('S-106', 'wellness', '2026-05-16T10:00', 'Dr. Lind',   1),
    ('S-107', 'wellness', '2026-05-12T16:00', 'Dr. Patel',  0),
    ('S-108', 'dental',   '2026-05-20T08:00', 'Dr. Lind',   0);

INSERT INTO appointments VALUES
    (1, 'p3', 'S-107', 'wellness', '2026-05-12T16:00', 'booked', '2026-05-01T12:00'),
    (2, 'p1', 'S-108', 'dental',   '2026-05-20T08:00', 'booked', '2026-05-02T15:20');
