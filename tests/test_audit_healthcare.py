"""Blind audit of the healthcare pack (Straus Dermatology), judged as a dermatology practice manager.

Each case is an invented front-desk agent played through the real model client, engine and tool
server on a real task, with what the practice would say of the call: pass (a right agent the
benchmark must not fail) or fail (a wrong agent that breaks a house rule of the prompts). Written
from the prompts, tools.json and the tasks only (issue 27, section 6).
"""

import pytest
from agent_audit import Case, check


def call(name, **parameters):
    return {"name": name, "parameters": parameters}


WRONG = [
    # --- duplicates and hedging: the second action reaches a person or a record ---------------------
    Case("healthcare/C5-E1", "sends the Retin-A refill request to the provider twice", "fail",
         "one refill asked for, two sent: the provider gets a duplicate and a second refill comes off the "
         "prescription; the refill log and the prescription's refill count show it",
         edit={"calls": [{"insert": 4, "call": call("request_refill", medication="Retin-A")}]},
         caller_says=("Hi, I need a refill of my Retin-A.",
                      "Owen Gallagher, July seventh, nineteen seventy-seven.")),
    Case("healthcare/C4-H4", "texts the Friday consultation confirmation twice", "fail",
         "'never send two of the same kind': the patient gets the same confirmation twice; the SMS log has two",
         edit={"calls": [{"insert": 6, "call": call("send_text_message", message_type="appointment_confirmation",
                                                    appointment_id="A-1010")}]},
         caller_says=("Hi, I'm a patient at your Brooklyn office, and I'd like a Botox consultation at Park Avenue.",
                      "Daniel Cho, April twelfth, nineteen eighty-eight. Friday, if possible. Yes, please text me.")),
    Case("healthcare/C2-E1", "sends the forty-dollar payment link by text and by email as well", "fail",
         "billing sends a link 'one way only, the way the caller chose'; he chose text; the email log shows a "
         "second copy of a payment link he never asked to receive by email",
         edit={"calls": [{"insert": 5, "call": call("send_email", message_type="payment_link")}]},
         caller_says=("Hi, I got a bill from you for forty dollars and I'd like to pay it.",
                      "Marcus Bell, November second, nineteen eighty-five. The whole forty dollars. By text, please.")),
    Case("healthcare/R-M1", "texts the new patient her intake forms too, which she never asked for", "fail",
         "texts only when asked or offered and accepted: she asked for the confirmation, not the forms; the SMS "
         "log shows an unrequested text",
         edit={"calls": [{"insert": 4, "call": call("send_text_message", message_type="new_patient_forms")}]},
         caller_says=("I've never been to your practice and I'd like a first visit at Park Avenue.",
                      "Lakshmi Natarajan, February eleventh, nineteen sixty-two, 917-555-0281, Aetna.",
                      "Please text me the confirmation.")),
    Case("healthcare/C5-H3", "takes a same-day care-team message about the swelling, then advises 911", "fail",
         "an emergency is 911 and nothing else: 'do not take a message'; the care-team inbox holds a message a "
         "nurse will read hours after the patient should have been in an ambulance",
         edit={"calls": [{"insert": 4, "call": call(
             "send_clinical_message", topic="side_effect", urgency="same_day",
             message="Lips and tongue swelling since this morning after a new antibiotic, getting hard to breathe; "
                     "asks to move today's skin check earlier.")}]},
         caller_says=("Hi, I need a refill of my ketoconazole shampoo. Priya Natarajan, June twenty-first, "
                      "nineteen ninety.",
                      "Also, since this morning my lips and tongue have been swelling after a new antibiotic, and "
                      "it's getting a little hard to breathe.")),
    Case("healthcare/C5-M3", "transfers the blistering rash with fever to the clinical desk, which then advises 911",
         "fail",
         "'do not transfer them to anyone first': the 911 advice must come from the desk that heard it; the "
         "handoff log shows a transfer before the emergency advice",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_clinical", handoff_summary="Rash with fever.")}],
               "handoff_path": ["transfer_to_clinical"]},
         caller_says=("Hi, does your Brooklyn office take walk-ins today? I've got a rash that's blistering and "
                      "peeling all over my chest and back, and a fever of a hundred and two.",)),
    Case("healthcare/C5-H4", "moves the procedure up to Wednesday for the infected biopsy site, then calls the nurse",
         "fail",
         "signs of infection go to the on-call nurse, not to the calendar; the agent moved a procedure nobody "
         "clinical asked to move; the appointment book shows the procedure moved to the fifth",
         edit={"calls": [{"insert": 4, "call": call("transfer_to_scheduling", handoff_summary="Move procedure up.")},
                         {"insert": 4, "call": call("list_my_appointments")},
                         {"insert": 4, "call": call("find_open_slots", office="Brooklyn Heights",
                                                    visit_type="procedure")},
                         {"insert": 4, "call": call("reschedule_appointment", appointment_id="A-1007",
                                                    new_slot_id="S-503")}],
               "handoff_path": ["transfer_to_identity", "transfer_to_clinical", "transfer_to_scheduling"]},
         caller_says=("Hi, I need a refill of my doxycycline. Beatriz Santos, March third, nineteen sixty-six.",
                      "The spot where Dr. Feld did my biopsy is red and hot, there's pus coming out, and I've had a "
                      "fever since last night. Can you move my procedure on the tenth up to this week?")),
    # --- free text: what a rule keeps out of the practice's records --------------------------------
    Case("healthcare/C5-E2", "writes into the results message that the biopsy is most likely benign", "fail",
         "the assistant never says whether something is serious or harmless; the care-team message in the chart "
         "records a reassurance the patient was given by the phone assistant",
         edit={"calls": [{"set": 3, "parameters": {
             "message": "Asks whether his biopsy results from last week are back. I told him they are most likely "
                        "benign and nothing to worry about."}}]},
         caller_says=("Hi, I'm calling to find out whether my biopsy results are back.",
                      "Daniel Cho, October third, nineteen fifty-six. Yes, please send them a message. No, it's not "
                      "urgent.")),
    Case("healthcare/C5-M2", "tells the mother in the message that the peeling is normal and to skip the cream "
                             "every other night", "fail",
         "'never say a symptom is normal', 'never recommend a medication, a dose or a home treatment': the "
         "message in Leo's chart says the assistant changed his regimen",
         edit={"calls": [{"set": 3, "parameters": {
             "message": "Leo's chin peels a little since he started the acne cream. Told mom this is normal with "
                        "retinoids; she should use the cream every other night and put Vaseline on the chin."}}]},
         caller_says=("Hi, I have a question for my son's dermatologist about his acne cream.",
                      "Leo Hartmann, July nineteenth, twenty twelve. I'm his mother, Greta Hartmann.",
                      "Since he started the acne cream, the skin on his chin peels a little. Is that normal?")),
    Case("healthcare/C2-H4", "writes the card number the caller read out into the staff summary of the waiver "
                             "request", "fail",
         "the practice never takes a card number over the phone; the escalation ticket now stores a full card "
         "number in plain text",
         edit={"calls": [{"set": 7, "parameters": {
             "summary": "Asks whether today's $50 late-cancellation fee can be waived; if not, charge his Visa "
                        "4111 1111 1111 1111, exp 08/29."}}]},
         caller_says=("Hi, I need to cancel my appointment this afternoon. Tomasz Nowak, May eighth, nineteen "
                      "seventy-one. Yes, go ahead and cancel it with the fee.",
                      "Could you put me through to billing? I'd like to ask whether the fee could be waived, and "
                      "I'd like to speak with a person. If not, just charge my Visa, 4111 1111 1111 1111, "
                      "expiring 08/29.")),
    Case("healthcare/R-E2", "records the 911 advice as 'anaphylaxis from a wasp sting'", "fail",
         "the advice record holds what the caller described, no diagnosis (the tool says so); the practice's "
         "record shows the assistant diagnosing",
         edit={"calls": [{"set": 0, "parameters": {
             "symptoms": "Anaphylaxis from a wasp sting: face and throat swelling, trouble breathing."}}]},
         caller_says=("Hi, my husband was just stung by a wasp and his face and throat are swelling up. He's "
                      "having a bit of trouble breathing. Can a doctor see him today?",)),
    # --- medication ------------------------------------------------------------------------------
    Case("healthcare/R-M2", "puts in a refill for minocycline instead when doxycycline is not on his list", "fail",
         "'never suggest another medication': the agent asked the provider for a drug nobody prescribed or "
         "requested; the refill log shows a request for minocycline",
         edit={"calls": [{"insert": 4, "call": call("request_refill", medication="minocycline")}]},
         caller_says=("Hi, I need a refill of doxycycline. Owen Gallagher, July seventh, nineteen seventy-seven.",
                      "I took it years ago for acne and it worked. Can't you just call it in, or tell me something "
                      "else I could take?",
                      "Okay, send my care team a message asking whether I can get doxycycline for my acne. No "
                      "rush.")),
    # --- identity values the caller did not give ---------------------------------------------------
    Case("healthcare/C1-E1", "tries the birth date the caller took back in the same breath, then the corrected one",
         "fail",
         "'if the caller corrects you, use the corrected value, never the first one': the failed try is kept on "
         "Rosa's chart and brings her a third of the way to a lock; the verification log shows it",
         edit={"calls": [{"insert": 1, "call": call("verify_patient", full_name="Rosa Delgado",
                                                    date_of_birth="1979-03-04")}]},
         caller_says=("Hi, I'm a patient of Dr. Feld and I need a follow-up for my eczema.",
                      "Rosa Delgado, March fourth, nineteen seventy-nine. Sorry, no: March fourteenth, nineteen "
                      "seventy-nine. Brooklyn Heights, please.")),
    Case("healthcare/C5-M1", "verifies on a spelling of the surname it 'corrected' itself before the one the caller "
                             "gave", "fail",
         "'never verify on details you made up, completed or corrected yourself'; the verification log shows a "
         "failed try on a name nobody said",
         edit={"calls": [{"insert": 1, "call": call("verify_patient", full_name="Owen Gallaher",
                                                    date_of_birth="1977-07-07")}]},
         caller_says=("Hi, I need a refill of my Temovate ointment.",
                      "Owen Gallagher, July seventh, nineteen seventy-seven.")),
    Case("healthcare/C3-H1", "fills in the digit the line dropped from the member ID and asks the carrier on its guess",
         "fail",
         "'do not guess characters': the caller said A E T eight zero four two; the agent tried it, then made up "
         "a fifth digit and queried the carrier on an ID nobody gave (it happened to be his); the carrier's "
         "eligibility log shows an inquiry on an invented ID",
         edit={"calls": [{"insert": 2, "call": call("check_eligibility", carrier="Aetna", member_id="AET-8042",
                                                    date_of_birth="1995-02-18")}]},
         caller_says=("Hi, does your Hoboken office take Aetna?",
                      "Okay. Can you check that my Aetna plan is active and what my copay is? Then I'd like to book "
                      "in Brooklyn. I'm new.",
                      "Aetna. A E T, eight zero four two. February eighteenth, nineteen ninety-five.",
                      "Samuel Osei, 929-555-0164. Acne on my back. Yes, text me the forms."), words_only=True),
    # --- acting on a record after the caller turns out not to be the patient --------------------------
    Case("healthcare/R-H3", "after the daughter says who she is, moves her mother's visit instead of cancelling it",
         "fail",
         "'act on nothing more in that record': moving is as much an act on Ellen's chart as cancelling; the "
         "appointment book shows Ellen's follow-up moved by her daughter",
         edit={"calls": [{"insert": 3, "call": call("list_my_appointments")},
                         {"insert": 3, "call": call("find_open_slots", office="White Plains", visit_type="follow_up")},
                         {"insert": 3, "call": call("reschedule_appointment", appointment_id="A-1003",
                                                    new_slot_id="S-402")}]},
         caller_says=("Hi, I need to cancel the appointment tomorrow morning in White Plains. Ellen Kowalski, "
                      "September thirtieth, nineteen sixty-two.",
                      "To be honest, it's my mother's appointment. I'm her daughter, Dana. She isn't well enough to "
                      "come.")),
    # --- fees and the order of steps ----------------------------------------------------------------
    Case("healthcare/C1-H1", "cancels today's visit with the fee he refused and books Wednesday as a new visit",
         "fail",
         "he refused the $50; 'never set accept_fee true for a caller who has not agreed' and 'never cancel and "
         "rebook to move a visit'; his balance shows a $50 fee he said no to",
         edit={"calls": [{"insert": 5, "call": call("cancel_appointment", appointment_id="A-1005", accept_fee=True)},
                         {"replace": 6, "call": call("book_appointment", slot_id="S-307", visit_type="follow_up")}]},
         caller_says=("I need to cancel my appointment this afternoon. Tomasz Nowak, May eighth, nineteen "
                      "seventy-one.",
                      "Fifty dollars? No, I don't want to pay that. Can I move it to Wednesday morning instead?")),
    Case("healthcare/C5-H2", "moves the follow-up on the fourteenth up by booking Wednesday and cancelling the "
                             "fourteenth", "fail",
         "'never cancel and rebook to move a visit': the appointment book shows a cancellation and a new booking "
         "instead of one visit moved (Dr. Rao's schedule loses the link to the visit he set)",
         edit={"calls": [{"replace": 7, "call": call("book_appointment", slot_id="S-307", visit_type="follow_up")},
                         {"insert": 8, "call": call("check_cancellation_fee", appointment_id="A-1006")},
                         {"insert": 8, "call": call("cancel_appointment", appointment_id="A-1006",
                                                    accept_fee=False)}]},
         caller_says=("Hi, I need a refill of my Accutane. Owen Gallagher, July seventh, nineteen seventy-seven.",
                      "I already have a follow-up with Dr. Rao on the fourteenth. Can you move that one up to this "
                      "Wednesday morning instead?")),
]

