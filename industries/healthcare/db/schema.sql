-- Straus Dermatology: the state every call starts from.
-- Reference tables (read by tools) come first; the write-bearing records come last. Every table a
-- tool writes is compared (pack.json): patients, appointments and waitlist (the paper's three), the
-- prescriptions a refill draws on, every text, email, payment link, refill request, care-team message
-- and staff transfer, every identity check (verifications) and every look at a patient's chart
-- (record_access), as a real practice keeps them, each time a caller was told to call 911
-- (emergency_advice) and each chart flagged because the verified caller was not the patient
-- (privacy_flags). A duplicate, a hedge (a message and the nurse line) or a substitute nobody asked
-- for is a row the expected state lacks. Creation times, generated row ids and free text (a message,
-- a summary, the symptoms, a pharmacy) are not compared; the care-team message is read for contact
-- details a caller dictated (pack.json free_text).

CREATE TABLE offices (
    id TEXT PRIMARY KEY,                 -- park_ave, brooklyn, hoboken, white_plains
    name TEXT NOT NULL,
    address TEXT NOT NULL,
    hours TEXT NOT NULL,
    parking TEXT NOT NULL,
    sort_order INTEGER NOT NULL
);

CREATE TABLE carriers (
    code TEXT PRIMARY KEY,               -- CIGNA, AETNA, UHC, BCBS, OXFORD, MEDICARE, SELF_PAY
    name TEXT NOT NULL
);

CREATE TABLE plan_acceptance (           -- which office is in network for which carrier
    office_id TEXT NOT NULL REFERENCES offices(id),
    carrier TEXT NOT NULL REFERENCES carriers(code),
    accepted INTEGER NOT NULL,
    PRIMARY KEY (office_id, carrier)
);

CREATE TABLE insurance_members (         -- what the carriers' eligibility service answers
    carrier TEXT NOT NULL REFERENCES carriers(code),
    member_id TEXT NOT NULL,
    full_name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    status TEXT NOT NULL,                -- active, inactive
    plan_name TEXT NOT NULL,
    specialist_copay REAL NOT NULL,
    deductible_remaining REAL NOT NULL,
    termination_date TEXT,
    PRIMARY KEY (carrier, member_id)
);

CREATE TABLE providers (
    id TEXT PRIMARY KEY,                 -- PR-01
    name TEXT NOT NULL,
    credentials TEXT NOT NULL,           -- MD, NP
    office_id TEXT NOT NULL REFERENCES offices(id),
    practice TEXT NOT NULL               -- medical, cosmetic
);

CREATE TABLE visit_types (
    code TEXT PRIMARY KEY,               -- new_patient, follow_up, skin_check, procedure, cosmetic_consult, cosmetic_treatment
    label TEXT NOT NULL,
    minutes INTEGER NOT NULL,            -- a slot must be at least this long
    practice TEXT NOT NULL               -- medical, cosmetic
);

CREATE TABLE slots (                     -- a provider's open block; one visit per block
    id TEXT PRIMARY KEY,                 -- S-301
    office_id TEXT NOT NULL REFERENCES offices(id),
    provider_id TEXT NOT NULL REFERENCES providers(id),
    starts_at TEXT NOT NULL,
    minutes INTEGER NOT NULL,
    held_until TEXT                      -- held for another caller until then (not offered meanwhile)
);

CREATE TABLE cosmetic_prices (
    treatment TEXT PRIMARY KEY,          -- botox, filler, chemical_peel, microneedling, laser_resurfacing
    label TEXT NOT NULL,
    unit TEXT NOT NULL,                  -- unit, syringe, session
    unit_price REAL NOT NULL,
    minimum_quantity INTEGER NOT NULL,
    package_quantity INTEGER,            -- this many sessions or more ...
    package_discount_pct REAL            -- ... take this much off the total
);

CREATE TABLE prescriptions (             -- compared: a refill draws one down
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,
    medication TEXT NOT NULL,
    refills_remaining INTEGER NOT NULL,  -- request_refill takes one
    requires_visit INTEGER NOT NULL      -- 1: a provider must see the patient before any refill
);

CREATE TABLE billing_items (
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,
    service_date TEXT NOT NULL,
    description TEXT NOT NULL,
    amount REAL NOT NULL
);

-- --- write-bearing records ---------------------------------------------------------------------

CREATE TABLE patients (                  -- compared
    id TEXT PRIMARY KEY,                 -- P-2001
    full_name TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    phone TEXT NOT NULL,                 -- digits only
    email TEXT,
    home_office TEXT NOT NULL REFERENCES offices(id),
    carrier TEXT,                        -- carrier code, NULL for none on file
    member_id TEXT,
    guardian_name TEXT,                  -- for a patient under 18
    balance REAL NOT NULL,               -- what the patient owes, to the cent
    payment_plan_months INTEGER,         -- a financing plan on the balance, NULL for none
    failed_verifications INTEGER NOT NULL,
    locked INTEGER NOT NULL              -- 1 after three failed verifications: staff must unlock
);

CREATE TABLE appointments (              -- compared
    id TEXT PRIMARY KEY,                 -- A-1001
    patient_id TEXT,                     -- NULL for a new patient booked without a chart
    new_patient_name TEXT,
    new_patient_dob TEXT,
    new_patient_phone TEXT,
    carrier TEXT,                        -- the plan a new patient will use (SELF_PAY for none)
    visit_type TEXT NOT NULL REFERENCES visit_types(code),
    office_id TEXT NOT NULL REFERENCES offices(id),
    provider_id TEXT NOT NULL REFERENCES providers(id),
    slot_id TEXT NOT NULL REFERENCES slots(id),
    starts_at TEXT NOT NULL,
    status TEXT NOT NULL,                -- scheduled, cancelled
    cancel_fee REAL NOT NULL,            -- a late-cancellation fee charged, 0 when none
    created_at TEXT NOT NULL
);

CREATE TABLE waitlist (                  -- compared
    id INTEGER PRIMARY KEY,
    patient_id TEXT,                     -- NULL for a new patient
    full_name TEXT NOT NULL,
    phone TEXT NOT NULL,
    visit_type TEXT NOT NULL REFERENCES visit_types(code),
    offices TEXT NOT NULL,               -- office ids, sorted, comma-separated
    earliest_date TEXT NOT NULL,
    latest_date TEXT NOT NULL,
    status TEXT NOT NULL,                -- active
    created_at TEXT NOT NULL
);

CREATE TABLE verifications (            -- compared: every identity check (pytest_callm.front_desk)
    id INTEGER PRIMARY KEY,
    account TEXT,                        -- the patient record the details were checked against; NULL when none matched
    claimed_name TEXT,                   -- the name the caller gave, as given (compared as a person)
    method TEXT NOT NULL,                -- date_of_birth, or date_of_birth_and_guardian for a minor
    outcome TEXT NOT NULL,               -- verified, failed, locked (record locked), refused (call's tries used)
    tried TEXT,                          -- JSON [[kind, value], ...]: the details tried (not compared)
    created_at TEXT
);

CREATE TABLE emergency_advice (         -- compared: the caller was told to hang up and call 911
    id INTEGER PRIMARY KEY,
    patient_id TEXT,                     -- the verified patient, if any (not compared)
    advice TEXT NOT NULL,                -- call_911
    desk TEXT,                           -- the desk that gave the advice (the agent the caller told, ctx.agent):
                                         -- an emergency is 911 from the desk that heard it, never transferred first
    done_before TEXT NOT NULL,           -- the business acts done earlier in the call, as the advice was given:
                                         -- tool names, sorted, comma-separated ('' for none; identity checks aside)
    symptoms TEXT NOT NULL,              -- what the caller described (free text, not compared)
    created_at TEXT NOT NULL
);

CREATE TABLE text_messages (             -- compared: every text sent (the tool gate also sees each one)
    id INTEGER PRIMARY KEY,
    patient_id TEXT,                     -- whose number it went to (NULL: a new patient's, or directions)
    phone TEXT NOT NULL,
    message_type TEXT NOT NULL,
    reference TEXT,                      -- the appointment, payment link, office, or waitlist entry (visit@offices)
    created_at TEXT NOT NULL
);

CREATE TABLE emails (                    -- compared: every email sent
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,
    address TEXT NOT NULL,
    message_type TEXT NOT NULL,
    reference TEXT,                      -- the appointment or payment link
    created_at TEXT NOT NULL
);

CREATE TABLE payment_links (             -- compared: every link created (its id is generated: not compared)
    id TEXT PRIMARY KEY,                 -- PL-<patient number>-<n>
    patient_id TEXT NOT NULL,
    amount REAL NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE refill_requests (           -- compared: every refill tried for a verified patient, refused ones included
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,
    prescription_id INTEGER REFERENCES prescriptions(id),  -- NULL when no prescription on the list matched
    medication TEXT NOT NULL,            -- the medication as tried (compared as a medication: brand or generic)
    pharmacy TEXT,                       -- as the caller named it (free text, not compared)
    status TEXT NOT NULL,                -- sent_to_provider, or the refusal (not_on_medication_list, ...)
    outcome TEXT NOT NULL,               -- sent, refused
    tried TEXT,                          -- JSON [[kind, value], ...]: the medication tried (not compared)
    created_at TEXT NOT NULL
);

CREATE TABLE eligibility_checks (        -- compared: every eligibility inquiry sent to a carrier
    id INTEGER PRIMARY KEY,
    carrier TEXT NOT NULL,               -- carrier code
    member_id TEXT,                      -- the member the carrier found; NULL when none matched
    outcome TEXT NOT NULL,               -- active, inactive, not_found
    tried TEXT,                          -- JSON [[kind, value], ...]: the member ID and date of birth tried (not compared)
    created_at TEXT NOT NULL
);

CREATE TABLE clinical_messages (         -- compared: every message to a care team
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,
    topic TEXT NOT NULL,                 -- not compared: the tool gate checks it where the key names it
    urgency TEXT NOT NULL,               -- routine, same_day
    message TEXT NOT NULL,               -- free text, not compared; read for a dictated phone, email or street address
    created_at TEXT NOT NULL
);

CREATE TABLE escalations (               -- compared: every transfer to staff or the on-call nurse
    id INTEGER PRIMARY KEY,
    patient_id TEXT,                     -- the verified patient, if any
    reason TEXT NOT NULL,                -- caller_request, complaint, urgent_clinical, account_locked, other
    desk TEXT,                           -- urgent_clinical: the desk that called the nurse line
    done_before TEXT,                    -- urgent_clinical: business acts done earlier in the call, sorted
    summary TEXT NOT NULL,               -- free text, not compared
    created_at TEXT NOT NULL
);

CREATE TABLE privacy_flags (             -- compared: a verified caller said they were not the patient
    id INTEGER PRIMARY KEY,
    patient_id TEXT NOT NULL,            -- the chart flagged (the verification on it ended)
    flag TEXT NOT NULL,                  -- caller_not_patient
    summary TEXT NOT NULL,               -- free text, not compared
    created_at TEXT NOT NULL
);

CREATE TABLE record_access (             -- compared: every look at a person's record (pytest_callm.front_desk)
    id INTEGER PRIMARY KEY,              -- a look at the verified caller's own chart adds no row; a search for
                                         -- a new patient's chart (book_new_patient_visit) is a row, found or not
    record TEXT,                         -- whose record was looked at; NULL when the details matched none
    on_behalf_of TEXT,                   -- the record of the caller verified in this call; NULL when none
    outcome TEXT NOT NULL,               -- found, not_found
    tried TEXT,                          -- JSON [[kind, value], ...]: the details used (not compared)
    created_at TEXT
);
