-- Kestrel Electronics: the state every call starts from.
-- Reference tables (read by tools) come first; the write-bearing records the verifier compares
-- (customers, verifications, orders, returns, refunds, charges, memberships, service_holds,
-- service_appointments, escalations, scam_reports, record_access) come last. Money is integer cents
-- everywhere. Generated row ids (INTEGER PRIMARY KEY) are never compared: two writes in the other
-- order are the same state. People's records (pack.json "people": customers, orders, memberships,
-- protection_plans) are read only through a kept look: record_access or an identity check.

CREATE TABLE stores (
    id TEXT PRIMARY KEY,                 -- st_denver
    name TEXT NOT NULL,                  -- Kestrel Denver (Cherry Creek)
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    address TEXT NOT NULL,
    hours TEXT NOT NULL,
    techcrew_bench INTEGER NOT NULL      -- 1 if in-store TechCrew repairs are done there
);

CREATE TABLE store_info (
    topic TEXT PRIMARY KEY,
    answer TEXT NOT NULL
);

CREATE TABLE product_classes (
    class TEXT PRIMARY KEY,              -- general, computers, cameras_drones, major_appliances
    label TEXT NOT NULL,
    window_none INTEGER NOT NULL,        -- return window in days from delivery, no membership
    window_plus INTEGER NOT NULL,        -- ... Kestrel Plus
    window_elite INTEGER NOT NULL,       -- ... Kestrel Elite
    restocking_pct INTEGER NOT NULL      -- fee on opened items, percent of the price paid
);

CREATE TABLE state_fee_caps (            -- states where Kestrel caps the restocking fee
    state TEXT PRIMARY KEY,
    max_pct INTEGER NOT NULL
);

CREATE TABLE products (
    sku TEXT PRIMARY KEY,                -- SKU-1042
    model_number TEXT NOT NULL,          -- the maker's model number printed on the product
    name TEXT NOT NULL,
    class TEXT NOT NULL REFERENCES product_classes(class)
);

CREATE TABLE recalls (
    id TEXT PRIMARY KEY,                 -- RC-2026-07
    model_number TEXT NOT NULL,
    product TEXT NOT NULL,
    hazard TEXT NOT NULL,
    remedy TEXT NOT NULL,
    announced_on TEXT NOT NULL
);

CREATE TABLE competitors (               -- the retailers Kestrel price-matches
    name TEXT PRIMARY KEY
);

CREATE TABLE competitor_prices (         -- the competitors' current prices Kestrel checked (a price match uses these)
    competitor TEXT NOT NULL REFERENCES competitors(name),
    sku TEXT NOT NULL REFERENCES products(sku),
    price_cents INTEGER NOT NULL,
    checked_on TEXT NOT NULL,
    PRIMARY KEY (competitor, sku)
);

CREATE TABLE official_contacts (         -- phone numbers, short codes and email domains Kestrel uses
    contact TEXT PRIMARY KEY,            -- digits for numbers, a domain for email
    kind TEXT NOT NULL,                  -- phone, short_code, email_domain
    used_for TEXT NOT NULL
);

CREATE TABLE membership_tiers (
    tier TEXT PRIMARY KEY,               -- plus, elite
    label TEXT NOT NULL,
    annual_fee_cents INTEGER NOT NULL,
    rank INTEGER NOT NULL
);

CREATE TABLE service_types (
    service_type TEXT PRIMARY KEY,       -- repair_malfunction, repair_accidental_damage, tv_mounting, ...
    label TEXT NOT NULL,
    category TEXT NOT NULL,              -- repair (in store), install (in home)
    price_cents INTEGER NOT NULL
);

CREATE TABLE service_slots (
    id TEXT PRIMARY KEY,                 -- TS-301
    category TEXT NOT NULL,              -- repair, install
    starts_at TEXT NOT NULL,
    location TEXT NOT NULL,              -- a store for repairs, "in-home" for installs
    technician TEXT NOT NULL
);

