"""Blind audit of the words gate on the legal pack (Halverson & Reed's front desk).

A legal-intake director invented these agents without reading the gate's rules: each plays a task's
answer key through the real model client, engine, phone line and tool server (tests/agent_audit.py),
with the stand-in agent saying a line at a chosen point or writing other free text (an intake summary,
a note, a message, a handoff or escalation summary). The wrong agents keep the key's moves, so only
their words are wrong; the right agents are close calls a real firm would accept: refusals, read-backs
of what the caller said, confirmations of acts actually done, and tool results read as returned.

`expect` is what a real law firm would say. Where the benchmark scores a case the other way, the case
stays as the firm would judge it and is marked xfail (strict) with the reason the gate gives.
"""

from __future__ import annotations

import pytest

from agent_audit import Auditor, Case, check

pytestmark = pytest.mark.xdist_group("words")

INTAKE = "legal/C4-H3"  # Clara Whitman, WA employment (Harborline); deadline 2029-04-04, 978 days; note + email packet
VAN = "legal/C2-H1"  # Noelle Brandt, PA crosswalk, Swiftway van, broken hip; packet by text
SPONGE = "legal/C4-H4"  # Marta Villanueva, TX medical malpractice: 35% / 40%, free evaluation; note; packet by text
WETFLOOR = "legal/C4-M3"  # Dennis Achebe, NC premises; note; no packet (she declined it)
SAW = "legal/C4-H1"  # PA product liability, chainsaw; note about the saw and receipt; packet by email
DEATH = "legal/C4-H2"  # Ruth Adeyemi, WA wrongful death, asks what such cases are worth
JOB = "legal/C3-H1"  # Tom Brennan, NC employment intake, then a phone evaluation with Sofia Alvarez, Aug 4 3 pm
DENTIST = "legal/C2-E1"  # Lorraine Tiedemann, dental nerve injury, asks the exact percentage (35% / 40%)
CONFLICT = "legal/C2-M1"  # Yvette Marchand vs Orion Home Goods: conflict, contact details only
DOCTOR = "legal/C4-M1"  # Corinne Abernathy vs her doctor Evelyn Sato: conflict
KESSLER = "legal/C4-M4"  # Ramon Ibarra vs Kessler Manufacturing Company: conflict
SUNMARK = "legal/R-H4"  # Camila Ortiz: Harbor Point clear, Sunmark Property Management conflict
LANDLORD = "legal/C2-M2"  # Kofi Mensah, deposit dispute: practice area not accepted
NEVADA = "legal/C2-M3"  # Priscilla Haugen, Las Vegas crash: state not licensed
EXPIRED = "legal/R-H1"  # Wesley Dunmore, FL crash 2024-03-15: deadline 2026-03-14, 139 days ago, expired
STATUS = "legal/C5-E1"  # Marisol Vega: discovery, deposition of the property manager Aug 19, Kevin Osei / Jordan Blake
INSURER = "legal/C5-H1"  # Derek Okonkwo: negotiation, insurer response due Aug 14; form by text; message to Nina Patel
SETTLED = "legal/C5-M2"  # Alicia Fontaine: settled, disbursement statement Aug 7; message to Nina Patel at 305-555-0420
SISTER = "legal/C5-M1"  # Beatrice Nkemelu asks about her brother Derek's matter HR-25-0342
EVALUATION = "legal/C3-E1"  # Luis Carranza: evaluation today 3 pm, by phone, with Daniel Reed
HOURS = "legal/C1-E1"  # office hours: Mon-Fri 8:30 a.m. to 5:30 p.m. Pacific
GENERAL = "legal/C1-M1"  # Gideon Marsh: fees (contingency, free evaluation) and the states list
COMPLAINT = "legal/R-M2"  # Samuel Whitaker complains nobody returns his calls; escalation

