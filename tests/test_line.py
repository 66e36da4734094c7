"""The simulated phone line: error rates, no clean digit swaps, determinism, each error's span,
the clean line, rewriters, and fitting a profile from (scripted, transcript) pairs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from pytest_callm.call.caller import CallerTurn
from pytest_callm.phone.line import CleanLine, Heard, PhoneLine, make_line
from pytest_callm.phone.errors import ERROR_TYPES, Stream, Turn, is_clean_swap, set_draw
from pytest_callm.phone.turn_mix import synthetic_turns
from pytest_callm.phone.spoken_numbers import find_numbers
from pytest_callm.phone.error_profile import (TARGETS, Profile, ProfileError, classify_pair, default_profile_path,
                                       fit_profile, fit_profile_main, load_profile, name_parts, realized_rates,
                                       turn_kind)
from pytest_callm.phone.sounds import sounds
from pytest_callm.model.protocol import ModelReply

pytestmark = pytest.mark.xdist_group("line")  # its module fixture (20,000 turns) runs once, on one worker

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HABITS = {"phone": "dashes", "zero": "oh", "thousands": "comma", "ordinal": "suffix"}


def simulated_calls(turns: int, seed: str, per_call: int = 8):
    """(task, attempt, turn index, said, caller name): calls of eight caller turns, five attempts a task."""
    mix = synthetic_turns(turns, seed, per_call)
    for n, (said, caller) in enumerate(mix):
        call, turn = divmod(n, per_call)
        task, attempt = divmod(call, 5)
        yield f"healthcare/C{task % 6 + 1}-T{task}", attempt + 1, turn, said, caller


@pytest.fixture(scope="module")
def run_20k():
    """20,000 caller turns of the realistic mix through the default line."""
    out = []
    lines: dict[tuple, PhoneLine] = {}
    for task, attempt, turn, said, caller in simulated_calls(20_000, "tests/line-mix"):
        if (task, attempt) not in lines:
            lines[task, attempt] = make_line("default", task, attempt, caller)
        out.append((said, caller, lines[task, attempt].transmit(said, turn)))
    return out


def errors_of(heard: Heard) -> list[dict]:
    return [e for e in heard.errors if not e.get("style")]


# ----------------------------------------------------------------------------------------------
# the resolution checks: rates, no clean swap, determinism

def test_realized_rates_over_20000_turns_are_within_half_a_point_of_the_targets(run_20k):
    rates = realized_rates([h.errors for _, _, h in run_20k])
    assert rates["turns"] == 20_000
    for key, target in TARGETS.items():
        row = rates["totals"][key]
        assert row["target"] == target
        assert abs(row["realized"] - target) <= 0.5, (key, row)
    # the profile itself is calibrated on this very sample: what remains is the draws' own noise
    profile = load_profile()
    expected_none = sum(profile.table(turn_kind(said, name_parts(caller)))[0][0] for said, caller, _ in run_20k)
    assert abs(100 * expected_none / len(run_20k) - TARGETS["none"]) < 0.15
    # every type of error happens, near the rate the profile implies (fallbacks, when a drawn type
    # cannot apply to a turn, move a few tenths of a point between types)
    for t, row in rates["types"].items():
        assert row["realized"] > 0.3 and abs(row["realized"] - row["target"]) < 0.75, (t, row)


def test_no_number_the_line_changed_is_a_clean_digit_swap_of_what_was_said(run_20k):
    """For every number the line changed, its digits as said and as finally heard must not be of
    equal length and differ in exactly one position. Checked twice: from the line's own records
    (per number, the said digits against the last digits written) and by aligning said and heard."""
    changed = 0
    for said, caller, heard in run_20k:
        final: dict[int, tuple[str, str]] = {}
        for e in errors_of(heard):
            if e["type"] in ("digits_dropped", "digits_added"):
                final[e["number"]] = (e["said_digits"], e["digits_after"])
        for said_digits, heard_digits in final.values():
            changed += 1
            assert heard_digits != said_digits
            assert not is_clean_swap(said_digits, heard_digits), (said, heard.pieces)
        if final:
            _, swaps = classify_pair(said, heard.pieces, name_parts(caller))
            assert swaps == 0, (said, heard.pieces)
    assert changed > 300  # the check saw plenty of changed numbers


def test_is_clean_swap_is_exactly_equal_length_and_one_position():
    assert is_clean_swap("2065550142", "2065550143")
    assert not is_clean_swap("2065550142", "206550142")  # a digit lost
    assert not is_clean_swap("2065550142", "20655550142")  # a digit added
    assert not is_clean_swap("2065550142", "2065550124")  # two positions differ
    assert not is_clean_swap("2065550142", "2065550142")


DETERMINISM_TURNS = [("legal/C4-H3", 2, i, said) for i, (said, _) in enumerate(synthetic_turns(60, "det"))]


def _transmit_all(attempt_shift: int = 0) -> list:
    out = []
    for task, attempt, turn, said in DETERMINISM_TURNS:
        heard = make_line("default", task, attempt + attempt_shift, "Dana Whitfield").transmit(said, turn)
        out.append([heard.pieces, heard.errors])
    return out


def test_the_same_task_attempt_and_turn_give_the_same_transcript_in_another_process():
    here = _transmit_all()
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from tests.test_line import _transmit_all; "
            "print(json.dumps(_transmit_all()))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # a different salt for hash(): it must not matter
    done = subprocess.run([sys.executable, "-c", code, REPO], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout)
    assert there == json.loads(json.dumps(here))
    assert any(errors_of(Heard(p, e)) for p, e in here)  # some turns did carry errors


def test_another_attempt_meets_different_draws():
    first, second = _transmit_all(), _transmit_all(attempt_shift=1)
    assert first != second
    differing = sum(a != b for a, b in zip(first, second))
    assert differing >= 8
    # the draw itself is per task, attempt and turn, and nothing else
    u = lambda task, attempt, turn: set_draw("callm-line/1", task, attempt, "set", turn=turn)  # noqa: E731
    assert u("t", 1, 0) == u("t", 1, 0) != u("t", 2, 0)
    assert u("t", 1, 0) != u("t", 1, 1) and u("t", 1, 0) != u("u", 1, 0)
    assert all(0 <= u("t", 1, n) < 1 for n in range(100))


def test_the_same_attempt_meets_the_same_draws_whatever_the_model_said_before():
    """Attempt k of a task draws the same error set at turn n for every model: the draw does not
    depend on earlier turns or on the line object."""
    said = "I'd like to book a check-up for my dog Biscuit please."
    a = make_line("default", "vet/C2-E2", 3, "Dana Whitfield")
    b = make_line("default", "vet/C2-E2", 3, "Dana Whitfield")
    for turn in range(5):
        a.transmit("Something else entirely, said first.", turn)
    assert a.transmit(said, 7) == b.transmit(said, 7)


# ----------------------------------------------------------------------------------------------
# each error changes only its span

SAMPLES = {
    "digits_dropped": "Sure, my number is two oh six, five five five, oh one four two, thanks.",
    "digits_added": "The bill says forty-five dollars and I paid it already.",
    "number_as_words": "Do you have anything on April 5th at 10:30 in the morning?",
    "misheard_name": "Hi, this is Dana Whitfield calling about my dog.",
    "misheard_word": "I need to reschedule the appointment for my dog.",
    "misheard_phrase": "Could you check if my insurance is accepted at that office?",
    "clipped_start": "Yeah so I would like to book a visit next week.",
    "clipped_end": "I would like to book a visit next week please.",
    "split": "I called yesterday, and nobody called me back about the refund.",
    "no_final_period": "That works for me, thank you.",
    "lowercase": "Okay, Tuesday at the Park Avenue office works.",
}


def apply_only(kind: str, said: str, seed: int):
    turn = Turn.from_said(said, set(name_parts("Dana Whitfield")), HABITS, Stream("unit", kind, seed))
    before = turn.text
    entry = turn.apply_one(kind)
    return before, turn, entry


@pytest.mark.parametrize("kind", ERROR_TYPES)
def test_each_error_changes_only_its_span(kind):
    said = SAMPLES[kind]
    for seed in range(25):
        before, turn, entry = apply_only(kind, said, seed)
        assert entry is not None and entry["type"] == kind
        at, old, new = entry["at"], entry["before"], entry["after"]
        assert before[at:at + len(old)] == old, entry
        after = "\n".join(turn.pieces())
        assert before[:at] + new + before[at + len(old):] == after, entry
        assert old != new
        if kind == "split":
            assert len(turn.pieces()) == 2 and all(turn.pieces())
            assert old.strip() == "" and new == "\n"
        elif kind == "lowercase":
            assert after == before.lower()
        elif kind == "no_final_period":
            assert old in ".?!" and new == "" and at == len(before.rstrip()) - 1
        elif kind in ("clipped_start", "clipped_end"):
            assert new == "" and 1 <= len(old.split()) <= 2
            assert (at == 0) if kind == "clipped_start" else after.endswith(before.rstrip()[-1])
        elif kind in ("digits_dropped", "digits_added"):
            a, b = entry["digits_before"], entry["digits_after"]
            assert len(b) - len(a) in ((-1, -2) if kind == "digits_dropped" else (1,))
            assert not is_clean_swap(a, b)
            assert [n.digits for n in find_numbers(new)] == [b]
        elif kind == "number_as_words":  # the same numbers, one of them now in words
            assert [n.digits for n in find_numbers(after)] == [n.digits for n in find_numbers(before)]
            assert not any(c.isdigit() for c in new) and any(c.isdigit() for c in old)
        else:  # misheard: a dictionary sound-alike of the span
            assert entry["source"] == "dictionary"
            if kind == "misheard_name":
                assert old.lower() in ("dana", "whitfield")
            if kind != "misheard_phrase":
                assert _phones_apart(old, new) <= 1


def _phones_apart(a: str, b: str) -> int:
    """Fewest phoneme edits between any pronunciations of two words (stress ignored)."""
    s = sounds()
    best = 99
    for p in s.pronunciations(a):
        for q in s.pronunciations(b):
            best = min(best, _edit(p, q))
    return best


def _edit(p, q) -> int:
    row = list(range(len(q) + 1))
    for i, x in enumerate(p, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(q, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def test_an_error_that_cannot_apply_is_replaced_by_one_that_can():
    turn = Turn.from_said("Yes.", set(), HABITS, Stream("fallback"))
    turn.apply(["digits_dropped"])  # no number in the turn
    (entry,) = turn.errors
    assert entry["drawn"] == "digits_dropped" and entry["type"] != "digits_dropped"


def test_two_digit_errors_on_one_number_never_add_up_to_a_clean_swap():
    for seed in range(200):
        turn = Turn.from_said("It's 2065550142.", set(), HABITS, Stream("twice", seed))
        turn.apply(["digits_added", "digits_dropped"])
        digit_errors = [e for e in turn.errors if e["type"].startswith("digits_")]
        last = digit_errors[-1]
        assert not is_clean_swap(last["said_digits"], last["digits_after"])
        assert last["said_digits"] != last["digits_after"]


def test_the_recognizer_writes_spoken_numbers_as_digits_and_says_so():
    line = make_line("default", "t", 1)
    heard = PhoneLine(Profile(_one_set_profile([])), "t", 1).transmit(
        "My number is two oh six, five five five, oh one four two and I owe forty-five dollars.", 0)
    assert isinstance(line, PhoneLine)
    text = heard.pieces[0]
    assert "$45" in text and any(d in text for d in ("206-555-0142", "2065550142", "206 555 0142"))
    assert all(e.get("style") for e in heard.errors) and len(heard.errors) == 2
    assert realized_rates([heard.errors])["totals"]["none"]["realized"] == 100.0


# ----------------------------------------------------------------------------------------------
# the clean line, specs, profiles

def test_the_clean_line_is_the_identity():
    for spec in ("clean", "CLEAN", "off"):
        line = make_line(spec, "t", 1, "Dana Whitfield")
        assert isinstance(line, CleanLine)
        for turn, said in enumerate(["Yes.", "  two oh six, five five five  ", "Dana Whitfield, $45.", ""]):
            heard = line.transmit(said, turn)
            assert heard.pieces == [said] and heard.errors == []
    assert asyncio.run(CleanLine().atransmit("Hi.", 0)).pieces == ["Hi."]


def test_a_line_spec_is_clean_default_or_a_profile_file(tmp_path):
    assert isinstance(make_line("default", "t", 1), PhoneLine)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_one_set_profile(["lowercase"])))
    heard = make_line(str(path), "t", 1).transmit("Hello There.", 0)
    assert heard.pieces == ["hello there."]
    with pytest.raises(ProfileError, match="no such line profile"):
        make_line(str(tmp_path / "missing.json"), "t", 1)
    path.write_text(json.dumps({**_one_set_profile(["bogus"])}))
    with pytest.raises(ProfileError, match="unknown error type 'bogus'"):
        make_line(str(path), "t", 1)


def _one_set_profile(errors: list[str]) -> dict:
    return {"format": "callm-line-profile/1", "min_turns": 0,
            "kinds": {"name=0 num=0 words=4-9": {"turns": 1, "sets": [[errors, 1]]}}}


def test_the_shipped_profile_says_how_it_was_made_and_hits_the_targets_on_its_mix():
    data = json.loads(default_profile_path().read_text())
    assert "Not fitted on real calls" in data["metadata"]["how"]
    assert data["targets"] == TARGETS
    turns = sum(k["turns"] for k in data["kinds"].values())
    shares = defaultdict(float)
    for entry in data["kinds"].values():
        total = sum(w for _, w in entry["sets"])
        for errors, weight in entry["sets"]:
            shares[min(len(errors), 2)] += entry["turns"] * weight / total
    assert abs(100 * shares[0] / turns - TARGETS["none"]) < 0.05
    assert abs(100 * shares[2] / turns - TARGETS["two_plus"]) < 0.05
    assert len(data["kinds"]) == 40


def test_turn_kinds_sort_by_name_longest_number_and_words():
    names = name_parts("Dana Whitfield")
    assert turn_kind("Yes.", names) == "name=0 num=0 words=1-3"
    assert turn_kind("It's Dana Whitfield.", names) == "name=1 num=0 words=1-3"
    assert turn_kind("My number is two oh six, five five five, oh one four two.", names) == "name=0 num=8+ words=10-19"
    assert turn_kind("I owe $45.50 on it.", names) == "name=0 num=3-4 words=4-9"


def test_numbers_are_found_in_words_and_digits():
    got = {(n.digits, n.form) for n in find_numbers(
        "Call two oh six, five five five, oh one four two on April fifth, twenty twenty-six at ten thirty "
        "about forty-five dollars and fifty cents, case 48213, one more thing.")}
    assert got == {("2065550142", "sequence"), ("5", "ordinal"), ("2026", "year"), ("1030", "time"),
                   ("4550", "money"), ("48213", "sequence")}


# ----------------------------------------------------------------------------------------------
# realized rates for the run summary

def test_realized_rates_count_errors_per_100_turns_and_skip_the_number_style():
    style = {"type": "number_format", "style": True, "before": "five", "after": "5"}
    turns = [[], [style], [{"type": "lowercase"}], [{"type": "split"}, {"type": "misheard_word"}]]
    rates = realized_rates(turns)
    assert rates["turns"] == 4
    assert rates["totals"]["none"] == {"realized": 50.0, "target": 76.6}
    assert rates["totals"]["one"]["realized"] == 25.0 and rates["totals"]["two_plus"]["realized"] == 25.0
    assert rates["types"]["split"]["realized"] == 25.0
    assert rates["types"]["lowercase"]["target"] == load_profile().type_rates["lowercase"]
    assert realized_rates([])["totals"]["none"]["realized"] is None


# ----------------------------------------------------------------------------------------------
# a rewrite model for misheard spans

def _misheard_profile() -> Profile:
    return Profile(_one_set_profile(["misheard_word"]))


def test_a_rewriter_words_the_misheard_span_and_only_that_span():
    seen = []

    def rewriter(span, context):
        seen.append((span, context))
        return "zebra"

    said = "I need to reschedule the appointment for my dog."
    heard = PhoneLine(_misheard_profile(), "t", 1, rewriter=rewriter).transmit(said, 0)
    (entry,) = errors_of(heard)
    assert entry["source"] == "model" and entry["after"] == "zebra"
    span, context = seen[0]
    assert span == entry["before"] and context["type"] == "misheard_word" and context["turn_index"] == 0
    assert context["suggestion"] and context["task_id"] == "t"
    at = entry["at"]
    assert heard.pieces[0] == said[:at] + "zebra" + said[at + len(span):]


def test_an_unusable_rewrite_keeps_the_dictionary_sound_alike():
    said = "I need to reschedule the appointment for my dog."
    plain = PhoneLine(_misheard_profile(), "t", 1).transmit(said, 0)
    for reply in ("", "I need to reschedule the appointment for my cat today", "twenty", None):
        heard = PhoneLine(_misheard_profile(), "t", 1, rewriter=lambda s, c, r=reply: r).transmit(said, 0)
        assert heard == plain and errors_of(heard)[0]["source"] == "dictionary"


def test_an_async_rewriter_works_in_transmit_and_in_atransmit():
    async def rewriter(span, context):
        await asyncio.sleep(0)
        return "walrus"

    said = "I need to reschedule the appointment for my dog."
    line = PhoneLine(_misheard_profile(), "t", 1, rewriter=rewriter)

    async def inside_a_loop():
        return line.transmit(said, 0), await line.atransmit(said, 0)

    sync_heard, async_heard = asyncio.run(inside_a_loop())
    assert sync_heard == async_heard and "walrus" in sync_heard.pieces[0]


# ----------------------------------------------------------------------------------------------
# fitting a profile

def test_fitting_on_the_lines_own_output_recovers_its_rates(run_20k, tmp_path):
    sample = run_20k[:8000]
    jsonl = tmp_path / "calls.jsonl"
    with jsonl.open("w") as fh:
        for said, caller, heard in sample:
            transcript = heard.pieces if len(heard.pieces) > 1 else heard.pieces[0]
            fh.write(json.dumps({"scripted": said, "transcript": transcript, "caller_name": caller}) + "\n")
    out = tmp_path / "fitted.json"
    assert fit_profile_main([str(jsonl), "-o", str(out)]) == 0
    fitted = json.loads(out.read_text())
    applied = realized_rates([h.errors for _, _, h in sample])
    for key in ("none", "one", "two_plus"):
        assert abs(fitted["targets"][key] - applied["totals"][key]["realized"]) < 1.0, key
    for t in ERROR_TYPES:
        assert abs(fitted["type_rates"][t] - applied["types"][t]["realized"]) < 0.5, t
    # turn by turn, the alignment finds the very errors the line applied
    exact = sum(classify_pair(s, h.pieces, name_parts(c))[0] == sorted(e["type"] for e in errors_of(h))
                for s, c, h in sample)
    assert exact / len(sample) > 0.97
    # and a run can point at the fitted profile
    line = make_line(str(out), "t", 1, "Dana Whitfield")
    assert isinstance(line, PhoneLine) and line.profile.targets == fitted["targets"]
    heard = [line.transmit(said, i) for i, (said, _, _) in enumerate(sample[:3000])]
    assert abs(realized_rates([h.errors for h in heard], line.profile)["totals"]["none"]["realized"]
               - fitted["targets"]["none"]) < 2.5


def test_fit_rejects_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"scripted": "Hi."}\n')
    assert fit_profile_main([str(bad), "-o", str(tmp_path / "x.json")]) == 2
    assert "want" in capsys.readouterr().err
    with pytest.raises(ProfileError):
        fit_profile([])


# ----------------------------------------------------------------------------------------------
# the engine stores what was said, what was heard and the errors

class OneLineCaller:
    def __init__(self, line: str):
        self.lines = [line]

    async def respond(self, agent_said: str) -> CallerTurn:
        return CallerTurn(self.lines.pop(0)) if self.lines else CallerTurn("", hang_up=True)


class SaysSure:
    name = "says-sure"

    async def respond(self, request) -> ModelReply:
        return ModelReply(text="Sure.", ttft_ms=1.0)


def test_a_call_through_the_phone_line_records_said_heard_and_errors(vet_pack, tool_server):
    from pytest_callm.call.engine import run_call
    from pytest_callm.toolserver.client import ToolClient

    line = PhoneLine(Profile(_one_set_profile(["split", "lowercase"])), "vet/C1", 1)

    async def go():
        tools = ToolClient(tool_server.url)
        try:
            return await run_call(pack=vet_pack, model=SaysSure(), tools=tools, line=line,
                                  caller=OneLineCaller("I would like to book a visit for my dog Biscuit."),
                                  call_id="line-test-1", task_id="vet/C1", attempt=1)
        finally:
            await tools.aclose()

    trajectory = asyncio.run(go())
    turn = next(t for t in trajectory.transcript if t.role == "caller")
    assert turn.said == "I would like to book a visit for my dog Biscuit."
    assert len(turn.heard) == 2 and " ".join(turn.heard) == turn.said.lower()
    assert sorted(e["type"] for e in turn.line_errors) == ["lowercase", "split"]


def test_a_thin_kind_borrows_from_coarser_kinds():
    profile = Profile({"format": "callm-line-profile/1", "kinds": {
        "name=0 num=0 words=4-9": {"turns": 5, "sets": [[["lowercase"], 5]]},
        "name=1 num=0 words=4-9": {"turns": 100, "sets": [[[], 100]]},
        "name=0 num=8+ words=4-9": {"turns": 3, "sets": [[["digits_dropped"], 3]]}}})
    # 5 turns is thin: the kind borrows from name=0 num=0 (same 5), then num=0 (105 turns, mostly clean)
    assert profile.draw("name=0 num=0 words=4-9", 0.5) == []
    assert profile.draw("name=0 num=0 words=4-9", 0.99) == ["lowercase"]
    # nothing else has num=8+ with 20 turns: everything together, with whatever there is
    assert profile.draw("name=1 num=8+ words=20+", 0.999) in (["digits_dropped"], ["lowercase"])
