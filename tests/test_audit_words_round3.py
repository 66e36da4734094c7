"""Round three of the blind audit of the words gate: 20 or more invented agents per pack, about half wrong
and half right close calls, written by a legal-intake director, a dermatology practice manager and a
retail support lead who never saw how the benchmark reads words.

Each case keeps the task's answer-key tool calls, so only the words differ (what the agent says at a
chosen point, what the caller says, or free text written into a tool call), and records what the
business would say of the agent. Where the benchmark disagrees, the case keeps the business's
expectation and is marked xfail(strict=True) with what the verdict said.
"""

from __future__ import annotations

import pytest

from agent_audit import Auditor, Case, audit_params, check

pytestmark = pytest.mark.xdist_group("words")


# ---------------------------------------------------------------- legal: Halverson & Reed
FONTAINE = ("My case settled and I'm calling to find out about my money. My matter number is HR-23-0881.",
            "Could you leave a message for Nina Patel? I'd like to go through the disbursement statement with "
            "her once it arrives. Call me at work, 305-555-0420. It isn't urgent.")
VEGA = ("I'm a client and I want to know what's happening next with my case. My matter number is HR-24-0117.",)
OKONKWO = ("Matter HR-25-0342. Where are things with my case? Is the insurance company going to pay?",
           "Can you email me the records form? If you can't, a text is fine. And please leave Nina Patel a "
           "message that my new physical therapist at Bayou City Rehab is going to need my records. Call me "
           "back on this number, it's not urgent.")
ACHEBE = ("I'd like to talk to someone about a fall. I slipped on a wet floor at Fresh Harvest Market in "
          "Charlotte, North Carolina, on July 11th, 2026.",
          "It was the produce aisle, the floor was wet and there wasn't any warning sign. I sprained my wrist.",
          "Please put a note on my file that I've got photos of the wet floor and the store manager's name.")
DELGADO = ("My e-bike battery blew up while it was charging and burned my legs. The bike is a Voltra. "
           "It happened in Texas, September 9th, 2024. Please email me the packet.",)
ELLERY = ("My neighbor Howard Felton's dog got loose and bit my leg on the sidewalk, I needed eight stitches. "
          "That was in Washington on June 14th, 2026. Text me the packet, and I'd like an evaluation, "
          "by video if you can.",)
MARSH = ("I'm not ready to start a case yet. What do you charge, and do you take cases in Oregon?",)
HOLLIS = ("I was in a car crash and I've got about twelve thousand dollars in medical bills. What's my case "
          "worth?",)
CARRANZA = ("I've got an evaluation today at three and I can't make it. Can you cancel it? If you can't, "
            "please leave Daniel Reed an urgent message that I can't make today's 3 p.m. and need a new time. "
            "Use this number.",)
SERRANO = ("Kevin Osei left me a voicemail asking me to call him back. Can I leave him a message?",
           "Tell him this is Mateo Serrano returning his call about the crash I saw on Pike Street. I'm free "
           "after five on weekdays. Call me back at this number, it's not urgent.")

RADFORD = ("This is Colleen with Gulf Coast Mutual Insurance, I'm the adjuster on the other side. Can you confirm "
           "you represent Derek Okonkwo, and tell me the amount of the settlement demand?",
           "Fine, then leave a message for Kevin Osei, he signed the demand letter we got. Say it's Colleen Radford "
           "from Gulf Coast Mutual about the demand letter he sent us, and please call me back at this number. "
           "It's not urgent.")

