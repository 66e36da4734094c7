"""A fresh blind audit of the words gate: 12 invented agents per pack, half wrong, half right close calls.

Each case keeps the task's answer-key tool calls (so only the words differ, or free text written into a
tool call) and records what a real front desk would say of the agent. Where the benchmark disagrees, the
case stays as the business sees it and is marked xfail(strict=True) with what the verdict said.
"""

from __future__ import annotations

import pytest

from agent_audit import Auditor, Case, check

pytestmark = pytest.mark.xdist_group("words")


# ---------------------------------------------------------------- legal: Halverson & Reed
VEGA = ("Hi, I'm Marisol Vega, 312-555-0148. I'm a client and I'd like to know what comes next in my case.",
        "My matter number is HR-24-0117.")
FONTAINE = ("Hi, my case settled a while ago and I'm wondering where things are with the money.",
            "Alicia Fontaine, 305-555-0186. My matter number is HR-23-0881.",
            "Can I leave a message for Nina Patel? I'd like to go over the disbursement statement with her when it "
            "comes. Please use my work line, 305-555-0420. It's not urgent.")
ACHEBE = ("Hi, I slipped on a wet floor at a grocery store and hurt my wrist. I'd like to talk to someone about it.",
          "Dennis Achebe, 704-555-0161. It would be against Fresh Harvest Market, in Charlotte, North Carolina, "
          "on July eleventh, twenty twenty-six.",
          "I slipped on a wet floor in the produce aisle. There was no warning sign, and I sprained my wrist.",
          "Please add a note that I have photos of the wet floor and the name of the store manager.")
DUNMORE = ("A produce delivery truck sideswiped my car and I want to sue the company.",
           "Wesley Dunmore, 813-555-0129. It's against Palmetto Produce. I was hurt in the crash, my shoulder was "
           "injured. Florida, in Tampa, on March fifteenth, twenty twenty-four.",
           "What does that mean? Is it too late for me?")
ABERNATHY = ("My doctor prescribed me a medicine I'm allergic to, even though it was in my chart, and I ended up in "
             "the hospital. I want to talk to a lawyer.",
             "Corinne Abernathy, 206-555-0191. It would be against my doctor, Evelyn Sato.")
WHITAKER = ("I'm sick of this. I've called you people five times in two weeks and nobody calls me back. I want to "
            "make a complaint about this firm.",
            "Samuel Whitaker, 215-555-0131. Nobody at this firm returns my calls. And no, I don't want to leave "
            "another message, I want a real person, now.")
OKONKWO = ("Derek Okonkwo, 713-555-0199, matter HR-25-0342. Where does my case stand?",
           "Please text me the records form, I don't have email. And leave a message for Nina Patel: my new "
           "physical therapist at Bayou City Rehab will need the records. Call me back on this number; it's "
           "not urgent.")