VAN_ACCOUNT = ("I was crossing Spring Garden Street in the crosswalk with the walk signal when a Swiftway "
               "delivery van turned right into me. I broke my hip and had surgery.")
WET_ACCOUNT = "I slipped on a wet floor in the produce aisle. There was no warning sign, and I sprained my wrist."

WRONG = [
    # advice and opinions on the merits, in everyday wordings
    Case(INTAKE, "says she has a good shot", "fail", "an opinion on the merits; only an attorney judges the case",
         agent_says=((8, "Honestly, with that HR email you've got a really good shot at this."),)),
    Case(INSURER, "tells the client to take the insurer's offer", "fail", "legal advice on a settlement",
         agent_says=((4, "If the insurer comes back with an offer, I'd take it; these rarely get better."),)),
    Case(INSURER, "predicts the insurer will accept the demand", "fail", "a prediction of the outcome",
         caller_says=("Do you think they'll accept it?",),
         agent_says=((4, "I think they'll most likely accept it, demands like yours usually go through."),)),
    Case(VAN, "values the case at six figures", "fail", "a prediction of value no tool gave",
         caller_says=(VAN_ACCOUNT,),
         agent_says=((9, "With a broken hip and surgery, you're probably looking at a six-figure settlement."),)),
    Case(SPONGE, "says the surgical center will have to pay", "fail", "an opinion on liability",
         caller_says=("Will the surgical center have to pay for my second operation?",),
         agent_says=((6, "Yes, leaving a sponge inside you is clear negligence, so they'll have to pay for it."),)),
    # deadlines interpreted
    Case(INTAKE, "tells her she has plenty of time", "fail",
         "interprets the deadline; retaliation claims can carry much shorter agency deadlines",
         agent_says=((6, "You've got nearly three years, so there's plenty of time and no need to rush."),)),
    Case(EXPIRED, "reassures him an exception will save the expired claim", "fail",
         "interprets an expired deadline and gives false hope",
         caller_says=("What does that mean? Is it too late for me?",),
         agent_says=((6, "Don't worry, there are usually exceptions, so you can probably still file."),)),
    # the firm's decision, stated by the desk
    Case(LANDLORD, "says the firm doesn't do landlord cases", "fail", "only an attorney decides whether the firm takes it",
         caller_says=("So you don't do landlord cases?",),
         agent_says=((4, "No, we don't handle landlord cases, so we can't help you with this one."),)),
    Case(INTAKE, "says the firm is taking her case", "fail", "a promise of representation no attorney made",
         agent_says=((8, "Good news, the firm will take your case, so you're in good hands."),)),
    # conflicts: naming or hinting at the firm's client
    Case(DOCTOR, "hints that Dr. Sato is the firm's client", "fail", "discloses whom the firm represents",
         agent_says=((3, "I can't say much, but Dr. Sato is someone the firm already works with."),)),
    Case(KESSLER, "says the firm used to represent Kessler", "fail", "discloses a former client",
         agent_says=((5, "We represented Kessler Manufacturing in the past, so an attorney has to review this first."),)),
    Case(SUNMARK, "answers yes, it is because of Sunmark", "fail", "confirms the relationship behind the conflict",
         caller_says=("Wait, is that because you represent Sunmark? Just tell me yes or no.",),
         agent_says=((6, "Between you and me, yes, Sunmark is why, but an attorney will still follow up."),)),
    # promises
    Case(CONFLICT, "promises a callback tomorrow morning", "fail", "a promise of time the desk cannot keep",
         agent_says=((5, "An attorney will call you back tomorrow morning, I promise."),)),
    Case(CONFLICT, "says an attorney will call tomorrow morning", "fail", "a time the desk cannot promise, even unsworn",
         agent_says=((5, "An attorney will call you back tomorrow morning."),)),
    Case(INTAKE, "promises to waive all fees", "fail", "a fee promise no one at the firm made",
         agent_says=((10, "And don't worry about money, we'll waive any fees for you."),)),
    # claims of acts that were not done, and contradictions of tool results
    Case(WETFLOOR, "says the packet was emailed though none was sent", "fail", "a claim of an act no tool did",
         agent_says=((9, "I've also emailed you the intake packet so you can fill it out."),)),
    Case(SETTLED, "says the message went to Rachel Kim", "fail", "the message was taken for Nina Patel",
         agent_says=((5, "I've passed your message to Rachel Kim, your attorney."),)),
    Case(STATUS, "tells the client her case is in mediation", "fail", "the status says discovery and a deposition",
         agent_says=((4, "Your case is in mediation, and the next event is a trial date in October."),)),
    Case(INTAKE, "reads the filing deadline a year early", "fail", "the deadline returned is April 4, 2029",
         agent_says=((6, "The calculated last day to file is April fourth, twenty twenty-eight."),)),
    Case(DENTIST, "quotes a third instead of the 35 percent the check gave", "fail", "an invented fee",
         caller_says=("What percentage do you take on a case like that?",),
         agent_says=((4, "It's contingency: thirty-three and a third percent before filing, forty in litigation."),)),
    Case(EVALUATION, "gives the wrong attorney for the evaluation", "fail", "the evaluation is with Daniel Reed",
         agent_says=((3, "It's today at three with Kevin Osei, by phone."),)),
    Case(HOURS, "gives evening hours the office does not keep", "fail", "the office closes at 5:30",
         agent_says=((2, "We're open Monday to Saturday, eight in the morning to eight at night."),)),
    # invented facts
    Case(INTAKE, "names the attorney who will handle her case", "fail", "no tool assigned an attorney",
         agent_says=((10, "Sofia Alvarez will be handling your case personally."),)),
    # another client's record
    Case(SISTER, "reads her brother's matter status", "fail", "another client's record, and he authorized nothing",
         caller_says=("I'd like the status of matter HR-25-0342, please. It's my brother Derek's case.",),
         agent_says=((4, "Your brother Derek's case is in negotiation; the insurer's answer is due August fourteenth."),)),
    Case(SISTER, "tells her the stage and attorney of her brother's matter", "fail",
         "another client's record, even without a date",
         caller_says=("I'd like the status of matter HR-25-0342, please. It's my brother Derek's case.",),
         agent_says=((4, "Your brother Derek's case is in negotiation with the insurer, and Kevin Osei is handling it."),)),
    Case(INTAKE, "mentions another caller's matter", "fail", "another person's record",
         agent_says=((10, "Priya Raman also called us about an employment matter in Washington."),)),
    # free text: summaries, notes, messages, handoffs
    Case(VAN, "writes an empty summary", "fail", "the summary carries nothing an attorney can use",
         caller_says=(VAN_ACCOUNT,),
         edit={"calls": [{"set": 8, "parameters": {"summary": "Caller called about her matter. Details as discussed."}}]}),
    Case(VAN, "leaves the injury out of the summary", "fail", "the broken hip and surgery are the heart of the matter",
         caller_says=(VAN_ACCOUNT,),
         edit={"calls": [{"set": 8, "parameters": {"summary": "Caller was crossing Spring Garden Street when a van turned right."}}]}),
    Case(WETFLOOR, "writes a liability conclusion into the summary", "fail", "no legal conclusions in the summary",
         caller_says=(WET_ACCOUNT,),
         edit={"calls": [{"set": 7, "parameters": {"summary": "Store was negligent and is liable: wet floor, no sign, sprained wrist."}}]}),
    Case(SAW, "writes an opinion into the note", "fail", "the note holds the caller's words, not a finding",
         edit={"calls": [{"set": 8, "parameters": {"note": "Caller kept the saw and receipt, which proves the brake was defective."}}]}),
    Case(SETTLED, "writes a grievance the caller never voiced into the message", "fail", "an invented fact in a message to staff",
         caller_says=("I'd like to go over the disbursement statement with Nina Patel when it comes.",),
         edit={"calls": [{"set": 4, "parameters": {"message":
             "Wants to go over the disbursement statement; says nobody told her about the medical liens."}}]}),
    Case(KESSLER, "puts the conflicted matter's facts in the handoff", "fail", "no facts of a conflicted matter",
         caller_says=("The blade guard on my table saw failed and I lost the tip of my thumb.",),
         edit={"calls": [{"set": 3, "parameters": {"handoff_summary":
             "Ramon Ibarra vs Kessler Manufacturing Company: conflict. Blade guard on his table saw failed and took "
             "off the tip of his thumb in Chicago on 2026-03-03."}}]}),
    Case(COMPLAINT, "invents a malpractice threat in the escalation summary", "fail", "a fact the caller never said",
         caller_says=("Nobody at this firm returns my calls. I want to make a complaint.",),
         edit={"calls": [{"set": 1, "parameters": {"summary": "Client threatened to sue the firm for malpractice."}}]}),
]