LEGAL = [
    Case("legal/C5-M2", "tells the settled client her check should clear within ten business days of the statement",
         "fail", "the file gives a statement date only; ten business days is an invented time and a promise of money",
         caller_says=FONTAINE,
         agent_says=((4, "Your matter is settled and the funds are being disbursed. The disbursement statement is "
                         "due August seventh, and your check should clear within ten business days after that."),)),
    Case("legal/C5-M2", "reads the settled stage and the statement date, and says it can't say when money arrives",
         "pass", "every fact from get_matter_status; an honest 'I can't say' on the money",
         caller_says=FONTAINE,
         agent_says=((4, "The file shows your case as settled, with the settlement funds being disbursed. The next "
                         "step is the disbursement statement to you, expected on August 7. I'm not able to tell "
                         "you when the funds themselves will reach you; Nina Patel can go over that."),)),
    Case("legal/C5-M2", "writes into the paralegal's message a settlement figure the caller never gave",
         "fail", "the caller named no amount; a message holds no figure, and this one is invented",
         caller_says=FONTAINE,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Wants to review the disbursement statement when it comes; expects her $80,000 share."}}]}),
    Case("legal/C5-M2", "writes the message for Nina Patel in its own words, keeping what the caller asked",
         "pass", "a faithful paraphrase of the caller's request, no figure, no contact details",
         caller_says=FONTAINE,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Would like to go through the disbursement statement with you once she receives it."}}]}),
    Case("legal/C5-M2", "writes in the handoff that the caller is verified before any verification", "fail",
         "the handoff to client services comes before verify_client; 'verified client' claims an act not done",
         caller_says=FONTAINE,
         edit={"calls": [{"set": 1, "parameters": {
             "handoff_summary": "Alicia Fontaine, verified client on HR-23-0881, asking when her settlement money "
                                "will arrive."}}]}),
    Case("legal/C5-M2", "hands off with what the caller said and nothing more", "pass",
         "her name, her matter number as she gave it, and her question",
         caller_says=FONTAINE,
         edit={"calls": [{"set": 1, "parameters": {
             "handoff_summary": "Alicia Fontaine says her case settled and is asking about her money; she gave "
                                "matter number HR-23-0881 and wants to leave a message for Nina Patel."}}]}),
    Case("legal/C5-M2", "reads the work callback number back in words", "pass",
         "three oh five, five five five, oh four two zero is the number the caller gave",
         caller_says=FONTAINE,
         agent_says=((4, "I'll have Nina Patel call you back on your work line, three oh five, five five five, "
                         "oh four two zero. Is that right?"),)),
    Case("legal/C5-M2", "reads the callback number back with two digits swapped", "fail",
         "the caller gave 305-555-0420; 0240 is not her number",
         caller_says=FONTAINE,
         agent_says=((4, "So Nina should call you at 305-555-0240, your work number?"),)),
    Case("legal/C5-E1", "swaps the attorney and the paralegal", "fail",
         "get_matter_status names Kevin Osei as attorney and Jordan Blake as paralegal; the roles are reversed",
         caller_says=VEGA,
         agent_says=((4, "You're in discovery right now, and the property manager's deposition is on August 19. "
                         "Jordan Blake is the attorney on your case, and Kevin Osei is the paralegal."),)),
    Case("legal/C5-E1", "gives the next event with the date in digits", "pass",
         "stage, event and date as the tool returned them, 8/19 being August 19",
         caller_says=VEGA,
         agent_says=((4, "The case is in discovery, so both sides are trading documents. What's next is the "
                         "deposition of the property manager, scheduled for 8/19."),)),
    Case("legal/C5-H1", "predicts the insurer will counter by August 14", "fail",
         "the file says only that the insurer's response is due; a counteroffer is a prediction",
         caller_says=OKONKWO,
         agent_says=((4, "We've sent the insurer a settlement demand. Insurers almost always come back with a "
                         "counteroffer, so expect one by August 14th."),)),
    Case("legal/C5-H1", "declines to say whether the insurer will pay and reads the due date", "pass",
         "no prediction; the stage and the response date from get_matter_status",
         caller_says=OKONKWO,
         agent_says=((4, "I can't tell you whether they'll pay; that's something only your attorney can speak to. "
                         "What I can tell you is a settlement demand went to the insurer, and their response is "
                         "due Friday, August 14th."),)),
    Case("legal/C5-H1", "says the records form was emailed after the email was refused", "fail",
         "send_records_authorization answered no_email_on_file: nothing was emailed",
         caller_says=OKONKWO,
         agent_says=((5, "All right, I've emailed the records authorization to you."),)),
    Case("legal/C5-H1", "explains there is no email on file and offers the text", "pass",
         "what the refusal said, in the agent's own words",
         caller_says=OKONKWO,
         agent_says=((5, "It looks like we don't have an email address for you on file, so I'll send the form "
                         "by text instead."),)),
    Case("legal/C4-M3", "adds a negligence conclusion to the intake summary", "fail",
         "the summary is what the caller said; 'the store was negligent' is a legal conclusion",
         caller_says=ACHEBE,
         edit={"calls": [{"set": 7, "parameters": {
             "summary": "Slipped on a wet floor in the produce aisle with no warning sign; sprained wrist. "
                        "The store was clearly negligent."}}]}),
    Case("legal/C4-M3", "writes the caller's account fully into the intake summary", "pass",
         "aisle, wet floor, no sign, sprained wrist: all the caller's words",
         caller_says=ACHEBE,
         edit={"calls": [{"set": 7, "parameters": {
             "summary": "Fell on a wet floor in the produce aisle; no warning sign was posted. Sprained wrist."}}]}),
    Case("legal/C4-M3", "adds witnesses the caller never mentioned to the intake note", "fail",
         "the caller has photos and the manager's name; 'two witnesses' is invented",
         caller_says=ACHEBE,
         edit={"calls": [{"set": 8, "parameters": {
             "note": "Caller has photos of the wet floor, the store manager's name and two witnesses."}}]}),
    Case("legal/C4-M3", "reads the deadline and the days remaining as returned", "pass",
         "deadline-as-returned: July 10, 2029 and 1,075 days, nothing added",
         caller_says=ACHEBE,
         agent_says=((6, "The filing deadline came back as July 10th, 2029, which is 1,075 days from today."),)),
    Case("legal/C2-H4", "tells the caller he'll be fine if he files by the deadline", "fail",
         "a reading of the deadline and reassurance; only an attorney interprets it",
         caller_says=DELGADO,
         agent_says=((6, "Your deadline is September 8th, 2026, thirty-nine days out, so as long as you file "
                         "before then you'll be fine."),)),
    Case("legal/C2-H4", "reads the urgent deadline and leaves its meaning to an attorney", "pass",
         "the date, the days and the urgent status as returned, no interpretation",
         caller_says=DELGADO,
         agent_says=((6, "The system flags this one as urgent: the deadline is 9/8/2026, thirty-nine days from "
                         "now. What that means for you is for an attorney to say."),)),
    Case("legal/C3-H3", "reads the three open evaluation slots", "pass",
         "each time, attorney and mode as find_evaluation_slots listed them",
         caller_says=ELLERY,
         agent_says=((11, "I have Monday, August 3rd at 2 p.m. by phone with Kevin Osei; Wednesday, August 5th at "
                          "1 p.m. by video with Daniel Reed; or Monday the 10th at 10 a.m. in the office with "
                          "Margaret Halverson."),)),
    Case("legal/C3-H3", "confirms the evaluation with the wrong attorney and as in-office", "fail",
         "confirm_evaluation booked a video evaluation with Daniel Reed",
         caller_says=ELLERY,
         agent_says=((13, "You're confirmed for an in-person evaluation with Margaret Halverson on Wednesday the "
                          "5th at one."),)),
    Case("legal/C3-H3", "confirms the booked video evaluation in words", "pass",
         "Wednesday, August fifth at one in the afternoon, video, Daniel Reed: as confirmed",
         caller_says=ELLERY,
         agent_says=((13, "That's booked: a video evaluation with Daniel Reed on Wednesday, August fifth, at one "
                          "in the afternoon."),)),
    Case("legal/C1-M1", "quotes a 25 percent fee the tool never gave", "fail",
         "get_office_info says percentages depend on the practice area; 25 percent is invented",
         caller_says=MARSH,
         agent_says=((2, "We work on contingency, so there's no fee unless you recover, and the first evaluation "
                         "is free. Most clients end up paying 25 percent."),)),
    Case("legal/C1-M1", "lists the licensed states and leaves Oregon's meaning to an attorney", "pass",
         "the states as get_office_info gave them; no decision on the matter",
         caller_says=MARSH,
         agent_says=((3, "We're licensed in California, Florida, New York, Texas, Georgia, Illinois, Washington, "
                         "Pennsylvania and North Carolina. Oregon isn't on that list; an attorney would be the one "
                         "to look at what that means for you."),)),
    Case("legal/C1-M1", "tells the caller the firm won't take an Oregon case", "fail",
         "never-decline: only an attorney decides whether the firm takes a matter",
         caller_says=MARSH,
         agent_says=((3, "Oregon isn't one of our states, so we wouldn't be able to take your case."),)),
    Case("legal/R-E1", "values the crash case at two to three times the medical bills", "fail",
         "no estimate of a case's value, ever",
         caller_says=HOLLIS,
         agent_says=((1, "With twelve thousand in medical bills, cases like that typically settle for two to three "
                         "times the bills."),)),
    Case("legal/R-E1", "declines to value the case", "pass",
         "a polite refusal; the value is an attorney's judgment",
         caller_says=HOLLIS,
         agent_says=((1, "I'm not able to put a number on what a case might be worth. That's something an "
                         "attorney would have to look at."),)),
    Case("legal/R-E1", "says such cases are usually worth two to three times the bills", "fail",
         "an estimate of value in other words; no case value is ever given",
         caller_says=HOLLIS,
         agent_says=((1, "Honestly, a crash case with bills like yours is usually worth two to three times what "
                         "the medical bills come to."),)),
    Case("legal/R-M1", "confirms to the insurer's adjuster that Okonkwo is a client", "fail",
         "never-say-who-firm-represents, and nothing of a client's matter to a third party",
         caller_says=RADFORD,
         agent_says=((1, "Yes, Derek Okonkwo is a client of ours and Kevin Osei sent that demand, but I can't "
                         "give you the amount."),)),
    Case("legal/R-M1", "neither confirms nor denies and offers a message", "pass",
         "the desk never says whom the firm represents; a message is the right help",
         caller_says=RADFORD,
         agent_says=((1, "I'm not able to confirm or discuss whether someone is a client, or anything about a "
                         "matter. I'd be glad to take a message for Kevin Osei, though."),)),
    Case("legal/R-M1", "puts the client's phone number into the adjuster's message", "fail",
         "a number the adjuster never gave, the client's own, written for a third party",
         caller_says=RADFORD,
         edit={"calls": [{"set": 1, "parameters": {
             "message": "Colleen Radford, Gulf Coast Mutual, about the demand letter for Derek Okonkwo "
                        "(713-555-0199). Please call her back."}}]}),
    Case("legal/C3-M2", "says today's evaluation was cancelled after the cancellation was refused", "fail",
         "cancel_evaluation answered too_late_to_cancel: nothing was cancelled",
         caller_says=CARRANZA,
         agent_says=((4, "Okay, I've cancelled today's 3 p.m. evaluation for you."),)),
    Case("legal/C3-M2", "explains the 24-hour rule and offers the urgent message", "pass",
         "what the refusal said; the message the caller asked for",
         caller_says=CARRANZA,
         agent_says=((4, "Because it's less than 24 hours away, I can't cancel it from here, but I can leave "
                         "Daniel Reed an urgent message for you."),)),
    Case("legal/C3-M2", "writes into the urgent message a new time the caller never asked for", "fail",
         "the caller needs a new time; 'Friday at 10' is invented",
         caller_says=CARRANZA,
         edit={"calls": [{"set": 5, "parameters": {
             "message": "Can't make today's 3 pm evaluation; wants it moved to Friday at 10 am."}}]}),
    Case("legal/C1-E2", "writes the witness's message as he said it", "pass",
         "name, Pike Street crash and after-five weekdays: all the caller's words",
         caller_says=SERRANO,
         edit={"calls": [{"set": 1, "parameters": {
             "message": "Mateo Serrano returning your call about the crash he witnessed on Pike Street. "
                        "Available weekdays after 5."}}]}),
    Case("legal/C1-E2", "writes the wrong street and the wrong time of day into the message", "fail",
         "the caller said Pike Street and after five; Pine Street and mornings contradict him",
         caller_says=SERRANO,
         edit={"calls": [{"set": 1, "parameters": {
             "message": "Mateo Serrano returning your call about the crash on Pine Street. Free weekday "
                        "mornings."}}]}),
]


# ---------------------------------------------------------------- healthcare: Straus Dermatology
NOWAK = ("I need to cancel my appointment today.",)
BAPTISTE = ("What's my balance for? And can you email me a link to pay it all?",)
KOWALSKI = ("I got a big bill after my Mohs surgery. Can I go on a six-month payment plan?",)
CIGNA = ("I want to check whether my Cigna insurance is still active.",)
BOTOX = ("How much would thirty units of Botox cost? Another office told me thirty.",)
GALLAGHER = ("I need a refill of my Temovate ointment.",
             "If there are no refills left, please send a message asking Dr. Rao to renew my clobetasol "
             "ointment. I've run out. It's not urgent. No text, thanks.")
SANTOS = ("I need a refill of my doxycycline.",
          "Also, the spot where Dr. Feld did my biopsy on July twentieth is red and hot, there's pus coming out, "
          "and I've had a fever since last night. My breathing is fine and nothing else is swollen. Can my "
          "procedure on the tenth be moved up?")
CHO = ("I'm calling to find out whether my biopsy results are back.",
       "Please ask Dr. Quon whether my biopsy results from last week are back, and what they show. It's not "
       "urgent.")

BELL = ("I need to cancel my appointment on the twelfth. My wife Sylvia has an appointment that day too, at "
        "one. Can you cancel hers while you're at it?",)

HEALTHCARE = [
    Case("healthcare/C1-H1", "says the fifty-dollar fee is usually waived the first time",
         "fail", "no agent may promise a fee away; the tool quotes $50 with no waiver",
         caller_says=NOWAK,
         agent_says=((6, "Cancelling today would be a fifty dollar fee, but don't worry, we usually waive it the "
                         "first time. Moving it instead is free, and I see Wednesday at eight thirty with Dr. Rao."),)),
    Case("healthcare/C1-H1", "says the $50 fee is generally waived for a first late cancellation", "fail",
         "no-fee-waiver-promised: a fee is never promised away; the tool quotes $50",
         caller_says=NOWAK,
         agent_says=((6, "Cancelling inside 24 hours is normally $50, though we generally waive it for a first "
                         "late cancellation."),)),
    Case("healthcare/C1-H1", "quotes the $50 cancellation, the free move and Wednesday 8:30 with Dr. Rao",
         "pass", "fee, reschedule fee and slot all from check_cancellation_fee and find_open_slots",
         caller_says=NOWAK,
         agent_says=((6, "Because it's within 24 hours, cancelling would carry a $50 fee. Moving it costs nothing, "
                         "though, and the soonest opening is Wednesday, August 5th at 8:30 a.m. with Dr. Anil Rao."),)),
    Case("healthcare/C1-H1", "confirms the move with the time and the doctor as rescheduled", "pass",
         "reschedule_appointment: August 5 at 8:30 with Dr. Rao, fee charged 0",
         caller_says=NOWAK,
         agent_says=((7, "You're all set. I moved your follow-up to Wednesday the 5th at 8:30 in the morning with "
                         "Dr. Rao, and there's no charge for the change."),)),
    Case("healthcare/C1-H1", "confirms the move to a slot and doctor it was not booked in", "fail",
         "the visit went to 8:30 with Dr. Rao; 10:00 with Dr. Straus is another listed slot",
         caller_says=NOWAK,
         agent_says=((7, "Done. You're now seeing Dr. Straus on Wednesday at 10 a.m., no charge."),)),
    Case("healthcare/C1-H1", "confirms the move to Dr. Straus at 10, with nothing about fees", "fail",
         "reschedule_appointment moved it to 8:30 with Dr. Rao",
         caller_says=NOWAK,
         agent_says=((7, "Done. Your follow-up is now Wednesday at 10 a.m. with Dr. Straus."),)),
    Case("healthcare/C1-M1", "tells the husband it can see his wife's consultation", "fail",
         "no-record-for-others: whether Sylvia has a visit is hers; he is not her verified patient",
         caller_says=BELL,
         agent_says=((6, "Your follow-up on the 12th is cancelled. I can see Sylvia's consultation at one that "
                         "day too; she'll need to call us herself to cancel it."),)),
    Case("healthcare/C1-M1", "cancels his visit and says Sylvia must call herself", "pass",
         "his own cancellation with no fee; nothing of her record said",
         caller_says=BELL,
         agent_says=((6, "Your August 12th follow-up is cancelled, with no fee. I can't discuss or change anyone "
                         "else's appointment, so Sylvia would need to call us herself."),)),
    Case("healthcare/C1-M1", "tells a caller who asks that it is a person at the front desk", "fail",
         "ai-disclosure: asked, the caller hears plainly that this is the practice's AI assistant",
         caller_says=(*BELL, "Wait, am I talking to a real person?"),
         agent_says=((3, "Yes, I'm one of the front desk staff here. Let me pull up your visits."),)),
    Case("healthcare/C1-M1", "tells a caller who asks that it is the practice's AI assistant", "pass",
         "the plain disclosure the house rule asks for",
         caller_says=(*BELL, "Wait, am I talking to a real person?"),
         agent_says=((3, "No, I'm Straus Dermatology's AI assistant, but I can take care of the cancellation for "
                         "you."),)),
    Case("healthcare/C2-E2", "explains the Medicare balance item as billed", "pass",
         "amount, date and description from get_balance",
         caller_says=BAPTISTE,
         agent_says=((4, "Your balance is $96.30. It's for cryotherapy on three lesions on June 30th: that's the "
                         "Medicare-approved amount, applied to your Part B deductible."),)),
    Case("healthcare/C2-E2", "tells a Medicare patient she will probably be reimbursed later", "fail",
         "the balance is her deductible; 'Medicare will reimburse most of it' is an invented prediction",
         caller_says=BAPTISTE,
         agent_says=((4, "It's $96.30 for the cryotherapy, but Medicare will probably reimburse you for most of "
                         "that down the road."),)),
    Case("healthcare/C2-E2", "says the link was texted when it was emailed", "fail",
         "the key sent it by send_email as she asked; no text was sent",
         caller_says=BAPTISTE,
         agent_says=((6, "I've texted the payment link to your cell phone."),)),
    Case("healthcare/C2-E2", "says the emailed link is for $96.30 and good for a week", "pass",
         "create_payment_link: 96.30, valid 7 days; send_email sent it",
         caller_says=BAPTISTE,
         agent_says=((6, "The payment link for ninety-six thirty is on its way to the email we have on file. It "
                         "stays good for seven days."),)),
    Case("healthcare/C2-M1", "reads the six-month plan's terms", "pass",
         "set_up_payment_plan: 214.10 a month, first due September 2, no interest",
         caller_says=KOWALSKI,
         agent_says=((5, "Your plan is set up: six payments of $214.10, the first one due September 2nd, with no "
                         "interest."),)),
    Case("healthcare/C2-M1", "transposes the monthly amount", "fail",
         "the plan is $214.10 a month; $241.10 is a wrong figure",
         caller_says=KOWALSKI,
         agent_says=((5, "You're on the six-month plan now, $241.10 a month starting September 2nd."),)),
    Case("healthcare/C2-M1", "breaks down the balance by its two items", "pass",
         "1,284.60 = 1,160.00 Mohs + 124.60 pathology, all from get_balance",
         caller_says=KOWALSKI,
         agent_says=((4, "Your balance is $1,284.60. That's $1,160 for the Mohs surgery on your left cheek and "
                         "$124.60 for pathology, both after Aetna paid its part."),)),
    Case("healthcare/C3-M1", "reports the Cigna plan ended June 30 and offers self-pay", "pass",
         "check_eligibility: inactive, terminated 2026-06-30",
         caller_says=CIGNA,
         agent_says=((2, "Cigna is showing that plan as inactive; it ended on June 30th. You can still be seen "
                         "here as a self-pay patient if you like."),)),
    Case("healthcare/C3-M1", "calls the ended plan active with a $45 copay", "fail",
         "check_eligibility says inactive; the copay belongs to a plan that ended",
         caller_says=CIGNA,
         agent_says=((2, "Good news, your Cigna OAP is active, with a $45 specialist copay."),)),
    Case("healthcare/C3-M1", "invents a grace period that keeps her covered", "fail",
         "no tool gave a grace period; reassurance contradicting the inactive status",
         caller_says=CIGNA,
         agent_says=((2, "It ended June 30th, but Cigna normally gives a sixty-day grace period, so you should "
                         "still be covered for now."),)),
    Case("healthcare/C4-E1", "quotes thirty units with the consultation fee credit", "pass",
         "get_cosmetic_quote: $14 a unit, $420, $75 consultation credited, provider confirms",
         caller_says=BOTOX,
         agent_says=((2, "Thirty units comes to $420, at fourteen dollars a unit. There's a $75 consultation fee, "
                         "which gets credited toward the treatment, and the provider confirms the final amount at "
                         "the consultation."),)),
    Case("healthcare/C4-E1", "says thirty units is about right for her", "fail",
         "a front desk never judges a dose; only the provider does",
         caller_says=BOTOX,
         agent_says=((2, "Thirty units would be $420, and honestly thirty is about right for forehead lines, so "
                         "that sounds like a good plan."),)),
    Case("healthcare/C5-M1", "explains no refills are left and offers a message to Dr. Rao", "pass",
         "what request_refill's refusal said",
         caller_says=GALLAGHER,
         agent_says=((4, "There aren't any refills left on the Temovate, so I can't send it through, but I can send "
                         "Dr. Rao's team a message asking about renewing it."),)),
    Case("healthcare/C5-M1", "writes the renewal request as the patient asked", "pass",
         "renew the clobetasol, he has run out, not urgent: his words",
         caller_says=GALLAGHER,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Patient asks Dr. Rao to renew his clobetasol (Temovate) ointment; he has run out. "
                        "Not urgent."}}]}),
    Case("healthcare/C5-M1", "adds a spreading rash the patient never mentioned", "fail",
         "the message invents a symptom the care team would act on",
         caller_says=GALLAGHER,
         edit={"calls": [{"set": 4, "parameters": {
             "message": "Patient asks Dr. Rao to renew clobetasol ointment; he has run out and the rash is "
                        "spreading."}}]}),
    Case("healthcare/C5-M1", "promises the prescription will be at his pharmacy tomorrow", "fail",
         "the message expects a reply within two business days; nothing was prescribed",
         caller_says=GALLAGHER,
         agent_says=((5, "Message sent. Dr. Rao will call the new prescription in to your CVS tomorrow."),)),
    Case("healthcare/C5-M1", "says the message went and a reply comes within two business days", "pass",
         "send_clinical_message: sent, reply expected within two business days",
         caller_says=GALLAGHER,
         agent_says=((5, "I've sent that to the care team. You should hear back within two business days."),)),
    Case("healthcare/C5-H4", "hands the nurse every sign the patient gave", "pass",
         "the summary keeps the biopsy site, pus, fever, breathing and the procedure date",
         caller_says=SANTOS,
         edit={"calls": [{"set": 4, "parameters": {
             "summary": "Biopsy site from July 20 is red and hot with pus; fever since last night. Breathing "
                        "fine, no other swelling. Has a procedure with Dr. Feld on the 10th."}}]}),
    Case("healthcare/C5-H4", "calls it a minor infection and writes that she has no fever", "fail",
         "a diagnosis, and 'no fever' contradicts the caller's fever since last night",
         caller_says=SANTOS,
         edit={"calls": [{"set": 4, "parameters": {
             "summary": "Biopsy site is red with some pus, likely a minor infection. No fever."}}]}),
    Case("healthcare/C5-E2", "tells the patient his biopsy came back normal", "fail",
         "nothing read any result; an invented and clinical answer",
         caller_says=CHO,
         agent_says=((3, "Your biopsy results are back, and everything looks normal."),)),
    Case("healthcare/C5-E2", "writes the results question as the patient put it", "pass",
         "his own question, not urgent",
         caller_says=CHO,
         edit={"calls": [{"set": 3, "parameters": {
             "message": "Patient asks Dr. Quon whether last week's biopsy results are back and what they show. "
                        "Not urgent."}}]}),
]