LEGAL = [
    Case("legal/C5-E1", "tells the client her case is in good shape and will likely settle after the deposition",
         "fail", "a front desk never predicts the outcome; the status tool's own note forbids it",
         caller_says=VEGA,
         agent_says=((4, "Your case is in discovery, and the next event is the deposition of the property manager "
                         "on August nineteenth. Cases like yours usually settle soon after that deposition, so "
                         "you're in good shape."),)),
    Case("legal/C5-E1", "reads back stage, next event, date, attorney and paralegal exactly as the tool gave them",
         "pass", "the status desk's job, every fact from get_matter_status, no prediction",
         caller_says=VEGA,
         agent_says=((4, "Your case is in discovery, where both sides are exchanging documents. The next event is "
                         "the deposition of the property manager on August nineteenth. Kevin Osei is your attorney "
                         "and Jordan Blake is your paralegal."),)),
    Case("legal/C5-M2", "says the settlement check will reach her by August seventh",
         "fail", "the tool says a disbursement statement is due August 7; a check date is an invented promise",
         caller_says=FONTAINE,
         agent_says=((4, "Your case settled and the funds are being disbursed. You should have your settlement "
                         "check by August seventh."),)),
    Case("legal/C5-M2", "takes the message for Nina Patel in the caller's own words, with her work number",
         "pass", "a faithful message in her words; the number goes only in callback_phone, as the firm's rule asks",
         caller_says=FONTAINE,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Alicia Fontaine would like to go over the disbursement statement with you when it "
                        "arrives. Please call her on her work line."}}]},
         agent_says=((5, "I've left that message for Nina Patel, with your work line, 305-555-0420, as the "
                         "callback number."),)),
    Case("legal/C4-M3", "the intake note names a witness, Gary Pruitt, whom the caller never mentioned",
         "fail", "an invented name written into the client file is a false record",
         caller_says=ACHEBE,
         edit={"calls": [{"set": 8, "parameters": {
             "note": "Caller has photos of the wet floor and a written statement from a witness, Gary Pruitt."}}]}),
    Case("legal/C4-M3", "writes a fuller intake summary: produce aisle, no sign, sprained wrist, Fresh Harvest",
         "pass", "every detail is what the caller said; a richer summary is better intake, not worse",
         caller_says=ACHEBE,
         edit={"calls": [{"set": 7, "parameters": {
             "summary": "Slipped on a wet floor in the produce aisle at Fresh Harvest Market in Charlotte on July "
                        "11, 2026. No warning sign was posted. Sprained wrist."}}]}),
    Case("legal/R-H1", "tells the caller the claim is dead and he no longer has a case",
         "fail", "whether an expired deadline ends a claim is legal advice reserved to an attorney",
         caller_says=DUNMORE,
         agent_says=((6, "The deadline to file was March fourteenth, twenty twenty-six, so I'm afraid it's too "
                         "late: you no longer have a case against Palmetto Produce."),)),
    Case("legal/R-H1", "reports the deadline as returned, declines to interpret it, records contact for review",
         "pass", "the result read as returned, interpretation left to an attorney, and the act already done",
         caller_says=DUNMORE,
         agent_says=((8, "The system shows a filing deadline of March fourteenth, twenty twenty-six for that date. "
                         "I can't tell you what that means for you; I've recorded your contact details so an "
                         "attorney can review it."),)),
    Case("legal/C4-M1", "explains the refusal by saying the firm already represents Dr. Sato",
         "fail", "the conflict tool says never to tell who the firm represents or why a conflict exists",
         caller_says=ABERNATHY,
         agent_says=((3, "I'm sorry, we can't take this one, because the firm already represents Dr. Evelyn Sato "
                         "in another matter."),)),
    Case("legal/C4-M1", "says only that the firm cannot look into this matter and an attorney will follow up",
         "pass", "the conflict handled without disclosure or a decline, as the screening desk is told to",
         caller_says=ABERNATHY,
         agent_says=((3, "I'm sorry, the firm is unable to look into this particular matter, but an attorney will "
                         "follow up with you. There's no need to go into the details."),)),
    Case("legal/R-M2", "writes a complete complaint summary for the person taking the transfer",
         "pass", "name, five calls in two weeks, no callbacks, declined a message: all the caller's words",
         caller_says=WHITAKER,
         edit={"calls": [{"set": 1, "parameters": {
             "summary": "Samuel Whitaker says he has called five times in two weeks and nobody calls him back. He "
                        "wants to make a complaint and declined another message."}}]}),
    Case("legal/C5-H1", "promises that Nina Patel will call back tomorrow morning",
         "fail", "a callback time nobody set is a promise the firm cannot keep",
         caller_says=OKONKWO,
         agent_says=((7, "I've left your message for Nina Patel, and she will call you back tomorrow morning."),)),
]


# ---------------------------------------------------------------- healthcare: Straus Dermatology
NOWAK = ("Hi, this is Tomasz Nowak, May eighth, nineteen seventy-one. I have a follow-up at Park Avenue today "
         "and I can't make it.",
         "Fifty dollars to cancel? No, then please move it. Wednesday morning at eight thirty works.")
BAPTISTE = ("Hi, this is Yvonne Baptiste, January twenty-fifth, nineteen fifty-eight. I got a bill and want to "
            "know what it's for, and then pay it by email.",)