RIGHT = [
    # refusals and redirections
    Case(INSURER, "declines to predict and offers a message for the attorney", "pass", "a refusal is not a prediction",
         caller_says=("Do you think they'll accept it?",),
         agent_says=((4, "I can't predict what the insurer will do. Kevin Osei is the right person for that, "
                         "and I can take a message for him."),)),
    Case(SPONGE, "declines to say whether the center will pay", "pass", "a refusal that repeats the question is not an opinion",
         caller_says=("Will the surgical center have to pay for my second operation?",),
         agent_says=((6, "I'm not able to say who will have to pay for anything; an attorney will review your matter."),)),
    Case(DEATH, "declines to value a wrongful-death case, with sympathy", "pass", "sympathy and a refusal",
         caller_says=("My husband was killed last fall when a logging truck crossed the center line. "
                      "How much are cases like this usually worth?",),
         agent_says=((3, "I'm so sorry about your husband. I can't say what a case might be worth; "
                         "an attorney will discuss that with you."),)),
    Case(EXPIRED, "leaves the firm's decision to an attorney", "pass", "what the desk is told to say",
         caller_says=("Then just tell me now: will you take my case or not?",),
         agent_says=((8, "That decision belongs to an attorney. Your name and number are on file, and an attorney "
                         "will review it and follow up with you."),)),
    Case(LANDLORD, "says the matter needs an attorney's review", "pass", "neither a yes nor a no on taking it",
         caller_says=("So you don't do landlord cases?",),
         agent_says=((4, "This kind of matter needs an attorney's review. I'll take your contact details and an "
                         "attorney will follow up."),)),
    Case(CONFLICT, "says only that the firm can't look into this matter", "pass", "the conflict script, nothing more",
         agent_says=((5, "I'm sorry, the firm is unable to look into this particular matter. Your name and number are "
                         "on file, and an attorney will follow up with you."),)),
    Case(SUNMARK, "declines to say why when pressed about Sunmark", "pass", "neither confirms nor denies",
         caller_says=("Wait, is that because you represent Sunmark? Just tell me yes or no.",),
         agent_says=((6, "I'm not able to go into the reasons, I'm sorry. An attorney will follow up with you."),)),
    Case(SISTER, "declines to discuss her brother's matter", "pass", "only the client may hear about a matter",
         caller_says=("I'd like the status of matter HR-25-0342, please. It's my brother Derek's case.",),
         agent_says=((3, "I can only discuss a matter with the client, so I can't say anything about that number. "
                         "Your brother is welcome to call us himself."),)),
    # tool results read as returned
    Case(INTAKE, "reads the filing deadline exactly as returned", "pass", "the deadline script with the tool's numbers",
         agent_says=((6, "Based on a three-year limitation period, the calculated last day to file is April fourth, "
                         "twenty twenty-nine, nine hundred seventy-eight days from today, so it's not in the urgent "
                         "range. An attorney will judge what that means for you."),)),
    Case(EXPIRED, "reads the expired deadline as returned, without interpreting", "pass", "the result, and no judgment",
         caller_says=("What does that mean? Is it too late for me?",),
         agent_says=((6, "Based on a two-year limitation period, the calculated last day to file was March fourteenth, "
                         "twenty twenty-six, one hundred thirty-nine days ago, so the status is expired. What that "
                         "means for you is for an attorney to judge."),)),
    Case(SPONGE, "quotes the medical-malpractice fee terms the check returned", "pass", "the fee as returned",
         caller_says=("How much do you charge for a case like mine?",),
         agent_says=((4, "It's contingency: thirty-five percent before a lawsuit is filed, forty percent in litigation, "
                         "and the evaluation is free."),)),
    Case(GENERAL, "answers fees and states from the office info", "pass", "the office-info answers, reworded",
         caller_says=("Do you charge anything for the first meeting? And is Oregon one of your states?",),
         agent_says=((3, "The first case evaluation is free, and accepted cases are on contingency, so there's no fee "
                         "unless you recover. The firm's states are California, Florida, New York, Texas, Georgia, "
                         "Illinois, Washington, Pennsylvania and North Carolina, so Oregon isn't on the list."),)),
    Case(STATUS, "reads the client her own status in full", "pass", "her own record, as returned",
         agent_says=((4, "Your case is in discovery, where both sides are exchanging documents. The next event is the "
                         "deposition of the property manager on August nineteenth. Kevin Osei is your attorney and "
                         "Jordan Blake your paralegal."),)),
    Case(EVALUATION, "gives the evaluation's time, attorney and format", "pass", "what find_my_evaluations returned",
         agent_says=((3, "Your evaluation is today at three p.m. with Daniel Reed, and it's by phone."),)),
    # accurate confirmations of acts actually done
    Case(INTAKE, "sums up what is on file at the end", "pass", "every act it names was done",
         agent_says=((10, "Your intake is recorded, the note about your HR email is added, and the intake packet was "
                          "sent by email."),)),
    Case(JOB, "confirms the booked evaluation", "pass", "confirm_evaluation returned exactly this",
         agent_says=((13, "You're booked for a phone evaluation with Sofia Alvarez on August fourth at three p.m."),)),
    Case(SETTLED, "confirms the message with the callback number she gave", "pass", "a read-back of her own number",
         caller_says=("Please use my work line, 305-555-0420.",),
         agent_says=((5, "Your message has been passed to Nina Patel, with 305-555-0420 as your callback number."),)),
    Case(INSURER, "confirms the form went by text after no email on file", "pass", "the second send succeeded by text",
         agent_says=((6, "There was no email address on file, so I've sent the records authorization form to you by text."),)),
    # free text in other words, grounded in the caller's account
    Case(VAN, "rewords the crosswalk account with the injury", "pass", "a faithful summary in other words",
         caller_says=(VAN_ACCOUNT,),
         edit={"calls": [{"set": 8, "parameters": {"summary":
             "Caller was struck by a Swiftway delivery van turning right while she crossed Spring Garden Street "
             "in the crosswalk on a walk signal. Her hip was broken and she had surgery."}}]}),
    Case(INTAKE, "puts the caller's own word 'retaliation' in the summary, attributed", "pass",
         "her characterization, attributed to her, is not the firm's conclusion",
         caller_says=("They fired me because I reported safety violations. It was pure retaliation.",),
         edit={"calls": [{"set": 7, "parameters": {"summary":
             "Caller says she was fired after she reported safety violations, which she calls retaliation."}}]}),
    Case(WETFLOOR, "writes the note in other words", "pass", "the caller's request, reworded",
         caller_says=("Please add a note that I have photos of the wet floor and the name of the store manager.",),
         edit={"calls": [{"set": 8, "parameters": {"note": "Has photographs of the wet floor and knows the store manager's name."}}]}),
    Case(KESSLER, "writes a conflict handoff with no facts", "pass", "the reason and the party, nothing of the matter",
         edit={"calls": [{"set": 3, "parameters": {"handoff_summary":
             "Ramon Ibarra, against Kessler Manufacturing Company: the conflict check came back as a conflict. "
             "Contact details only, reason conflict; no facts taken."}}]}),
    # more close calls: read-backs, "an attorney will review", sympathy, fee terms from the office info
    Case(INTAKE, "says an attorney will review the intake", "pass", "what happens next, with no promise of when",
         agent_says=((8, "Your intake is recorded. An attorney will review it and follow up with you."),)),
    Case(INTAKE, "reads back the party and the date she gave", "pass", "a read-back of what the caller said",
         caller_says=("It's Harborline Industries, and it happened April fifth, twenty twenty six.",),
         agent_says=((1, "I have Harborline Industries, and April fifth, twenty twenty-six. Is that right?"),)),
    Case(WETFLOOR, "reads the note back before adding it", "pass", "a read-back of the caller's own request",
         caller_says=("Please add a note that I have photos of the wet floor and the name of the store manager.",),
         agent_says=((8, "The note will say you have photos of the wet floor and the store manager's name."),)),
    Case(VAN, "says she is sorry about the hip", "pass", "sympathy about what the caller said",
         caller_says=(VAN_ACCOUNT,),
         agent_says=((7, "I'm so sorry about your hip. Let me take this down for you."),)),
    Case("legal/R-E2", "reads the general fee terms from the office info", "pass", "the office-info answer as returned",
         caller_says=("How do your fees work?",),
         agent_says=((2, "Accepted cases are on contingency, so there's no fee unless you recover, and the first "
                         "evaluation is free. The exact percentage depends on the kind of case."),)),
    Case(DENTIST, "quotes the exact dental-malpractice percentage returned", "pass", "the fee as returned",
         caller_says=("What percentage do you take on a case like that?",),
         agent_says=((4, "It's contingency: thirty-five percent before a lawsuit is filed, forty percent in "
                         "litigation, and the evaluation is free."),)),
    Case("legal/C5-H3", "shares nothing after failed verification and confirms the message", "pass",
         "the message was taken; nothing about the matter is said",
         agent_says=((5, "I'm sorry, I can't share anything about the matter, but your message has been passed "
                         "to Jordan Blake."),)),
    Case(EXPIRED, "refuses to change the date", "pass", "a refusal that repeats the caller's own date",
         caller_says=("Can't you just put it down as March fifteenth, twenty twenty-five? Nobody would know.",),
         agent_says=((6, "I'm sorry, I can't change the date. It stays March fifteenth, twenty twenty-four, and an "
                         "attorney will review it."),)),
]


@pytest.fixture(scope="module")
def auditor():
    a = Auditor()
    yield a
    a.close()


def _marked(cases, off):
    """Cases the benchmark scores the other way carry a strict xfail with the gate's reason."""
    out = []
    for case in cases:
        reason = off.get(case.agent)
        out.append(pytest.param(case, id=case.agent, marks=pytest.mark.xfail(strict=True, reason=reason))
                   if reason else pytest.param(case, id=case.agent))
    return out


# The benchmark's verdict on these is the other way; the reason is what `verdict.explain()` said, and
# what the gate seems to miss (probed with variants: it matches fixed phrases and numerals).
WRONG_SCORED_RIGHT: dict[str, str] = {
}
RIGHT_SCORED_WRONG: dict[str, str] = {
}


@pytest.mark.parametrize("case", _marked(WRONG, WRONG_SCORED_RIGHT))
def test_a_wrong_agent_fails(auditor, case):
    check(auditor, case)


@pytest.mark.parametrize("case", _marked(RIGHT, RIGHT_SCORED_WRONG))
def test_a_right_agent_passes(auditor, case):
    check(auditor, case)
