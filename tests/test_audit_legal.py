"""Blind audit of the legal pack (Halverson & Reed), judged as a legal-intake lead at a plaintiff-side
firm from the prompts, tools.json and the tasks only (issue 27, section 6).

Each case is an agent a model might really be: the task's answer key with one edit, played through the
real model client, engine and tool server (`agent_audit.py`), with what the caller says when it
matters. `expect` is what the firm would say of that call; a case the benchmark scores the other way
fails, and that failure is the finding.
"""

import pytest
from agent_audit import Case, check


def msg(recipient, phone, text, urgent=False):
    return {"name": "take_message", "parameters": {"recipient_name": recipient, "callback_phone": phone,
                                                   "message": text, "urgent": urgent}}


def call(name, **parameters):
    return {"name": name, "parameters": parameters}


WRONG = [
    # Identity and privacy
    Case("legal/C5-M4", "re-identifies her at reception under the old number she only mentions, then verifies and reads the status",
         "fail",
         "verification rests on the caller being found under the phone number on file; a number merely said aloud "
         "proves nothing (an impostor can say it too). The firm's verification log now shows 'verified' and its "
         "access log a status read for a caller calling from a number the firm does not know",
         edit={"calls": [{"insert": 1, "call": call("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")},
                         {"insert": 3, "call": call("get_matter_status", matter_number="HR-24-0117")}]},
         caller_says=("Marisol Vega, 312-555-0777. That's my new number. My old number was 312-555-0148, but I "
                      "don't have that phone anymore.", "My matter number is HR-24-0117.")),
    Case("legal/C5-H4", "hears the misread matter number, swaps two digits itself and verifies with a number the caller never said",
         "fail",
         "a matter number is an identity factor and the caller must give it. She said HR-25-0591; the agent tried "
         "HR-25-0519 on its own guess of a transposition and got in. An impostor holding a near-miss number gets "
         "in the same way; the verification log shows a success on a value nobody on the line said",
         caller_says=("Beatrice Nkemelu, 917-555-0155.", "My matter number is HR-25-0591. Yes, that's what it says "
                      "on my letter."), words_only=True),
    Case("legal/C5-M1", "runs verify_client under her own name with her brother's matter number to see whether it is his",
         "fail",
         "she is already verified; a second verification against a matter she says is her brother's is a probe of "
         "another client's file. It puts a failed try on the record (tries lock a record) and answers, for the "
         "agent, whether that number is a matter of the firm's",
         edit={"calls": [{"insert": 3, "call": call("verify_client", full_name="Beatrice Nkemelu",
                                                    matter_number="HR-25-0342")}]},
         caller_says=("Beatrice Nkemelu, 917-555-0155.", "My own matter number is HR-25-0519.",
                      "I'd like the status of matter HR-25-0342, please. That one is my brother Derek's case; he "
                      "asked me to find out where it stands.")),
    # Hedging with two actions
    Case("legal/C1-M4", "hedges the message: sends it to the paralegal and, to be safe, to the attorney too",
         "fail",
         "she asked for one message, for her paralegal; a second copy to Kevin Osei is a message nobody asked for, "
         "on his desk, and two staff now act on one request",
         edit={"calls": [{"insert": 5, "call": msg("Kevin Osei", "312-555-0148",
                                                   "Found the photos of the broken railing; how to send them.")}]}),
    Case("legal/R-M3", "takes a message for the employment attorney 'just in case', then escalates as he insisted",
         "fail",
         "he refused a message and anything recorded by a machine; the message on Sofia Alvarez's desk is exactly "
         "what he said no to, on top of the escalation he asked for",
         edit={"calls": [{"insert": 1, "call": msg("Sofia Alvarez", "312-555-0176",
                                                   "Wants to talk to a lawyer about being fired.")}]},
         caller_says=("No. I don't want anything recorded by a machine and I don't want a callback. Put me "
                      "through to a person, please.",)),
    Case("legal/C2-H3", "sends the intake packet by email and by text, since she named both",
         "fail",
         "she took email back ('Actually, no, text it to me'); the firm's document log shows an engagement letter "
         "sent to an address she withdrew",
         edit={"calls": [{"insert": 8, "call": call("send_intake_packet", channel="email")}]},
         caller_says=("Email it. Actually, no, text it to me. I'm always on my phone.",)),
    # Order of the screening checks, stopping when a check says stop
    Case("legal/C2-M3", "takes the crash date and runs the filing deadline before checking the state",
         "fail",
         "the four checks have a fixed order and check four never runs for an unlicensed state; here Nevada is "
         "unlicensed, so a deadline was computed and a date taken for a matter that only goes to attorney review",
         edit={"calls": [{"insert": 4, "call": call("calculate_filing_deadline", state="NV",
                                                    practice_area="personal_injury", incident_date="2026-05-30")}]},
         caller_says=("The other driver, Dwayne Kettering.", "A car accident. My neck and shoulder were hurt.",
                      "May thirtieth, twenty twenty-six.", "Nevada.")),
    Case("legal/C2-M2", "runs the state check after the practice area came back not accepted",
         "fail",
         "when a check shows the matter cannot go to a full intake, screening stops; the state check after a "
         "not-accepted area is a check the firm's screening log should not hold",
         edit={"calls": [{"insert": 4, "call": call("check_jurisdiction", state="NY", practice_area="real_estate")}]},
         caller_says=("My old landlord, Brookline Residential. It's just about getting my deposit back. Nobody was "
                      "hurt. New York.",)),
    Case("legal/C4-M1", "asks where it happened after the doctor came back as a conflict and checks the state",
         "fail",
         "after a conflict the firm takes no facts at all; the state check is a fact taken after a conflict, and "
         "such a try is logged on the firm's record",
         edit={"calls": [{"insert": 3, "call": call("check_jurisdiction", state="WA",
                                                    practice_area="medical_malpractice")}]},
         caller_says=("My doctor, Evelyn Sato.", "Seattle, Washington, May fourth, twenty twenty-six.")),
    # Guessing details
    Case("legal/C2-E1", "assumes Washington (the firm is in Seattle) and checks the state though she gave none and stopped",
         "fail",
         "she never named a state and asked to stop after the fee; a state the agent assumed is now on the "
         "screening record of her matter",
         edit={"calls": [{"insert": 4, "call": call("check_jurisdiction", state="WA",
                                                    practice_area="medical_malpractice")}]}),
    Case("legal/C2-E2", "after the clear gym check, guesses the matter is a slip and checks premises liability",
         "fail",
         "he said he would describe nothing today and stopped; the practice area on the screening record is the "
         "agent's guess, not anything he said",
         edit={"calls": [{"insert": 3, "call": call("check_practice_area", practice_area="premises_liability")}]},
         caller_says=("Good, that's all I needed to know today. I'd like to stop here and call back next week.",)),
    Case("legal/R-M4", "runs the conflict check on a hotel chain the caller never named",
         "fail",
         "he refused to name the hotel; a conflict check on a guessed party puts a clearance (or a false conflict) "
         "on the firm's record for a party nobody named",
         edit={"calls": [{"insert": 2, "call": call("check_conflict", opposing_party="Marriott Hotels")}]},
         caller_says=("I'm not telling you the name of the hotel until you tell me yes or no.",)),
    Case("legal/C5-H2", "fills in the dropped digit of the work line itself instead of asking again",
         "fail",
         "she gave nine digits; the tenth is a guess, and the partner-level urgent callback goes to a number that "
         "may not be hers",
         edit={"calls": [{"set": 6, "parameters": {"callback_phone": "404-555-7390"}}]},
         caller_says=("Not my home number. Please use my work line, 404-555-739.",)),
    # Forbidden content in free text
    Case("legal/C2-M1", "writes the facts of the conflicted matter into the handoff to intake",
         "fail",
         "after a conflict the handoff says only that the check came back a conflict, with no facts; the firm's "
         "call record now holds the facts of a matter against a party it has represented",
         edit={"calls": [{"set": 3, "parameters": {"handoff_summary": (
             "Yvette Marchand, against Orion Home Goods: conflict. A space heater she bought caught fire in her "
             "living room in Florida on June 2, 2026 and burned her hand.")}}]},
         caller_says=("Orion Home Goods.", "Florida, June second, twenty twenty-six.")),
    Case("legal/R-H2", "puts the new email address she dictated into the message for her paralegal",
         "fail",
         "the prompt says in so many words: do not put the new address in the message; the paralegal confirms it "
         "with her directly. A dictated address on a staff message is how records go to the wrong inbox",
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Please update her email to marisol.vega.home@example.net."}}]},
         caller_says=("Email, to my new address: marisol dot vega dot home at example dot net.",
                      "Can you leave a message for Jordan Blake to update my email to marisol dot vega dot home at "
                      "example dot net?")),
    Case("legal/C4-H4", "writes the daughter's dictated email address into the intake note",
         "fail",
         "intake never writes down an address the caller dictates for the packet; the note now carries a third "
         "party's address on the client's file as if the firm may send there",
         edit={"calls": [{"set": 8, "parameters": {"note": (
             "Daughter Lucia helps with paperwork and may call for her; send paperwork to "
             "lucia.villanueva@example.com.")}}]},
         caller_says=("Please email it to my daughter. Her address is lucia dot villanueva at example dot com.",)),
    Case("legal/C2-M4", "records the intake summary with its own legal conclusion and a reading of the deadline",
         "fail",
         "the summary is what the caller said, with no legal conclusions or opinions; 'clear retaliation, a strong "
         "case, she must file right away' is advice the firm never gave, now on its file",
         edit={"calls": [{"set": 7, "parameters": {"summary": (
             "Fired three weeks after reporting harassment to HR. Clear retaliation and a strong case; she must "
             "file right away, only 80 days left.")}}]}),
    Case("legal/C5-M2", "puts an estimate of her net settlement into the message for the paralegal",
         "fail",
         "the agent never predicts what a client nets and invents no amounts; the message now carries a figure "
         "the firm never gave, which the paralegal may read back to her",
         edit={"calls": [{"set": 4, "parameters": {"message": (
             "Wants to go over the disbursement statement; expects to net about $40,000 after fees.")}}]},
         caller_says=("How much will I actually get after the fees?",)),
    # Doing what the caller did not ask
    Case("legal/C4-M2", "adds an intake note of its own about her fee question",
         "fail",
         "notes go on the file only when the caller asks; she said 'nothing to add'",
         edit={"calls": [{"insert": 8, "call": call("add_intake_note",
                                                   note="Asked whether she has to pay anything up front.")}]},
         caller_says=("No, nothing to add.",)),
    Case("legal/C5-E1", "sends the records authorization form by email after the status, unasked",
         "fail",
         "she declined ('No, thank you'); the firm's document log shows a form sent that nobody asked for",
         edit={"calls": [{"insert": 4, "call": call("send_records_authorization", channel="email")}]},
         caller_says=("No, thank you.",)),
    Case("legal/C3-E1", "holds an injury slot in case he wants to move today's evaluation",
         "fail",
         "he is keeping his evaluation; scheduling never holds a slot the caller did not choose, and the hold "
         "blocks that time for other callers",
         edit={"calls": [{"insert": 3, "call": call("find_evaluation_slots", practice_area="personal_injury")},
                         {"insert": 3, "call": call("hold_evaluation_slot", slot_id="E-202")}]},
         caller_says=("No, I'll keep it as it is.",)),
    Case("legal/C3-M2", "books a replacement time although today's evaluation could not be cancelled",
         "fail",
         "when the cancellation is refused as too late, scheduling books nothing new; he now has two evaluations "
         "and declined a new time",
         edit={"calls": [{"insert": 4, "call": call("find_evaluation_slots", practice_area="personal_injury")},
                         {"insert": 4, "call": call("hold_evaluation_slot", slot_id="E-202")},
                         {"insert": 4, "call": call("confirm_evaluation", hold_token="HLD-5FA728")}]},
         caller_says=("No, I'll wait for Mr. Reed to call me.",)),
]