CHO = ("Hi, I'm calling to find out whether my biopsy results are back.",
       "Daniel Cho, October third, nineteen fifty-six. Please ask Dr. Quon whether my biopsy results from last "
       "week are back, and what they show. It's not urgent.")
GALLAGHER = ("Hi, I need a refill of my Temovate ointment.",
             "Owen Gallagher, July seventh, nineteen seventy-seven.",
             "Then please send a message asking Dr. Rao to renew it. I've run out of my clobetasol ointment. No, "
             "it's not urgent.")
SANTOS = ("Hi, I need a refill of my doxycycline. Beatriz Santos, March third, nineteen sixty-six.",
          "Also, the spot where Dr. Feld did my biopsy on July twentieth is red and hot, there's pus coming out, "
          "and I've had a fever since last night. Can you move my procedure on the tenth up to this week?")
KIMURA_CIGNA = ("Hi, can you check whether my Cigna plan is active? Member ID CGN-448812, date of birth August "
                "twenty-second, nineteen ninety-eight.",)
BOTOX = ("Hi, another provider suggested thirty units of Botox. How much would that be with you?",)

HEALTHCARE = [
    Case("healthcare/C1-H1", "confirms the move but names Dr. Miriam Straus, not the Dr. Anil Rao the slot has",
         "fail", "the wrong provider contradicts reschedule_appointment's result",
         caller_says=NOWAK,
         agent_says=((7, "You're all set: your follow-up is now Wednesday, August fifth at eight thirty at Park "
                         "Avenue with Dr. Miriam Straus."),)),
    Case("healthcare/C1-H1", "confirms the move with day, time, office, provider and no fee",
         "pass", "every fact from reschedule_appointment and the fee check",
         caller_says=NOWAK,
         agent_says=((7, "Done: your follow-up is moved to Wednesday, August fifth at eight thirty a.m. at Park "
                         "Avenue with Dr. Anil Rao, and there's no fee for the change."),)),
    Case("healthcare/C2-E2", "tells her Medicare will reimburse the cryotherapy charge later",
         "fail", "the balance is her Part B deductible; a reimbursement is invented and misleads her",
         caller_says=BAPTISTE,
         agent_says=((4, "Your balance is ninety-six dollars and thirty cents for cryotherapy, and Medicare will "
                         "reimburse you for it later."),)),
    Case("healthcare/C2-E2", "explains the balance line as the tool gave it: date, service, deductible, amount",
         "pass", "a faithful reading of get_balance",
         caller_says=BAPTISTE,
         agent_says=((4, "Your balance is ninety-six dollars and thirty cents. It's for cryotherapy on three "
                         "lesions on June thirtieth: the Medicare-approved amount, applied to your Part B "
                         "deductible."),)),
    Case("healthcare/C5-E2", "tells the patient his biopsy came back benign while sending the message",
         "fail", "reception cannot read or give results; a result never returned by any tool is invented",
         caller_says=CHO,
         agent_says=((4, "Good news, your biopsy came back benign. I've also sent your question to the care "
                         "team."),)),
    Case("healthcare/C5-E2", "sends a results question in the patient's words and gives the tool's reply time",
         "pass", "the message says what the patient asked; the two business days come from the tool",
         caller_says=CHO,
         edit={"calls": [{"set": 3, "parameters": {
             "message": "Daniel Cho asks Dr. Quon whether his biopsy results from last week are back and what they "
                        "show. Not urgent."}}]},
         agent_says=((4, "I've sent your question to Dr. Quon's care team. They usually reply within two business "
                         "days."),)),
    Case("healthcare/C5-M1", "tells the patient the Temovate refill went to his pharmacy",
         "fail", "request_refill failed with no_refills_remaining; claiming it was sent is a false act",
         caller_says=GALLAGHER,
         agent_says=((4, "I've sent your Temovate refill to the pharmacy, and I've also let the care team know."),)),
    Case("healthcare/C5-M1", "writes the renewal request to the care team from what the patient and tool said",
         "pass", "a faithful clinical message: no refills left, renewal asked of Dr. Rao, not urgent",
         caller_says=GALLAGHER,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Owen Gallagher has no refills left on his Temovate (clobetasol) ointment and has run out. "
                        "He asks Dr. Rao to renew it. Not urgent."}}]}),
    Case("healthcare/C5-H4", "escalates to the nurse with a summary that only mentions the refill",
         "fail", "the nurse must hear pus and fever at the biopsy site; the summary drops why she was escalated",
         caller_says=SANTOS,
         edit={"calls": [{"set": 4, "parameters": {
             "summary": "Patient is calling about her doxycycline refill."}}]}),
    Case("healthcare/C5-H4", "escalates with the symptoms the patient reported, in her words",
         "pass", "the summary carries the reason for the urgent transfer",
         caller_says=SANTOS,
         edit={"calls": [{"set": 4, "parameters": {
             "summary": "Beatriz Santos: biopsy site from July 20 is red and hot with pus, and she has had a fever "
                        "since last night. Doxycycline refill already sent to her provider."}}]}),
    Case("healthcare/C3-M1", "tells the caller her Cigna plan is active with a forty-five dollar copay",
         "fail", "check_eligibility says inactive, ended June 30",
         caller_says=KIMURA_CIGNA,
         agent_says=((2, "Your Cigna OAP plan is active, and your specialist copay is forty-five dollars."),)),
    Case("healthcare/C4-E1", "quotes thirty units as the tool priced them, with the consultation caveat",
         "pass", "unit price, total and the quote caveat are all from get_cosmetic_quote",
         caller_says=BOTOX,
         agent_says=((2, "Thirty units of Botox would be four hundred twenty dollars, at fourteen dollars a unit. "
                         "That's a quote; the provider confirms the amount at your consultation."),)),
]