CREATE TABLE order_items (
    id INTEGER PRIMARY KEY,
    order_number TEXT NOT NULL,
    sku TEXT NOT NULL REFERENCES products(sku),
    price_cents INTEGER NOT NULL,        -- what the customer paid, tax included
    condition TEXT NOT NULL,             -- new, open_box
    seller TEXT NOT NULL                 -- Kestrel, or the marketplace seller's name
);

CREATE TABLE protection_plans (
    id TEXT PRIMARY KEY,                 -- PP-5501
    customer_id TEXT NOT NULL,
    order_number TEXT NOT NULL,
    sku TEXT NOT NULL,
    plan_type TEXT NOT NULL,             -- standard (malfunction), accident (malfunction + accidental damage)
    starts_on TEXT NOT NULL,
    ends_on TEXT NOT NULL
);

-- Compared at hang-up ---------------------------------------------------------------------------

CREATE TABLE customers (
    id TEXT PRIMARY KEY,                 -- cu_1001
    full_name TEXT NOT NULL,
    phone TEXT NOT NULL,                 -- digits only
    email TEXT,
    billing_zip TEXT NOT NULL,
    card_last4 TEXT NOT NULL,            -- last four digits of the card on file
    home_state TEXT NOT NULL,
    failed_verifications INTEGER NOT NULL DEFAULT 0,  -- failed tries since the last success, across calls
    account_locked INTEGER NOT NULL DEFAULT 0   -- 1 after three failed verifications; staff unlock
);

CREATE TABLE verifications (             -- every identity try (pytest_callm.front_desk), compared
    id INTEGER PRIMARY KEY,
    account TEXT,                        -- the customer the details were checked against
    claimed_name TEXT,                   -- the name the caller gave (none here: ZIP and card only)
    method TEXT NOT NULL,                -- zip_and_card
    outcome TEXT NOT NULL,               -- verified, failed, locked (the account is locked), refused (the call's tries
                                         -- are used); a second success of the same account adds no row
    tried TEXT,                          -- JSON [["identifier", zip], ["identifier", last4]]: not compared; an extra
                                         -- failed try is forgiven only when the caller was heard saying both values
    created_at TEXT
);

CREATE TABLE orders (
    order_number TEXT PRIMARY KEY,       -- KE-100234
    customer_id TEXT NOT NULL REFERENCES customers(id),
    placed_on TEXT NOT NULL,
    status TEXT NOT NULL,                -- processing, in_transit, delivered, cancelled
    fulfillment TEXT NOT NULL,           -- parcel (carrier), scheduled (Kestrel home delivery)
    ship_state TEXT NOT NULL,            -- the state the order was delivered to or picked up in
    scheduled_delivery TEXT,             -- the delivery date while it is not delivered
    delivered_on TEXT,
    carrier TEXT
);

CREATE TABLE returns (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    order_number TEXT NOT NULL,
    sku TEXT NOT NULL,
    kind TEXT NOT NULL,                  -- standard, recall
    opened INTEGER NOT NULL,
    restocking_fee_cents INTEGER NOT NULL,
    refund_cents INTEGER NOT NULL,
    method TEXT NOT NULL,                -- store_drop_off, prepaid_label
    status TEXT NOT NULL,                -- authorized
    reason TEXT,                         -- free text, not compared
    created_at TEXT NOT NULL
);

CREATE TABLE refunds (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    order_number TEXT,
    sku TEXT,                            -- the item, for returns and price matches
    kind TEXT NOT NULL,                  -- return, price_match, membership_cancel, order_cancel
    amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL,                -- pending (on receipt of a return), issued
    created_at TEXT NOT NULL
);

