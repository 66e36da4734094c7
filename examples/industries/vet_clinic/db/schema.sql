-- Cedar Ridge Veterinary Clinic: the state every call starts from.
CREATE TABLE owners (
    id        TEXT PRIMARY KEY,
    full_name TEXT NOT NULL,
    phone     TEXT NOT NULL,          -- digits only
    email     TEXT
);

CREATE TABLE pets (
    id            TEXT PRIMARY KEY,
    owner_id      TEXT NOT NULL REFERENCES owners(id),
    name          TEXT NOT NULL,
    species       TEXT NOT NULL,
    rabies_due    TEXT NOT NULL,      -- ISO date the next rabies shot is due
    distemper_due TEXT NOT NULL
);

CREATE TABLE clinic_hours (
    day    TEXT PRIMARY KEY,          -- monday .. sunday
    opens  TEXT,                      -- NULL when closed
    closes TEXT
);

CREATE TABLE slots (
    id        TEXT PRIMARY KEY,
    service   TEXT NOT NULL,          -- wellness, vaccine, dental
    starts_at TEXT NOT NULL,
    vet       TEXT NOT NULL,
    available INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE appointments (
    id         INTEGER PRIMARY KEY,
    pet_id     TEXT NOT NULL REFERENCES pets(id),
    slot_id    TEXT NOT NULL REFERENCES slots(id),
    service    TEXT NOT NULL,
    starts_at  TEXT NOT NULL,
    status     TEXT NOT NULL,         -- booked, cancelled
    created_at TEXT NOT NULL
);

CREATE TABLE record_requests (
    id          INTEGER PRIMARY KEY,
    pet_id      TEXT NOT NULL REFERENCES pets(id),
    channel     TEXT NOT NULL,        -- email, text
    destination TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