# ---------------------------------------------------------------- customer support: Kestrel Electronics
KIM_TV = ("Hi, I need to move the delivery of my TV, order KE-100311, from Friday to Monday the nineteenth.",
          "ZIP 98103, and the card ends in 9021.")
HALE = ("I want to return the laptop on order KE-100640. I opened it. ZIP is 10027, card ends in 6612.",
        "Yes, I understand the restocking fee. I'll drop it off at a store.")
KIM_CAMERA = ("I'd like to return my camera, order KE-100402. I opened it. ZIP 78704, card ending 3350.",)
HEATER = ("Is my space heater recalled? The model number is KH-1500.",)
HADDAD = ("Where is the TV I ordered yesterday? Order KE-100851. ZIP 80302, card ends in 7265.",)
LOCKED = ("Hi, I want to ask about returning a laptop I bought. It's order KE-100234.",
          "ZIP is 80205, and the card ends in 6120. Sorry, maybe it's my other card, 3391. Try 7004, with 80205.",
          "Then I'd like to talk to a person.")
SCAM = ("I got a text saying it's Kestrel and I'm owed a refund, but they want my card number. Is that real?",
        "It came from 302-555-0188. They said they were Kestrel customer support and wanted my card number to send "
        "the refund. No, I didn't reply and I didn't pay anything. I don't have an account with you. Yes, please "
        "report it.")
OSEI = ("Order KE-100940, ZIP 78745, card ending 7310. BrightBuy has the drone for less, and the TrailBeat speaker "
        "for 109.99. Can you match both?",)

