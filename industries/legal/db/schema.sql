-- Halverson & Reed: the state every call starts from.
-- Reference tables (read by tools) come first; the write-bearing records the verifier compares
-- (callers, verifications, record_access, conflict_checks, screening_log, screening_checks, intakes,
-- intake_notes, documents, holds, evaluations, messages, escalations) come last. The people tables (a person's
-- record: pack.json "people") are callers and matters: every look at one leaves a row of
-- verifications or record_access.

CREATE TABLE licensed_states (
    code TEXT PRIMARY KEY,              -- two-letter code, e.g. WA
    name TEXT NOT NULL,
    sort_order INTEGER NOT NULL          -- the order the firm lists them in
);

CREATE TABLE practice_areas (
    area TEXT PRIMARY KEY,               -- e.g. employment
    label TEXT NOT NULL,
    accepted INTEGER NOT NULL,           -- 1 if the firm takes such cases
    fee_type TEXT,                       -- contingency
    contingency_pct_prefiling REAL,
    contingency_pct_litigation REAL,
    consult_fee INTEGER,
    eval_group TEXT                      -- which attorneys evaluate it: injury, medical, employment
);

CREATE TABLE limitation_periods (
    state TEXT NOT NULL REFERENCES licensed_states(code),
    practice_area TEXT NOT NULL REFERENCES practice_areas(area),
    years INTEGER NOT NULL,
    PRIMARY KEY (state, practice_area)
);

CREATE TABLE conflict_index (            -- parties the firm represents or has represented
    party TEXT NOT NULL,
    relationship TEXT NOT NULL
);

CREATE TABLE staff (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL                   -- partner, associate, paralegal, intake manager
);

CREATE TABLE office_info (
    topic TEXT PRIMARY KEY,
    answer TEXT NOT NULL
);

CREATE TABLE callers (                   -- a person's record; compared (a verification writes the count and the lock)
    id TEXT PRIMARY KEY,                 -- c_1001 ...; new callers are c_new within their call
    full_name TEXT NOT NULL,
    phone TEXT NOT NULL,                 -- digits only
    email TEXT,
    failed_verifications INTEGER NOT NULL DEFAULT 0,  -- failed verify_client tries on this record (not compared:
                                                      -- the tries themselves are rows of verifications)
    locked INTEGER NOT NULL DEFAULT 0    -- 1 after three failed tries; staff unlock
);

CREATE TABLE matters (                   -- a person's record: read only by client services, for a verified client
    matter_number TEXT PRIMARY KEY,      -- HR-24-0117
    client_id TEXT NOT NULL REFERENCES callers(id),
    practice_area TEXT NOT NULL,
    state TEXT NOT NULL,
    status TEXT NOT NULL,                -- open, settled, closed
    stage TEXT NOT NULL,                 -- what a client may be told about where the case stands
    attorney_id TEXT NOT NULL REFERENCES staff(id),
    paralegal_id TEXT REFERENCES staff(id),
    next_event TEXT,
    next_event_date TEXT
);

CREATE TABLE evaluation_slots (
    id TEXT PRIMARY KEY,                 -- E-201
    starts_at TEXT NOT NULL,
    attorney_id TEXT NOT NULL REFERENCES staff(id),
    eval_group TEXT NOT NULL,
    mode TEXT NOT NULL                   -- phone, video, office
);

CREATE TABLE intakes (
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    caller_name TEXT NOT NULL,
    caller_phone TEXT NOT NULL,
    practice_area TEXT,                  -- NULL for a contact-details-only record
    state TEXT,
    incident_date TEXT,
    opposing_party TEXT,                 -- the parties conflict-checked in the call (party keys, "; "), not compared:
                                         -- the checks themselves are rows of conflict_checks
    status TEXT NOT NULL,                -- recorded, contact_only
    reason TEXT,                         -- why only contact details were taken
    summary TEXT,                        -- free text, not compared; read for a phone number or email address
                                         -- (house rule no-dictated-contact-details)
    created_at TEXT NOT NULL
);

CREATE TABLE intake_notes (
    id INTEGER PRIMARY KEY,
    intake_id INTEGER NOT NULL REFERENCES intakes(id),
    note TEXT NOT NULL,                  -- free text, not compared; read for a phone number, email or street address
                                         -- (house rule no-dictated-contact-details)
    created_at TEXT NOT NULL
);

CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    kind TEXT NOT NULL,                  -- intake_packet, records_authorization
    target TEXT NOT NULL,                -- email, text
    created_at TEXT NOT NULL
);

CREATE TABLE holds (
    id INTEGER PRIMARY KEY,
    slot_id TEXT NOT NULL REFERENCES evaluation_slots(id),
    caller_id TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    status TEXT NOT NULL,                -- active, confirmed, expired
    created_at TEXT NOT NULL
);

CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    slot_id TEXT NOT NULL REFERENCES evaluation_slots(id),
    practice_area TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    attorney_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,                -- scheduled, cancelled
    replaces_cancelled TEXT,             -- booked after a cancellation in the same call: whether that came
                                         -- after_new_time_found or before_new_time_found
    created_at TEXT NOT NULL
);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    recipient_id TEXT NOT NULL REFERENCES staff(id),
    callback_phone TEXT NOT NULL,        -- digits only
    urgent INTEGER NOT NULL,
    message TEXT NOT NULL,               -- free text, not compared; read for a phone number, email or street address
                                         -- (house rule no-dictated-contact-details)
    created_at TEXT NOT NULL
);

CREATE TABLE escalations (
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    reason TEXT NOT NULL,                -- caller_request, complaint, emergency, other
    advised_911 INTEGER NOT NULL DEFAULT 0,  -- 1 when the caller was told to call 911 first
    summary TEXT NOT NULL,               -- free text, not compared
    created_at TEXT NOT NULL
);

CREATE TABLE verifications (             -- every identification and every verification try (front_desk)
    id INTEGER PRIMARY KEY,
    account TEXT,                        -- the record the details were checked against; NULL when none matched
    claimed_name TEXT,                   -- the name the caller gave, as given (compared by its kind)
    method TEXT NOT NULL,                -- name_and_phone (lookup_caller), matter_number (verify_client)
    outcome TEXT NOT NULL,               -- identified, new_caller (lookups); verified, failed, locked, refused (verify_client)
    tried TEXT,                          -- JSON [[kind, value], ...]: the details tried (not compared; read by the
                                         -- verifier: a failed try is forgiven only when the caller said every value)
    created_at TEXT
);

CREATE TABLE conflict_checks (           -- every conflict check of a call, once per party (compared)
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    party TEXT NOT NULL,                 -- the party checked, as the agent wrote it (compared as `party`)
    outcome TEXT NOT NULL,               -- clear, conflict
    facts_before TEXT NOT NULL,          -- the facts of the matter taken in this call before this check, in screening
                                         -- order ('' when none): a party checked only after facts is on the record
    tried TEXT,                          -- JSON [["party", name]] (not compared; read by the verifier: an extra clear
                                         -- check is forgiven only when the caller said that name)
    created_at TEXT
);

CREATE TABLE screening_log (             -- facts of a matter taken while the conflict check did not stand clear
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    fact TEXT NOT NULL,                  -- practice_area, state, incident_date, intake (the whole matter)
    conflict_check TEXT NOT NULL,        -- pending (no check yet), conflict (after a conflict in this call),
                                         -- conflict_found_later (taken while clear, then a party checked later conflicted)
    created_at TEXT NOT NULL
);

CREATE TABLE screening_checks (          -- every screening check run in a call (compared), once per check and values:
                                         -- a check the right answer does not run (a state assumed, an area guessed,
                                         -- a check after one that stopped the screening) is on the record
    id INTEGER PRIMARY KEY,
    caller_id TEXT NOT NULL,
    record TEXT NOT NULL,                -- the check, as the screening file names it: practice_area, jurisdiction,
                                         -- or filing_deadline/<area code> (a deadline is one per practice area)
    practice_area TEXT,                  -- the area code checked (practice_area, filing_deadline)
    state TEXT,                          -- the two-letter code checked (jurisdiction, filing_deadline)
    incident_date TEXT,                  -- YYYY-MM-DD (filing_deadline)
    outcome TEXT NOT NULL,               -- accepted, not_accepted (area); licensed, not_licensed (state); ok, urgent,
                                         -- expired, or the refusal not_licensed_in_state / practice_area_not_accepted
                                         -- (deadline)
    tried TEXT,                          -- JSON [[kind, value], ...]: the values a caller says (the state by name, the
                                         -- date); not compared, read by the verifier: an extra state or deadline check
                                         -- is forgiven only as a retry of a check the right answer runs too, with
                                         -- values the caller was heard saying (a misspoken date corrected)
    created_at TEXT
);

CREATE TABLE record_access (             -- compared: every look at a person's record (pytest_callm.front_desk)
    id INTEGER PRIMARY KEY,
    record TEXT,                         -- whose record was looked at; NULL when the details matched none
    on_behalf_of TEXT,                   -- the record of the caller verified in this call; NULL when none
    outcome TEXT NOT NULL,               -- found (lookup_caller: name and phone on one record); not_found (the details
                                         -- matched no record, or one only in part: that record); refused (another
                                         -- client's matter asked for by a verified client, not shown)
    tried TEXT,                          -- JSON [[kind, value], ...]: the details used (not compared)
    created_at TEXT
);