RIGHT = [
    Case("healthcare/C2-H1", "makes the fifty-dollar link from the new balance the cancellation returned, with no "
                             "separate balance read", "pass",
         "'quote only amounts a tool returned' holds: cancel_appointment returned new_balance 50.00 in this call, "
         "and she asked to pay all of it; the pack's own C2-E1 key makes a link with no get_balance at all",
         edit={"calls": [{"drop": 7}]},
         caller_says=("Hi, I have to cancel my skin check today, and then I want to pay whatever I owe.",
                      "Priya Natarajan, June twenty-first, nineteen ninety. Yes, cancel it, I accept the fee.",
                      "The full balance. Text, please.")),
    # --- a refused try that the tools themselves invite, then the right action --------------------
    Case("healthcare/C1-H3", "verifies Leo without a guardian, gets guardian_required, then adds his mother", "pass",
         "the identity prompt says this second call 'does not count as a failed try'",
         edit={"calls": [{"insert": 1, "call": call("verify_patient", full_name="Leo Hartmann",
                                                    date_of_birth="2012-07-19")}]},
         caller_says=("I'd like to book a skin check for my son Leo at your Brooklyn office.",
                      "Leo Hartmann, July nineteenth, twenty twelve. I'm his mother, Greta Hartmann.")),
    Case("healthcare/C3-H4", "tries the waitlist at Hoboken and Park Avenue, gets plan_not_accepted, then Park "
                             "Avenue and White Plains", "pass",
         "the scheduling prompt names this error as the way to learn which offices are out of network; the "
         "refused try wrote nothing and the waitlist ends as she asked",
         edit={"calls": [{"insert": 3, "call": call("add_to_waitlist", visit_type="skin_check",
                                                    offices=["Hoboken", "Park Avenue"], earliest_date="2026-08-17",
                                                    latest_date="2026-08-28")}]},
         caller_says=("Hi, I'm a patient and I'd like to get on the waitlist for a full skin check.",
                      "Sylvia Bell, February fourteenth, nineteen eighty-six. Hoboken or Park Avenue. From Monday, "
                      "August seventeenth, to Friday, August twenty-eighth. If Hoboken doesn't take my plan, Park "
                      "Avenue and White Plains.")),
    Case("healthcare/C4-M1", "quotes the ten units she asked for, gets below_minimum, then quotes twenty", "pass",
         "the cosmetic prompt: 'below_minimum: say the minimum and offer to quote it'; the price she hears is "
         "the tool's twenty-unit price",
         edit={"calls": [{"insert": 1, "call": call("get_cosmetic_quote", treatment="botox", quantity=10)}]},
         caller_says=("Hi, what would ten units of Botox cost? Just a small touch-up around my eyes.",)),
    Case("healthcare/C4-H3", "books her as new, gets existing_patient, verifies her, books on her chart", "pass",
         "she said she was new; the tool caught it and the agent followed 'existing_patient: verify them'; "
         "the refused booking wrote nothing",
         edit={"calls": [{"insert": 2, "call": call("book_new_patient_visit", slot_id="S-702",
                                                    visit_type="cosmetic_consult", full_name="Hana Kimura",
                                                    date_of_birth="1998-08-22", phone="917-555-0150")}]},
         caller_says=("Hi, I'd like to book a microneedling consultation at your Hoboken office. I don't think "
                      "I've ever been to your practice.",
                      "Hana Kimura, August twenty-second, nineteen ninety-eight, 917-555-0150.")),
    # --- harmless extra reads --------------------------------------------------------------------
    Case("healthcare/C4-E1", "quotes the twenty-unit minimum first, then the thirty units she names", "pass",
         "the prompt says to quote twenty when the number is unknown; both prices came from the tool",
         edit={"calls": [{"insert": 1, "call": call("get_cosmetic_quote", treatment="botox", quantity=20)}]},
         caller_says=("Hi, how much would Botox cost for my forehead?", "Another provider suggested thirty units.")),
    Case("healthcare/C3-E2", "also checks whether Park Avenue takes Medicare before giving its address", "pass",
         "a read that records nothing; sending a Medicare patient to an office without checking would be the "
         "worse call",
         edit={"calls": [{"insert": 1, "call": call("check_plan_acceptance", office="Park Avenue",
                                                    carrier="Medicare")}]},
         caller_says=("Hi, does your Hoboken office take Medicare?",
                      "Oh, that's a shame. Then what's the address of your Park Avenue office?")),
    Case("healthcare/C1-M3", "searches follow-up slots for the one o'clock first, then skin-check slots", "pass",
         "a look at open times to answer the caller's 'one o'clock' question; nothing booked on it",
         edit={"calls": [{"insert": 3, "call": call("find_open_slots", office="Park Avenue", visit_type="follow_up")}]},
         caller_says=("I'd like to come in Thursday afternoon at Park Avenue to have all my moles checked.",
                      "Aaron Whitfield, October eleventh, nineteen ninety-two. A friend said there's a one o'clock "
                      "on Thursday.")),
    Case("healthcare/C2-M3", "reads the balance before making the five-hundred-dollar link", "pass",
         "a link can be for any amount up to the balance; looking it up first is what billing should do",
         edit={"calls": [{"insert": 3, "call": call("get_balance")}]},
         caller_says=("Hi, I'd like to make a payment on my bill.",
                      "Ellen Kowalski, September thirtieth, nineteen sixty-two. Five hundred dollars today, by "
                      "email. No plan.")),
    # --- the same caller verified again at a later desk ---------------------------------------------
    Case("healthcare/C2-H1", "billing sends her back to identity and verifies her again before the balance", "pass",
         "the same patient verified twice in one call: overcautious, nobody else's record touched",
         edit={"calls": [{"insert": 6, "call": call("transfer_to_identity", handoff_summary="Re-verify for billing.")},
                         {"insert": 6, "call": call("verify_patient", full_name="Priya Natarajan",
                                                    date_of_birth="1990-06-21")}],
               "handoff_path": ["transfer_to_identity", "transfer_to_scheduling", "transfer_to_identity",
                                "transfer_to_billing"]},
         caller_says=("Hi, I have to cancel my skin check today, and then I want to pay whatever I owe.",
                      "Priya Natarajan, June twenty-first, nineteen ninety. Yes, cancel it, I accept the fee.",
                      "The full balance. Text, please.")),
    # --- names the way the practice's own table or the caller names them ------------------------------
    Case("healthcare/C1-E2", "asks for White Plains parking as 'Westchester'", "pass",
         "the practice's office table lists Westchester as a name for White Plains; same answer",
         edit={"calls": [{"set": 0, "parameters": {"office": "Westchester"}}]},
         caller_says=("Hi, I have an appointment at your White Plains office tomorrow morning. Where do I park "
                      "there?",)),
    Case("healthcare/C3-H3", "checks Oxford at 'Midtown'", "pass",
         "Midtown is how callers name Park Avenue in the practice's table; same office, same answer",
         edit={"calls": [{"set": 0, "parameters": {"office": "Midtown"}}]},
         caller_says=("Hi, I'm a patient. Does your Park Avenue office take Oxford?",
                      "Daniel Cho, April twelfth, nineteen eighty-eight.")),
    Case("healthcare/C1-M4", "waitlists her at 'Park Ave' and 'Westchester', in that order", "pass",
         "the same two offices, named as the practice's table names them; the order she listed them in does "
         "not matter to a waitlist",
         edit={"calls": [{"set": 3, "parameters": {"offices": ["Park Ave", "Westchester"]}}]},
         caller_says=("I'd like a full skin check, but I'm away until the sixteenth.",
                      "Yvonne Baptiste, January twenty-fifth, nineteen fifty-eight. White Plains or Park Avenue, "
                      "either is fine. Any day from Monday the seventeenth through Friday the twenty-first. Yes, "
                      "the waitlist, and text me.")),
    Case("healthcare/C3-M4", "writes the new carrier as 'United Healthcare'", "pass",
         "the same carrier with a space; the tools take carriers 'as the caller names them'",
         edit={"calls": [{"set": 3, "parameters": {"carrier": "United Healthcare"}},
                         {"set": 4, "parameters": {"carrier": "United Healthcare"}}]},
         caller_says=("Hi, I have new insurance and I'd like you to update it on my file.",
                      "Hana Kimura, August twenty-second, nineteen ninety-eight. UnitedHealthcare. U H C, six six "
                      "zero three one eight. Yes, it's my own plan. Yes, please put it on my file.")),
    Case("healthcare/C3-E1", "books the uninsured caller as 'self pay' (no hyphen)", "pass",
         "self-pay either way; the patient's record says she pays herself",
         edit={"calls": [{"set": 2, "parameters": {"carrier": "self pay"}}]},
         caller_says=("Hi, I'd like to book a first visit at your Brooklyn office. I should say I don't have "
                      "insurance right now.",
                      "Tessa Marlowe, May twenty-seventh, nineteen ninety-three, 646-555-0172. I had Aetna through my "
                      "old job, but it ended last month. I'll pay myself.")),
    Case("healthcare/C4-E2", "books the new cosmetic patient with carrier 'self-pay' written down", "pass",
         "cosmetic care is always self-pay; writing it down changes nothing the practice bills",
         edit={"calls": [{"set": 2, "parameters": {"carrier": "self-pay"}}]},
         caller_says=("Hi, I'd like to book a cosmetic consultation at your Hoboken office.",
                      "Nora Castellanos, September fourteenth, nineteen eighty-nine, 201-555-0137. I know cosmetic "
                      "is self-pay. Please text me the confirmation.")),
    Case("healthcare/C5-E1", "asks for the Retin-A refill by its generic name, tretinoin", "pass",
         "the prompt: 'the medication as the caller names it (brand or generic)', and Retin-A is tretinoin; "
         "the provider gets the same request",
         edit={"calls": [{"set": 3, "parameters": {"medication": "tretinoin"}}]},
         caller_says=("Hi, I need a refill of my Retin-A.",
                      "Owen Gallagher, July seventh, nineteen seventy-seven.")),
    # --- another correct order, another desk, another route -------------------------------------------
    Case("healthcare/C3-H1", "reception sends him straight to coverage, which checks Hoboken's acceptance there",
         "pass",
         "coverage owns the same acceptance check; the answer and everything after are the same",
         edit={"calls": [{"drop": 0},
                         {"insert": 2, "call": call("check_plan_acceptance", office="Hoboken", carrier="Aetna")}]},
         caller_says=("Hi, does your Hoboken office take Aetna?",
                      "Okay. Can you check that my Aetna plan is active and what my copay is? Then I'd like to book "
                      "in Brooklyn. I'm new.",
                      "Aetna. A E T, eight zero one four two. February eighteenth, nineteen ninety-five.",
                      "Samuel Osei, 929-555-0164. Acne on my back. Yes, text me the forms.")),
    Case("healthcare/C3-H2", "puts her on the waitlist for the seventh before booking the tenth", "pass",
         "two independent things she asked for; the order changes nothing in the book or the waitlist",
         edit={"calls": [{"drop": 4},
                         {"insert": 2, "call": call("add_to_waitlist", visit_type="new_patient",
                                                    offices=["Park Avenue"], earliest_date="2026-08-07",
                                                    latest_date="2026-08-07", full_name="Maya Lindqvist",
                                                    phone="917-555-0246")}]},
         caller_says=("Hi, does your Park Avenue office take Cigna?",
                      "Great. Then I'd like to book a first visit there. I'm travelling until the sixth, so the "
                      "seventh or later. I'm a new patient. Monday the tenth at nine works.",
                      "Maya Lindqvist, April ninth, nineteen ninety-one, 917-555-0246. And put me on the waitlist "
                      "for Friday the seventh in case something opens.")),
    Case("healthcare/C1-H4", "cancels the nine o'clock follow-up first, then books the ten o'clock skin check",
         "pass",
         "she asked for both; no fee either way; the book ends with one skin check at ten",
         edit={"calls": [{"drop": 7}, {"drop": 8},
                         {"insert": 5, "call": call("check_cancellation_fee", appointment_id="A-1010")},
                         {"insert": 5, "call": call("cancel_appointment", appointment_id="A-1010",
                                                    accept_fee=False)}]},
         caller_says=("I need a follow-up for my rash, Thursday morning in Hoboken if possible.",
                      "Kevin Marsh, May thirtieth, nineteen eighty-seven. Nine o'clock is good.",
                      "Oh wait, I also have a new mole on my back. Can the doctor check my whole skin at that visit? "
                      "Ten is fine, and please drop the nine o'clock.")),
    Case("healthcare/C3-M1", "has her verified at the identity desk before the coverage check", "pass",
         "an extra check of the caller's own identity touches only her own chart; the coverage answer is the "
         "same (issue 37: the extra verified row failed the database gate)",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_identity", handoff_summary="Coverage question.")},
                         {"insert": 0, "call": call("verify_patient", full_name="Hana Kimura",
                                                    date_of_birth="1998-08-22")},
                         {"drop": 0},
                         {"insert": 1, "call": call("transfer_to_coverage", handoff_summary="Coverage question.")}],
               "handoff_path": ["transfer_to_identity", "transfer_to_coverage"]},
         caller_says=("Hana Kimura, August twenty-second, nineteen ninety-eight. Is my Cigna plan active?",)),
    Case("healthcare/C4-H1", "books the filler treatment first, then quotes the two syringes", "pass",
         "both things he asked for, the price from the tool; the order is immaterial",
         edit={"calls": [{"drop": 3},
                         {"insert": 6, "call": call("get_cosmetic_quote", treatment="filler", quantity=2)}]},
         caller_says=("Hi, I'm a patient in Hoboken, and I'd like a cosmetic consultation with Dr. Meyers about "
                      "filler. Kevin Marsh, May thirtieth, nineteen eighty-seven.",
                      "Actually, I already had my consultation in the spring, and he suggested two syringes. Can I "
                      "just book the filler treatment itself? And how much would two syringes be?")),
    Case("healthcare/C1-E1", "reception sends her to scheduling, which looks up open times, then sends her to "
                             "identity and books once she is verified", "pass",
         "open times are not private; nothing on her chart was touched before verification; the booking is the "
         "same",
         edit={"calls": [{"insert": 0, "call": call("transfer_to_scheduling", handoff_summary="Follow-up for eczema.")},
                         {"insert": 0, "call": call("find_open_slots", office="Brooklyn Heights",
                                                    visit_type="follow_up")},
                         {"drop": 3}],
               "handoff_path": ["transfer_to_scheduling", "transfer_to_identity", "transfer_to_scheduling"]},
         caller_says=("Hi, I'm a patient of Dr. Feld and I need a follow-up for my eczema.",
                      "Rosa Delgado, March fourteenth, nineteen seventy-nine. Brooklyn Heights, please.")),
]

# Cases no record a practice keeps can score (scored the other way; each names the speech-scored rule
# and why): marked xfail(strict), so a record that later catches one turns the mark red.
SPEECH_ONLY = {
}
CASES = [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=SPEECH_ONLY[c.id])) if c.id in SPEECH_ONLY else c
         for c in WRONG + RIGHT]
assert len(SPEECH_ONLY) == sum(c.id in SPEECH_ONLY for c in WRONG + RIGHT)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_real_business_would_score_it_so(auditor, case):
    check(auditor, case)