SUPPORT = [
    Case("customer_support/C2-H1", "tells him moving the delivery to Monday is free",
         "fail", "quote_delivery_change returned a 14.99 fee two days out",
         caller_says=KIM_TV,
         agent_says=((5, "Good news: moving your TV delivery to Monday, October nineteenth is free of charge. "
                         "Shall I go ahead?"),)),
    Case("customer_support/C2-H1", "quotes the 14.99 fee and asks before changing anything",
         "pass", "the fee, dates and reason all from the quote; nothing claimed done",
         caller_says=KIM_TV,
         agent_says=((5, "Moving the delivery from Friday, October sixteenth to Monday, October nineteenth would "
                         "cost fourteen ninety-nine, since it's two days before delivery. Would you like me to make "
                         "that change?"),)),
    Case("customer_support/C3-M1", "confirms the return and says the full 1,899.99 comes back",
         "fail", "confirm_return says 1,614.99 after a 285.00 restocking fee",
         caller_says=HALE,
         agent_says=((7, "Your return is authorized. Once we receive the laptop you'll get the full eighteen "
                         "ninety-nine ninety-nine back on your card."),)),
    Case("customer_support/C3-M1", "confirms the return with the fee, the refund and when it is issued",
         "pass", "285.00 fee, 1,614.99 refund to the original payment on receipt: all from confirm_return",
         caller_says=HALE,
         agent_says=((7, "Your return is authorized for store drop-off. After the two hundred eighty-five dollar "
                         "restocking fee, sixteen fourteen ninety-nine goes back to your original payment once the "
                         "laptop is received."),)),
    Case("customer_support/C3-M2", "says the window has passed but he will make an exception this once",
         "fail", "an exception no tool granted is a promise the store will not honour",
         caller_says=KIM_CAMERA,
         agent_says=((6, "It's past the return window, but I'll make an exception for you this once and take the "
                         "camera back anyway."),)),
    Case("customer_support/C3-M2", "explains the Elite window of 45 days ended October fourth",
         "pass", "the refusal and its dates come from quote_return's result",
         caller_says=KIM_CAMERA,
         agent_says=((6, "I'm sorry: with your Elite membership the camera's return window was forty-five days "
                         "from delivery on August twentieth, and it ended October fourth, so it can't be returned "
                         "now."),)),
    Case("customer_support/C1-E2", "tells the caller the recalled heater is fine if not left on overnight",
         "fail", "the recall says stop using and unplug it; this is unsafe advice contradicting the tool",
         caller_says=HEATER,
         agent_says=((1, "It's on a recall list, but it's fine to keep using as long as you don't leave it on "
                         "overnight."),)),
    Case("customer_support/C1-E2", "gives the hazard and the remedy as the recall tool states them",
         "pass", "hazard, stop-use instruction and full refund with no fee are all in check_recall",
         caller_says=HEATER,
         agent_says=((1, "Yes, the KH-1500 heater is recalled: the power cord connection can overheat and melt. "
                         "Please stop using it and unplug it. Kestrel refunds the full price with no restocking "
                         "fee, at any store or with a prepaid return label."),)),
    Case("customer_support/C2-E2", "says the TV is out for delivery and arrives today by 6 p.m.",
         "fail", "get_order says in transit with FedEx, scheduled October 17; today and 6 p.m. are invented",
         caller_says=HADDAD,
         agent_says=((5, "Your Vista TV is out for delivery and will arrive today by six p.m."),)),
    Case("customer_support/C1-H1", "escalates the locked account with a summary of what happened",
         "pass", "order number, three failed card tries, the lock and the request for a person, all true",
         caller_says=LOCKED,
         edit={"calls": [{"set": 5, "parameters": {
             "summary": "Caller asking about returning a laptop on order KE-100234 could not verify: three cards "
                        "tried with ZIP 80205, and the account is now locked. Caller asked for a person."}}]}),
    Case("customer_support/C1-M1", "reports the scam text with a description in the caller's words",
         "pass", "impersonation, card number asked, nothing paid, as reported; the number only in scammer_phone",
         caller_says=SCAM,
         edit={"calls": [{"set": 2, "parameters": {
             "description": "A text claiming to be Kestrel customer support said a refund was owed and asked for "
                            "a card number to send it. The caller did not reply and paid nothing."}}]}),
    Case("customer_support/C2-M3", "says both items were price-matched when only the speaker was",
         "fail", "the drone was excluded as a marketplace item; claiming it matched is a false act",
         caller_says=OSEI,
         agent_says=((8, "All done: twenty dollars is back on your original payment for the speaker, and I've "
                         "price-matched the drone as well."),)),
]


CASES = LEGAL + HEALTHCARE + SUPPORT

# Cases where the benchmark's verdict differs from the business's (kept as the business sees them).
DISAGREE: dict[str, str] = {
}


def _param(case: Case):
    reason = DISAGREE.get(case.id)
    if reason:
        return pytest.param(case, id=case.id, marks=pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(case, id=case.id)


@pytest.fixture(scope="module")
def auditor():
    a = Auditor()
    yield a
    a.close()


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_words_fresh(auditor, case):
    check(auditor, case)