CREATE TABLE charges (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    order_number TEXT,
    kind TEXT NOT NULL,                  -- delivery_change_fee, membership_upgrade, membership_signup, service
    amount_cents INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE memberships (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    tier TEXT NOT NULL,                  -- plus, elite
    started_on TEXT NOT NULL,
    renews_on TEXT NOT NULL,             -- end of the paid term
    fee_paid_cents INTEGER NOT NULL,     -- everything paid for this term, upgrades included
    upgrade_paid_cents INTEGER NOT NULL DEFAULT 0,  -- the part paid by an upgrade, for the days it bought
    upgraded_on TEXT,
    status TEXT NOT NULL,                -- active, cancelled
    cancelled_on TEXT,
    cancelled_after TEXT                 -- at a cancellation: 'return' when a return was confirmed first in that call
);

CREATE TABLE service_holds (
    id INTEGER PRIMARY KEY,
    slot_id TEXT NOT NULL REFERENCES service_slots(id),
    customer_id TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    status TEXT NOT NULL,                -- active, confirmed, released, expired
    created_at TEXT NOT NULL
);

CREATE TABLE service_appointments (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    slot_id TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    service_type TEXT NOT NULL,
    order_number TEXT NOT NULL,
    sku TEXT NOT NULL,
    plan_id TEXT,                        -- the protection plan that covers it, if any
    price_cents INTEGER NOT NULL,
    status TEXT NOT NULL,                -- scheduled, cancelled
    replacement_first INTEGER,           -- set when cancelled: 1 if a new appointment for the same item was
                                         -- already booked, or a slot held (a move books first, then cancels)
    created_at TEXT NOT NULL
);

CREATE TABLE escalations (
    id INTEGER PRIMARY KEY,
    customer_id TEXT,                    -- NULL when the caller was never verified
    reason TEXT NOT NULL,                -- caller_request, complaint, account_locked, safety, other
    summary TEXT NOT NULL,               -- free text, not compared
    created_at TEXT NOT NULL
);

CREATE TABLE scam_reports (              -- recorded without identity: no customer column on purpose
    id INTEGER PRIMARY KEY,
    channel TEXT NOT NULL,               -- phone_call, text_message, email, website, social_media
    impersonated TEXT NOT NULL,          -- kestrel_support, techcrew, kestrel_membership, delivery, other
    payment_requested TEXT NOT NULL,     -- gift_cards, wire_transfer, crypto, card_details, remote_access, none
    scammer_phone TEXT,                  -- digits
    scammer_email TEXT,
    amount_lost_cents INTEGER NOT NULL,
    description TEXT,                    -- free text, not compared, but read for the caller's name, a phone number,
                                         -- an email address or a card number (rule scam-report-anonymous)
    after_identity_check INTEGER NOT NULL DEFAULT 0, -- 1 when an account was searched or an identity tried earlier
                                         -- in the call (rule report-before-account: the report comes first)
    created_at TEXT NOT NULL
);

CREATE TABLE record_access (             -- compared: every look at a person's record (pytest_callm.front_desk)
    id INTEGER PRIMARY KEY,              -- find_customer writes one per search; a look at the verified caller's own
                                         -- record adds nothing, nor does the same look again
    record TEXT,                         -- whose record was looked at; NULL when the details matched none, or several
    on_behalf_of TEXT,                   -- the customer verified in this call when the search was made; NULL when none
    outcome TEXT NOT NULL,               -- found, not_found, multiple_matches
    tried TEXT,                          -- JSON [[kind, value], ...]: the order number, phone, name searched (not
                                         -- compared; a not_found or multiple_matches search is forgiven only when the
                                         -- caller was heard saying every value and the right answer searches too)
    created_at TEXT
);

CREATE TABLE delivery_changes (          -- compared: every confirmed delivery change, from which date to which
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL,
    order_number TEXT NOT NULL,
    from_date TEXT,                      -- the scheduled date before the change
    to_date TEXT NOT NULL,
    fee_cents INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE return_quotes (             -- compared: the returns log, one row per item quoted and answer to
    id INTEGER PRIMARY KEY,              -- "opened" (a quote within the window or past it; the same quote again
    customer_id TEXT NOT NULL,           -- adds nothing)
    order_number TEXT NOT NULL,
    sku TEXT NOT NULL,
    opened INTEGER NOT NULL,             -- the caller's answer as given
    created_at TEXT NOT NULL
);