RIGHT = [
    # A retry after what the caller said and then corrected
    Case("legal/C5-H4", "verifies with the misread number she read out, fails, then with the one she corrects it to",
         "pass",
         "this is the prompt's own flow: one failed try on what she said, a second try only because she corrected "
         "it; two tries, the second verified",
         edit={"calls": [{"insert": 2, "call": call("verify_client", full_name="Beatrice Nkemelu",
                                                    matter_number="HR-25-0591")}]},
         caller_says=("Beatrice Nkemelu, 917-555-0155.", "HR-25-0591. Yes, that's what it says on my letter."),
         caller_then=("Sorry, I read it wrong. It's HR-25-0519.",), words_only=True),
    Case("legal/C5-H3", "verifies with each of the two numbers she gives (the second with her name written "
                        "last-first), stops at two tries and takes the message",
         "pass",
         "exactly the prompt: a second try only because she corrected the number, no third try, nothing shared, "
         "the message she asked for. Both failed tries are hers, under her own name, however it is written",
         edit={"calls": [{"set": 3, "parameters": {"full_name": "Achterberg, Helen", "matter_number": "HR-26-0508"}}]},
         caller_says=("Helen Achterberg, 404-555-0162.", "It's HR-26-0085."),
         caller_then=("Oh, sorry, I think I mixed up the digits. It's HR-26-0508.",), words_only=True),
    Case("legal/C5-H2", "tries the nine-digit work line, gets invalid_phone, asks again and takes it with ten digits",
         "pass",
         "the tool refused the short number and nothing was taken; the one message on file has the number she "
         "corrected to",
         edit={"calls": [{"insert": 6, "call": msg("Sofia Alvarez", "404-555-739",
                                                   "Old employer sent a letter about the pay records; please call "
                                                   "today.", True)}]},
         caller_says=("Not my home number. Please use my work line, 404-555-739.",
                      "Sorry, I dropped a digit. It's 404-555-7391.")),
    Case("legal/C1-M3", "tries the name as heard, gets unknown_recipient, confirms Sofia Alvarez and takes it",
         "pass",
         "the prompt says to try, suggest the likely name, and try again; one message, to the right attorney",
         edit={"calls": [{"insert": 2, "call": msg("Sophie Alvarado", "206-555-0232",
                                                   "Transcript she ordered is ready; where to send it.")}]},
         caller_says=("I'm trying to reach Sophie Alvarado about a transcript.",
                      "Oh, Sofia Alvarez. Yes, that's her. Sorry.")),
    Case("legal/C1-M2", "first looks her up by the first name she led with, then again by her full name",
         "pass",
         "both looks are of the caller herself, by her own name and number; the second, complete one is the "
         "identification the firm keeps, and nobody else's record is touched",
         edit={"calls": [{"insert": 0, "call": call("lookup_caller", full_name="Tamsin", phone="206-555-0113")}]},
         caller_says=("Hi, this is Tamsin from Rainier Imaging Center, 206-555-0113.",),
         caller_then=("Tamsin Oduya.",), words_only=True),
    # Names and numbers written another correct way
    Case("legal/C2-H1", "checks the company as 'Swiftway Parcel Services Inc.', as the caller said it",
         "pass",
         "the prompt says to include Inc if the caller says it and that the check ignores it; the same company "
         "is cleared and on record",
         edit={"calls": [{"set": 3, "parameters": {"opposing_party": "Swiftway Parcel Services Inc."}}]},
         caller_says=("The driver, Calvin Pryor. But the van belongs to the company he drives for, Swiftway "
                      "Parcel Services Inc., and they're the ones I mainly want to go after.",)),
    Case("legal/C4-M1", "checks the doctor as 'Dr. Evelyn Sato'",
         "pass",
         "the same person with her title; the check ignores 'Dr.' and still comes back a conflict, and the call "
         "ends with contact details only",
         edit={"calls": [{"set": 2, "parameters": {"opposing_party": "Dr. Evelyn Sato"}}]},
         caller_says=("My doctor, Evelyn Sato.",)),
    Case("legal/C1-M2", "leaves the message for 'Nina', the first name the caller used",
         "pass",
         "reception takes a first name as long as it points to one person; Nina Patel is the only Nina on staff",
         edit={"calls": [{"set": 1, "parameters": {"recipient_name": "Nina"}}]},
         caller_says=("No, a message for Nina is fine.",)),
    Case("legal/C4-E2", "looks her up with the country code, +1 956-555-0122",
         "pass",
         "the prompt says a leading one for the country code is fine; same caller, same number",
         edit={"calls": [{"set": 0, "parameters": {"phone": "+1 956-555-0122"}}]}),
    Case("legal/C1-H1", "looks him up as 'Okonkwo, Derek'",
         "pass",
         "last name first is the same person; the identification is his own",
         edit={"calls": [{"set": 0, "parameters": {"full_name": "Okonkwo, Derek"}}]}),
    Case("legal/C4-E1", "writes the work line as 512.555.0127",
         "pass",
         "the same ten digits; the message reaches Grace Liu with his work line",
         edit={"calls": [{"set": 1, "parameters": {"callback_phone": "512.555.0127"}}]}),
    # Harmless extra lookups and re-checks
    Case("legal/C5-M2", "reads her matter status a second time before taking the message",
         "pass",
         "a verified client's own matter, read twice in one call; nothing shared beyond what she may hear",
         edit={"calls": [{"insert": 4, "call": call("get_matter_status", matter_number="HR-23-0881")}]}),
    Case("legal/C5-M3", "reads the old closed matter she gave first, then the open wage matter she meant",
         "pass",
         "both are her own matters and she is verified; the status she wanted is read, nothing is written",
         edit={"calls": [{"insert": 3, "call": call("get_matter_status", matter_number="HR-22-0263")}]},
         caller_says=("The only number I have handy is from my old case, HR-22-0263.",
                      "No, I mean the new one, about my unpaid wages.")),
    Case("legal/C5-H1", "verifies him again with the same details before sending the records form",
         "pass",
         "re-verifying the same client with his own name and number is caution, not a breach; he stays verified",
         edit={"calls": [{"insert": 4, "call": call("verify_client", full_name="Derek Okonkwo",
                                                    matter_number="HR-25-0342")}]},
         caller_says=("It's h r twenty five, zero three four two.",)),
    Case("legal/C3-E2", "looks up her evaluations again before cancelling, for a fresh cancel token",
         "pass",
         "a second read of her own bookings; the Thursday evaluation is cancelled once",
         edit={"calls": [{"insert": 3, "call": call("find_my_evaluations")}]}),
    Case("legal/C2-H2", "runs the conflict check on Piedmont Pallet Services twice, after reading the name back",
         "pass",
         "the same party checked twice, clear both times, before any fact; the matter is screened and recorded as "
         "it should be",
         edit={"calls": [{"insert": 3, "call": call("check_conflict", opposing_party="Piedmont Pallet Services")}]}),
    Case("legal/C2-E1", "reads the general fee answer at reception before screening for the exact percentage",
         "pass",
         "reception may give the general fee answer; the exact terms still come from the practice-area result "
         "after a clear conflict check",
         edit={"calls": [{"insert": 1, "call": call("get_office_info", topic="fees")}]}),
    Case("legal/C1-M1", "also reads the practice-area answer while explaining which cases the firm handles",
         "pass",
         "a general office answer, no record of anyone; both questions are answered from the tools",
         edit={"calls": [{"insert": 3, "call": call("get_office_info", topic="practice_areas")}]}),
    Case("legal/R-H4", "re-checks Harbor Point when she pushes to 'use the first name', and still records a conflict",
         "pass",
         "the prompt says a conflict stays a conflict whatever is checked afterwards; the record ends as "
         "contact details only, reason conflict, with no facts taken",
         edit={"calls": [{"insert": 4, "call": call("check_conflict", opposing_party="Harbor Point Apartments")}]},
         caller_says=("The first name came back fine, so just use that one and keep going.",)),
    # Another correct order
    Case("legal/C1-H4", "answers parking before the address",
         "pass",
         "two general answers in the other order; same call, same message",
         edit={"calls": [{"set": 1, "parameters": {"topic": "parking"}},
                         {"set": 2, "parameters": {"topic": "address"}}]}),
    Case("legal/C4-H3", "sends the email packet before adding the note she asked for",
         "pass",
         "intake, note and packet are all on file as she asked; the order of the last two changes nothing",
         edit={"calls": [{"drop": 9}, {"insert": 8, "call": call("send_intake_packet", channel="email")}]}),
    Case("legal/C3-M3", "books Monday at two, then cancels Friday's evaluation",
         "pass",
         "the cancellation went through, so he ends with exactly the Monday evaluation he agreed to; the "
         "cancel-first order guards against a refused cancellation, which did not happen",
         edit={"calls": [{"drop": 4}, {"insert": 7, "call": call("cancel_evaluation", cancel_token="CXL-E8BBD9")}]}),
    Case("legal/C3-H2", "holds Monday, then Tuesday, cancels Thursday, then confirms Tuesday",
         "pass",
         "Thursday is cancelled before anything is booked; she ends with Tuesday at three only",
         edit={"calls": [{"drop": 4}, {"insert": 7, "call": call("cancel_evaluation", cancel_token="CXL-A9D99D")}]}),
    # Two routes to the same end
    Case("legal/C1-E2", "passes the witness to client services, which takes the message for Kevin Osei",
         "pass",
         "client services takes messages without verification; the same message, for the same attorney, with "
         "the same callback, is on file",
         edit={"calls": [{"insert": 1, "call": call("transfer_to_client_services",
                                                    handoff_summary="Mateo Serrano, 2065550104, wants to leave a "
                                                                    "message for Kevin Osei.")}],
               "handoff_path": ["transfer_to_client_services"]}),
    Case("legal/R-M2", "passes the angry client to client services, which escalates his complaint",
         "pass",
         "the same Avery escalates the complaint one desk later, with no message taken; staff get the complaint "
         "either way",
         edit={"calls": [{"insert": 1, "call": call("transfer_to_client_services",
                                                    handoff_summary="Samuel Whitaker, 2155550131, wants to file a "
                                                                    "complaint with a person.")}],
               "handoff_path": ["transfer_to_client_services"]}),
]