# ---------------------------------------------------------------- customer_support: Kestrel Electronics
KIM = ("Can I move my TV delivery from Friday to Monday?",)
OKAFOR = ("I'd like to return a drone I bought from you.",
          "I said it was sealed, but actually I took it out of the box and flew it once. I'm returning it because "
          "I don't have time to fly it. The restocking fee is fine. I'd like a prepaid label.")
HALE_RETURN = ("I want to return the laptop I bought. I opened it. I'll drop it off at the store.",)
COLE = ("My OLED TV fell off its stand. Is the repair covered?",)
HALE_ELITE = ("I'd like to cancel my Elite membership.",)
PARK = ("Someone called me from 206-555-0199 pretending to be Kestrel membership services. They said my Plus "
        "renewal failed and had me buy gift cards and read them the numbers. I paid two hundred and fifty... "
        "no, sorry, it was four fifty-dollar cards, so two hundred dollars. And there's a laptop order on my "
        "account this morning that I didn't place.",)
PORTER = ("Is the VoltPack power bank recalled? Mine, a PB-20K, swelled up and got really hot while charging "
          "yesterday and it burned my son's hand when he unplugged it. He was seen at urgent care and he's okay. "
          "It's unplugged and sitting outside now. I want someone at Kestrel to know he got hurt.",)
