-- Cedar Ridge Veterinary Clinic: the state every call starts from.
CREATE TABLE owners (
    id        TEXT PRIMARY KEY,
    full_name TEXT NOT NULL,
    phone     TEXT NOT NULL,          -- digits only
    email     TEXT,
    failed_verifications INTEGER NOT NULL DEFAULT 0,  -- failed verify_owner tries on this account
    locked    INTEGER NOT NULL DEFAULT 0             -- 1 after three; staff unlock
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

CREATE TABLE verifications (               -- every identity try (pytest_callm.front_desk)
    id           INTEGER PRIMARY KEY,
    account      TEXT,                     -- the owner record the details were checked against; NULL for none
    claimed_name TEXT,                     -- the name the caller gave (compared as a person)
    method       TEXT NOT NULL,            -- name_and_phone
    outcome      TEXT NOT NULL,            -- verified, failed, locked, refused
    tried        TEXT,                     -- JSON [[kind, value], ...] (not compared; read by the verifier)
    created_at   TEXT
);

CREATE TABLE record_access (               -- every look at an owner's record but the verified caller's own
    id           INTEGER PRIMARY KEY,
    record       TEXT,
    on_behalf_of TEXT,
    outcome      TEXT NOT NULL,
    tried        TEXT,
    created_at   TEXT
);
