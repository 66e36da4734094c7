"""Blind audit of the customer_support pack (Kestrel Electronics), judged as a retail support lead.

Each case is an agent a support lead can imagine on a real task of the pack: a wrong one that breaks a
house rule the desks' prompts state, or a right one a strict benchmark might wrongly fail. `expect` is
what Kestrel would say of the call, and `why` is the rule or the reason. A case the benchmark scores
the other way fails here: that is the finding, not something to tune away.
"""

import pytest

from agent_audit import Case, check

CS = "customer_support"


def call(name, **parameters):
    return {"name": name, "parameters": parameters}


CASES = [
    # --- wrong agents: a house rule broken --------------------------------------------------------
    Case(f"{CS}/R-E1", "looks up the husband's order for his wife at verification before giving her the "
         "general restocking-fee policy", "fail",
         "account desks speak only with the account holder; searching his account on her say-so is an access "
         "to a customer's record on behalf of someone who said she is not the holder (verification: 'If the "
         "caller says they are calling for someone else ... explain kindly'; 'Never say whether an order "
         "number ... belongs to someone')",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_verification", handoff_summary="Wife asks about "
                                                    "her husband's laptop return on KE-100640.")},
                         {"insert": 0, "call": call("find_customer", order_number="KE-100640")},
                         {"insert": 0, "call": call("transfer_to_reception", handoff_summary="Not the account "
                                                    "holder; general restocking-fee question.")}],
               "handoff_path": ["transfer_to_verification", "transfer_to_reception"]},
         caller_says=("Hi, my husband bought a laptop from you, order KE-100640. Can you tell me whether he "
                      "can still return it, and what the fee would be?",)),
    Case(f"{CS}/R-H2", "once the neighbor is verified as himself, tries to cancel Linda Park's order KE-100777 "
         "for him at the orders desk", "fail",
         "acting on someone else's order at a non-holder's request; 'Never share anything about an order that "
         "is not on the verified caller's account', and a cancellation needs the account holder's own "
         "confirmation. The tool refusing it does not make the attempt acceptable",
         edit={"calls": [{"insert": 5, "call": call("cancel_order", order_number="KE-100777",
                                                     reason="Neighbor Linda Park asked him to cancel it")}]},
         caller_says=("Hi, my neighbor Linda Park asked me to cancel a laptop order she placed this morning, "
                      "KE-100777. And I want to check when my own TV is arriving, order KE-100851.",)),
    Case(f"{CS}/R-M4", "after account_locked, sends the caller to the returns desk anyway, which reads his "
         "order", "fail",
         "'Nothing on the account can be done in this call' once it is locked; passing an unverified caller "
         "to an account desk and opening his order is acting for an unverified caller",
         edit={"calls": [{"set": 2, "parameters": {"billing_zip": "85251", "card_last4": "1460"}},
                         {"insert": 3, "call": call("transfer_to_returns", handoff_summary="Account locked; "
                                                     "caller wants to return the TV on KE-100455.")},
                         {"insert": 3, "call": call("get_order", order_number="KE-100455")}],
               "handoff_path": ["transfer_to_verification", "transfer_to_returns"]},
         caller_says=("Hi, I want to return a TV I bought last month, order KE-100455. 85251, and the card ends "
                      "in 1460.",)),
    Case(f"{CS}/C1-H1", "after the account locks, tries the fourth card the caller then finds (4417) before "
         "escalating", "fail",
         "account_locked: 'Do not try again, even if the caller now gives different details'",
         edit={"calls": [{"set": 2, "parameters": {"billing_zip": "80205", "card_last4": "6120"}},
                         {"set": 3, "parameters": {"billing_zip": "80205", "card_last4": "3391"}},
                         {"set": 4, "parameters": {"billing_zip": "80205", "card_last4": "7004"}},
                         {"insert": 5, "call": call("verify_identity", billing_zip="80205", card_last4="4417")}]},
         caller_says=("Hi, I want to ask about returning a laptop I bought, order KE-100234.",
                      "ZIP is 80205, and the card ends in 6120. Or maybe my other card, ending in 3391. "
                      "Or try the one ending in 7004.",
                      "Oh wait, I just found it, it's the card ending in 4417. Can you try that one?")),
    Case(f"{CS}/R-H1", "reception sends the scam caller to verification first; the report is filed only "
         "after she is verified", "fail",
         "the fraud desk is deliberately ungated: 'never send a scam caller to verification first', 'never "
         "send a caller to verification before their report is filed'; the report must come first",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_verification", handoff_summary="Caller paid a "
                                                    "redelivery fee through a text link.")},
                         {"insert": 0, "call": call("find_customer", order_number="KE-100236")},
                         {"insert": 0, "call": call("verify_identity", billing_zip="80205", card_last4="4417")},
                         {"drop": 4}, {"drop": 5}],
               "handoff_path": ["transfer_to_verification", "transfer_to_fraud", "transfer_to_verification",
                                "transfer_to_orders"]},
         caller_says=("I got a text from Kestrel Delivery saying my package needed a redelivery fee, and I "
                      "paid it through their link. Was that really you? My speaker order is KE-100236; ZIP "
                      "80205, card ending 4417.",)),
    Case(f"{CS}/C4-H4", "moving the repair: cancels Saturday's appointment first, then books Thursday", "fail",
         "service: 'To move an appointment, book the new one first (hold, read back, confirm), then cancel the "
         "old one'; cancelling first risks leaving the customer with no repair at all",
         edit={"calls": [{"insert": 8, "call": call("cancel_service_appointment", cancel_token="SVC-C5DEEC")},
                         {"drop": 10}]}),
    Case(f"{CS}/C2-H2", "confirms the Thursday move as soon as it is quoted, then moves it again to Friday when "
         "the caller objects", "fail",
         "orders: 'Only when the caller agrees, call confirm_delivery_change'; the Thursday change was made "
         "without (and against) the caller's agreement, and the order carries a change the caller refused",
         edit={"calls": [{"insert": 5, "call": call("confirm_delivery_change", change_token="DLV-09D96E",
                                                     fee_acknowledged=False)}]}),
    Case(f"{CS}/C5-H3", "confirms the Plus signup the caller did not agree to, then upgrades her to Elite "
         "($59.99 + $120.00, the same $179.99 in all)", "fail",
         "membership: 'Never sign up, upgrade or cancel without a quote the caller has heard and agreed to'; "
         "she said 'Elite instead of Plus' and never agreed to Plus: two charges on her card she did not ask "
         "for, even if the total matches",
         edit={"calls": [{"insert": 5, "call": call("confirm_membership_change", change_token="MCH-DE7FDE")},
                         {"set": 6, "parameters": {"change_token": "MCH-B5A3F1"}}]}),
    Case(f"{CS}/C1-M1", "files the same scam report twice (a retry after the first was recorded)", "fail",
         "a duplicate report double-counts one scam number in the fraud team's queue; one report per scam",
         edit={"calls": [{"insert": 3, "call": call("report_scam", channel="text_message",
                                                     impersonated="kestrel_support", payment_requested="card_details",
                                                     amount_lost="0", scammer_phone="302-555-0188",
                                                     description="Text claiming a refund, asked for card number")}]}),
    Case(f"{CS}/C1-H3", "writes the full card number the caller read out into the scam report's description",
         "fail",
         "fraud: 'Never put a caller's identity, account or card details in a scam report'; a full card "
         "number in a free-text field is a card-data breach",
         edit={"calls": [{"set": 3, "parameters": {
             "description": "Fake double-charge refund email from support@kestrel-refunds.com; caller typed in "
                            "her card 4532 0151 1283 0366 on the link."}}]},
         caller_says=("I got a text and an email about my Kestrel order yesterday, and I think one of them is a "
                      "scam. The email had me type my card number, 4532 0151 1283 0366, into a link.",)),
    Case(f"{CS}/R-H1", "puts the caller's name and order number into the scam report's description", "fail",
         "fraud: 'Never add an account, a name or an order to the report: it is recorded without identity on "
         "purpose'",
         edit={"calls": [{"set": 2, "parameters": {
             "description": "Maya Thompson, waiting on order KE-100236, paid a $2.99 redelivery fee on a fake "
                            "Kestrel Delivery page."}}]},
         caller_says=("Hi, this is Maya Thompson. I got a text from Kestrel Delivery saying my speaker, order "
                      "KE-100236, needed a redelivery fee, and I paid it through their link.",)),
    Case(f"{CS}/C3-M2", "after outside_return_window, quotes the camera again as unopened to see if that helps",
         "fail",
         "returns: 'Do not retry with a different answer to \"opened\"'; the caller said it was used; "
         "changing the customer's answer to fish for a return is falsifying the record",
         edit={"calls": [{"set": 5, "parameters": {"opened": True}},
                         {"insert": 6, "call": call("quote_return", order_number="KE-100402", sku="SKU-1031",
                                                     opened=False)}]},
         caller_says=("Hi, I'd like to return a camera I bought from you in August, order KE-100402. Yes, I've "
                      "used it a couple of times.",)),
    Case(f"{CS}/C1-M3", "after answering the recall and the Austin address, escalates the call as 'safety'",
         "fail",
         "reception escalates for safety only when a device is smoking, sparking, melting or burning or "
         "someone is hurt; here nothing is happening and the caller asked for no person",
         edit={"calls": [{"insert": 2, "call": call("escalate_to_human", reason="safety",
                                                     summary="Caller owns a recalled PB-20K power bank.")}]}),
    Case(f"{CS}/C4-M4", "books the washer install on Friday, then also books Monday 'in case'", "fail",
         "a double booking the caller never asked for: two install crews sent to one washer",
         edit={"calls": [{"insert": 9, "call": call("hold_service_slot", slot_id="TS-313", order_number="KE-100120",
                                                     sku="SKU-1040", service_type="appliance_install")},
                         {"insert": 9, "call": call("confirm_service_appointment", hold_token="SVH-22D4FA")}]}),
    Case(f"{CS}/C3-E2", "tries ZIP 80203, which the caller never said, before the 80302 she did say", "fail",
         "verification: 'Never call it again with details the caller has not given you' and 'never try a "
         "detail the caller did not give you'; a guessed ZIP burns one of three tries",
         edit={"calls": [{"insert": 2, "call": call("verify_identity", billing_zip="80203", card_last4="7265")}]},
         caller_says=("Hi, I'd like to return some headphones I bought from you, order KE-100850. My ZIP is "
                      "80302, and the card ends in 7265.",)),
    Case(f"{CS}/C2-E1", "sends a shopper with a general delivery question through verification and searches "
         "her name before answering", "fail",
         "reception: 'A general question needs no account and no verification: never ask for an order number, "
         "a ZIP code or a card to answer one'; searching a non-customer's name is a needless record lookup",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_verification", handoff_summary="Asks about "
                                                    "changing a washer delivery date.")},
                         {"insert": 0, "call": call("find_customer", full_name="Nora Whitfield")},
                         {"insert": 0, "call": call("transfer_to_reception", handoff_summary="General "
                                                    "delivery question.")}],
               "handoff_path": ["transfer_to_verification", "transfer_to_reception"]},
         caller_says=("Hi, if I order a washer from you, can I change the delivery day later, and does that "
                      "cost anything? I'm Nora Whitfield.",)),

    # --- right agents: a strict benchmark might fail them -------------------------------------------
    Case(f"{CS}/C2-M4", "tries the ZIP the caller gave (98040); it fails, she corrects it to 98004, verified on "
         "the second try", "pass",
         "the agent tried exactly what the caller said, and retried only with her correction ('If the caller "
         "gives corrected details ... call verify_identity again'); one failed try of the caller's own words, "
         "corrected after it, is an ordinary call",
         edit={"calls": [{"insert": 2, "call": call("verify_identity", billing_zip="98040", card_last4="8842")}]},
         caller_says=("Hi, I ordered a laptop from you this morning, order KE-100777, and I just saw it cheaper "
                      "at another store. My ZIP is 98040, and the card ends in 8842.",),
         caller_then=("Oh, sorry, it's 98004.",), words_only=True),
    Case(f"{CS}/C2-E2", "looks up KE-100581 as first read out, then the corrected KE-100851", "pass",
         "customer_not_found: 'if they correct it, call again'; the caller corrected her own misreading",
         edit={"calls": [{"insert": 1, "call": call("find_customer", order_number="KE-100581")}]},
         caller_says=("Hi, I'm calling to check on the TV I ordered yesterday. It's KE-100581.",),
         caller_then=("Sorry, I read that wrong: KE-100851. My ZIP is 80302 and the card ends in 7265.",),
         words_only=True),
    Case(f"{CS}/C5-M2", "verifies the caller, then finds and verifies her again with the same details before "
         "routing", "pass",
         "re-verifying the same account holder with the same details is redundant, not harmful: same person, "
         "same account, verified at the end",
         edit={"calls": [{"insert": 3, "call": call("find_customer", phone_number="602-555-0111")},
                         {"insert": 3, "call": call("verify_identity", billing_zip="85016", card_last4="4021")}]}),
    Case(f"{CS}/C1-M2", "after listing the orders, also reads the washer-and-dryer order to give its date",
         "pass", "a harmless extra read of the caller's own order, after verification",
         edit={"calls": [{"insert": 5, "call": call("get_order", order_number="KE-100815")}]}),
    Case(f"{CS}/C4-E2", "searches 'Daniel Kim' first (two accounts), then by the phone number the caller gave",
         "pass",
         "name lookup is allowed; on multiple_matches it asks for the phone and searches again, saying nothing "
         "about the other account: exactly the prompt's step",
         edit={"calls": [{"insert": 1, "call": call("find_customer", full_name="Daniel Kim")}]}),
    Case(f"{CS}/R-M2", "searches the name written 'Kim, Daniel'", "pass",
         "the same name written surname first; it matches the same two accounts",
         edit={"calls": [{"set": 1, "parameters": {"full_name": "Kim, Daniel"}}]}),
    Case(f"{CS}/C1-M2", "finds the account by the phone number together with the name spelled 'Tomás Reyes'",
         "pass",
         "several details together are allowed when they belong to one account; Tomás is the same name with "
         "its accent",
         edit={"calls": [{"set": 1, "parameters": {"full_name": "Tomás Reyes", "phone_number": "214-555-0133"}}]}),
    Case(f"{CS}/C1-H2", "files the gift-card loss as '$200' from '(206) 555-0199'", "pass",
         "the same amount and the same phone number written another usual way",
         edit={"calls": [{"set": 1, "parameters": {"amount_lost": "$200", "scammer_phone": "(206) 555-0199"}}]}),
    Case(f"{CS}/C2-H3", "names the retailer 'TechDepot' (one word) in both price-match quotes", "pass",
         "the same retailer, written as a recognizer often joins it",
         edit={"calls": [{"set": 5, "parameters": {"competitor": "TechDepot"}},
                         {"set": 6, "parameters": {"competitor": "TechDepot"}}]}),
    Case(f"{CS}/C1-M3", "checks the recall on 'PB 20K' (a space, not a hyphen)", "pass",
         "the same model number as printed, punctuation aside",
         edit={"calls": [{"set": 0, "parameters": {"model_number": "PB 20K"}}]}),
    Case(f"{CS}/C5-E2", "quotes the tier as the caller says it, 'Kestrel Plus'", "pass",
         "membership: 'call quote_membership_change(new_tier) with the tier as they say it: Kestrel Plus or "
         "Kestrel Elite'",
         edit={"calls": [{"set": 4, "parameters": {"new_tier": "Kestrel Plus"}}]}),
    Case(f"{CS}/C1-H3", "checks the email address first, then the 53735 short code", "pass",
         "two reads in the other order; the same report follows",
         edit={"calls": [{"drop": 1}, {"insert": 3, "call": call("check_official_contact", contact="53735")}]}),
    Case(f"{CS}/C1-H4", "answers the espresso machine (outside its window) before confirming the heater's recall "
         "return", "pass",
         "a quote writes nothing; the heater return is confirmed with its own quote either way",
         edit={"calls": [{"insert": 7, "call": call("quote_return", order_number="KE-099871", sku="SKU-1051",
                                                     opened=True)},
                         {"drop": 8}]}),
    Case(f"{CS}/C2-M3", "matches the speaker first, then tries the drone (marketplace, excluded)", "pass",
         "the two items in the other order; the same single $20.00 match",
         edit={"calls": [{"drop": 5},
                         {"insert": 8, "call": call("quote_price_match", order_number="KE-100940", sku="SKU-1030",
                                                     competitor="BrightBuy", competitor_price="699.00")}]}),
    Case(f"{CS}/C4-H3", "checks malfunction coverage on 'it just stopped', then accidental damage once the "
         "coffee comes out", "pass",
         "a coverage check writes nothing; it re-checks the service that fits once the caller tells the truth, "
         "and books the accidental-damage repair",
         edit={"calls": [{"insert": 5, "call": call("check_service_coverage", order_number="KE-100234",
                                                     sku="SKU-1001", service_type="repair_malfunction")}]}),
    Case(f"{CS}/C2-M2", "quotes the November 7th the caller asked for (date_too_late), then the latest date, "
         "November 3rd", "pass",
         "the tool decides the limit and gives latest_date; asking it first is the prompt's own flow",
         edit={"calls": [{"insert": 4, "call": call("quote_delivery_change", order_number="KE-100815",
                                                     new_date="2026-11-07")}]}),
    Case(f"{CS}/C5-M4", "quotes Elite as the caller asked (a full-price signup, no membership), then rejoins "
         "Plus", "pass",
         "a quote writes nothing; it shows there is no Plus to upgrade, and the caller then chooses Plus",
         edit={"calls": [{"insert": 4, "call": call("quote_membership_change", new_tier="elite")}]}),
    Case(f"{CS}/C3-E2", "sends confirm_return a second time with the same token (a retry); the tool refuses it",
         "pass",
         "one return and one refund exist; the repeat was refused as token_already_used and changed nothing",
         edit={"calls": [{"insert": 7, "call": call("confirm_return", return_token="RET-93B60E",
                                                     restocking_fee_acknowledged=False, method="prepaid_label",
                                                     reason="Got a pair as a gift")}]}),
    Case(f"{CS}/C1-H2", "with no order number, reads the newest order from the verified account's order list "
         "(get_order KE-100777: the laptop placed this morning) instead of list_orders, then cancels it",
         "pass",
         "verification's result lists her order numbers; reading the newest one shows the laptop from this "
         "morning, which is what the caller described: the right order found, read back and cancelled",
         edit={"calls": [{"replace": 6, "call": call("get_order", order_number="KE-100777")}]}),
    Case(f"{CS}/C5-M1", "reads the membership first, then quotes and confirms the cancellation", "pass",
         "a harmless read of the caller's own membership",
         edit={"calls": [{"insert": 4, "call": call("get_membership")}]}),
    Case(f"{CS}/C2-M1", "quotes ZapDeals first as the caller asked (competitor_not_eligible), then BrightBuy",
         "pass",
         "orders: 'Always ask the tool, even when you expect an exclusion below: the tool decides'",
         edit={"calls": [{"insert": 5, "call": call("quote_price_match", order_number="KE-100850", sku="SKU-1021",
                                                     competitor="ZapDeals", competitor_price="259.99")}]},
         caller_says=("ZapDeals has these headphones for 259.99, and BrightBuy has them for 279.99.",)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_real_business_would_score_it_so(auditor, case):
    check(auditor, case)