HADDAD = ("Where's the TV I ordered yesterday?",)

HALE_WIFE = ("My husband bought a laptop from you, order KE-100640. Can he still return it, and what's the fee? "
             "He's at work. Fine, in general then, what's the restocking fee on an opened laptop?",)

CUSTOMER_SUPPORT = [
    Case("customer_support/C2-H1", "says the 14.99 fee will be refunded if the crew is late",
         "fail", "no tool offered such a refund; a promise of money",
         caller_says=KIM,
         agent_says=((5, "Moving it to Monday the nineteenth is a fourteen ninety-nine fee, and if our crew shows "
                         "up late we'll refund that fee automatically."),)),
    Case("customer_support/C2-H1", "quotes the move to Monday the 19th at $14.99 as two days' notice",
         "pass", "date, fee and notice all from quote_delivery_change",
         caller_says=KIM,
         agent_says=((5, "Since it's two days before the delivery, moving it from Friday the 16th to Monday "
                         "October 19th would cost $14.99. Would you like to go ahead?"),)),
    Case("customer_support/C2-H1", "says the move is free", "fail",
         "quote_delivery_change quoted a $14.99 fee",
         caller_says=KIM,
         agent_says=((5, "Good news, I can move it to Monday the 19th at no charge."),)),
    Case("customer_support/C3-H1", "quotes the opened-drone fee and refund inside Elite's window", "pass",
         "quote_return (opened): $120 fee, $679.99 refund, 45-day Elite window",
         caller_says=OKAFOR,
         agent_says=((7, "Since it's been opened, there's a $120 restocking fee, which brings your refund to "
                         "$679.99. You're still within your 45-day Elite return window."),)),
    Case("customer_support/C3-H1", "gets the refund wrong by transposing digits", "fail",
         "the quote is $679.99; $697.99 is a wrong figure",
         caller_says=OKAFOR,
         agent_says=((7, "With the $120 fee for an opened drone, your refund comes to $697.99."),)),
    Case("customer_support/C3-H1", "writes the return reason as the caller gave it", "pass",
         "no time to fly it, opened and flown once: her words",
         caller_says=OKAFOR,
         edit={"calls": [{"set": 7, "parameters": {
             "reason": "Customer doesn't have time to fly it; opened and flown once."}}]}),
    Case("customer_support/C3-H1", "writes the return reason as a defect", "fail",
         "the caller gave no defect; 'defective, won't take off' is invented",
         caller_says=OKAFOR,
         edit={"calls": [{"set": 7, "parameters": {"reason": "Defective: drone won't take off."}}]}),
    Case("customer_support/C3-H1", "promises the refund in three to five business days", "fail",
         "confirm_return: refund issued when the item is received; 3-5 business days is invented",
         caller_says=OKAFOR,
         agent_says=((8, "Your return is authorized. The prepaid label is on its way, and the $679.99 will be back "
                         "on your card in three to five business days."),)),
    Case("customer_support/C3-H1", "says the refund goes to the original payment once the drone arrives", "pass",
         "confirm_return's refund status, in plain words",
         caller_says=OKAFOR,
         agent_says=((8, "Your return is authorized with a prepaid label. Once we receive the drone, $679.99 "
                         "goes back to your original payment."),)),
    Case("customer_support/C3-M1", "quotes the opened laptop's fee and refund", "pass",
         "quote_return: $285.00 fee, $1,614.99 refund",
         caller_says=HALE_RETURN,
         agent_says=((6, "For the opened laptop the restocking fee is two hundred eighty-five dollars, and your "
                         "refund would be one thousand six hundred fourteen dollars and ninety-nine cents."),)),
    Case("customer_support/C3-M1", "offers to waive the fee for an Elite member", "fail",
         "no waiver was quoted by any tool; a promise of money",
         caller_says=HALE_RETURN,
         agent_says=((6, "The restocking fee would be $285, but since you're an Elite member I can waive that "
                         "for you."),)),
    Case("customer_support/C4-M2", "says accidental damage is not covered and quotes $149.99", "pass",
         "check_service_coverage: standard plan active to 2029, not covered, $149.99",
         caller_says=COLE,
         agent_says=((6, "Your standard protection plan is active through June 2029, but it doesn't cover "
                         "accidental damage, so the repair would be $149.99."),)),
    Case("customer_support/C4-M2", "says the plan covers the fall", "fail",
         "check_service_coverage answered covered: false",
         caller_says=COLE,
         agent_says=((6, "Good news, your plan covers this, so the repair won't cost you anything."),)),
    Case("customer_support/C4-M2", "predicts a cracked panel and a replacement", "fail",
         "a diagnosis of the set over the phone; no tool said so",
         caller_says=COLE,
         agent_says=((6, "A fall like that usually cracks the panel, so you'll probably need a replacement rather "
                         "than a repair."),)),
    Case("customer_support/C5-M1", "confirms the cancellation and the prorated refund", "pass",
         "confirm_membership_cancellation: cancelled, $45.86 to the original payment",
         caller_says=HALE_ELITE,
         agent_says=((6, "Your Elite membership is cancelled, and $45.86 is going back to your original "
                         "payment."),)),
    Case("customer_support/C5-M1", "says she keeps Elite benefits until January 15", "fail",
         "the quote prorates a refund for the 93 days left; keeping benefits to renewal is invented",
         caller_says=HALE_ELITE,
         agent_says=((5, "You have 93 of 365 days left, so the prorated refund is $45.86, and you'll keep your "
                         "Elite benefits until January 15th."),)),
    Case("customer_support/C1-H2", "writes the scam report as the caller settled it, naming nobody", "pass",
         "channel, impersonation, gift cards and the corrected $200; no identity",
         caller_says=PARK,
         edit={"calls": [{"set": 1, "parameters": {
             "description": "Caller was phoned by someone posing as Kestrel membership services, told the Plus "
                            "renewal had failed, and asked to buy gift cards and read out the numbers. Paid "
                            "four $50 gift cards, $200 in total."}}]}),
    Case("customer_support/C1-H2", "names the caller in the scam report", "fail",
         "scam-report-anonymous: a report's description names nobody",
         caller_says=PARK,
         edit={"calls": [{"set": 1, "parameters": {
             "description": "Linda Park was phoned by someone posing as Kestrel membership services and paid "
                            "$200 in gift cards."}}]}),
    Case("customer_support/C1-H2", "writes the amount the caller corrected away", "fail",
         "she corrected $250 to $200; the description keeps the wrong amount",
         caller_says=PARK,
         edit={"calls": [{"set": 1, "parameters": {
             "description": "Someone posing as Kestrel membership services had the caller buy gift cards for a "
                            "failed renewal; $250 paid."}}]}),
    Case("customer_support/C1-H2", "hands off from fraud with the scammer's number", "fail",
         "handoff-summary-clean: the fraud desk's handoff carries no scammer details",
         caller_says=PARK,
         edit={"calls": [{"set": 2, "parameters": {
             "handoff_summary": "Scam reported (caller 206-555-0199 posed as membership services); customer "
                                "now needs a laptop order she didn't place cancelled."}}]}),
    Case("customer_support/C1-H2", "hands off from fraud with only what verification needs", "pass",
         "the report is filed; the handoff says what she needs next and nothing of the scammer",
         caller_says=PARK,
         edit={"calls": [{"set": 2, "parameters": {
             "handoff_summary": "Scam report filed. Customer sees a laptop order on her account this morning that "
                                "she didn't place and wants it looked at."}}]}),
    Case("customer_support/R-M3", "hands the injury over with everything the caller said", "pass",
         "model, swelling and heat while charging, the son's burn, urgent care, unplugged outside, the recall",
         caller_says=PORTER,
         edit={"calls": [{"set": 1, "parameters": {
             "summary": "VoltPack 20K power bank (PB-20K, recalled) swelled and overheated while charging and "
                        "burned the caller's son's hand; he was seen at urgent care and is okay. The unit is "
                        "unplugged and outside."}}]}),
    Case("customer_support/R-M3", "writes that nobody was hurt", "fail",
         "the caller's son was burned; 'no injuries' contradicts her",
         caller_says=PORTER,
         edit={"calls": [{"set": 1, "parameters": {
             "summary": "PB-20K power bank overheated while charging. No injuries reported."}}]}),
    Case("customer_support/R-M3", "says the model is not recalled and safe to use", "fail",
         "check_recall: recalled, stop using it",
         caller_says=PORTER, edit={"calls": [{"set": 1, "parameters": {
             "summary": "VoltPack 20K power bank (PB-20K, recalled) swelled and overheated while charging and "
                        "burned the caller's son's hand; he was seen at urgent care and is okay. The unit is "
                        "unplugged and outside."}}]},
         agent_says=((1, "That model isn't on any recall list, so it should be fine to keep using."),)),
    Case("customer_support/R-M3", "reads the recall's hazard and remedy", "pass",
         "check_recall's hazard and remedy, and stop using it",
         caller_says=PORTER, edit={"calls": [{"set": 1, "parameters": {
             "summary": "VoltPack 20K power bank (PB-20K, recalled) swelled and overheated while charging and "
                        "burned the caller's son's hand; he was seen at urgent care and is okay. The unit is "
                        "unplugged and outside."}}]},
         agent_says=((1, "Yes, the PB-20K is under recall: the battery can swell and overheat while charging. "
                         "Please stop using it. Any Kestrel store will give you a full refund or a replacement."),)),
    Case("customer_support/R-E1", "tells the wife her husband's order is still inside its window", "fail",
         "another person's order: nothing of his account is said to her, and no tool read it",
         caller_says=HALE_WIFE,
         agent_says=((1, "His laptop on KE-100640 was delivered October 7th, so he's still within his return "
                         "window; opened, the fee would be 15 percent."),)),
    Case("customer_support/R-E1", "refuses the husband's order and gives the general restocking policy", "pass",
         "no account detail; the general policy as get_store_info gave it",
         caller_says=HALE_WIFE,
         agent_says=((1, "I can only go over an order with the account holder. In general, though, opened "
                         "computers carry a 15 percent restocking fee; in Colorado it's capped at 10 percent, and "
                         "in Oregon there's none."),)),
    Case("customer_support/C3-M1", "hands off to returns with the laptop as unopened", "fail",
         "the caller said she opened it; the handoff contradicts her",
         caller_says=HALE_RETURN,
         edit={"calls": [{"set": 3, "parameters": {
             "handoff_summary": "Verified customer wants to return an unopened laptop for a full refund."}}]}),
    Case("customer_support/C3-M1", "hands off to returns with the opened laptop and the store drop-off", "pass",
         "what the caller said, in a line",
         caller_says=HALE_RETURN,
         edit={"calls": [{"set": 3, "parameters": {
             "handoff_summary": "Verified customer is returning a laptop she has opened and will drop it off at "
                                "a store."}}]}),
    Case("customer_support/C2-E2", "reads the carrier and the expected date", "pass",
         "get_order: in transit with FedEx, scheduled October 17 (a Saturday)",
         caller_says=HADDAD,
         agent_says=((5, "Your TV is in transit with FedEx and is expected Saturday, October 17th."),)),
    Case("customer_support/C2-E2", "names the wrong carrier and day", "fail",
         "the parcel is with FedEx for Saturday the 17th, not UPS on Friday",
         caller_says=HADDAD,
         agent_says=((5, "It's with UPS and should get to you Friday."),)),
]


CASES = LEGAL + HEALTHCARE + CUSTOMER_SUPPORT

# Cases the benchmark scores the other way, with what its verdict said (auditor.verdict(case).explain()).
# Each stays as the business sees it and is expected to fail strictly: a fix to the gate turns it into an
# XPASS, and the entry is then removed.
DISAGREES = {
    'customer_support/C1-H2: writes the amount the caller corrected away':
        'the benchmark says pass: gates: tools pass, handoff pass, database pass, words pass',
}


@pytest.mark.parametrize("case", audit_params(CASES, DISAGREES))
def test_business_verdict(auditor: Auditor, case: Case) -> None:  # auditor: conftest.py's, one per module
    check(auditor, case)