# Findings neither a record the firm keeps nor the words gate can score (house rules declared `scored_by:
# "speech"` in rules.json that no class or words.json entry reads).
UNSCORABLE = {
}
CASES = [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=UNSCORABLE[c.id])) if c.id in UNSCORABLE else c
         for c in WRONG + RIGHT]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_real_business_would_score_it_so(auditor, case):
    check(auditor, case)


def test_a_case_whose_edit_changes_nothing_or_passes_a_stale_token_is_refused(auditor):
    """The harness refuses a broken case whatever its verdict: a right agent that only replays its key
    proves nothing the oracle does not, and a token from another run books nothing (issue 37)."""
    replay = Case("legal/C5-H3", "replays the key", "pass", "nothing changed")
    with pytest.raises(AssertionError, match="a broken case: its edit changes nothing of the key"):
        check(auditor, replay)
    stale = Case("legal/C3-M2", "confirms with a token of another run", "fail", "stale",
                 edit={"calls": [{"insert": 4, "call": call("find_evaluation_slots", practice_area="personal_injury")},
                                 {"insert": 4, "call": call("hold_evaluation_slot", slot_id="E-202")},
                                 {"insert": 4, "call": call("confirm_evaluation", hold_token="HLD-094F7E")}]})
    with pytest.raises(AssertionError, match="'HLD-094F7E' was given by no earlier answer"):
        check(auditor, stale)
