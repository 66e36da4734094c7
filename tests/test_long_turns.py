"""A caller turn of any length costs the line linear time, and is bounded like an agent's turn (issue 39:
a turn of 300 KB stalled the run for minutes, its number finder quadratic and caller turns unbounded)."""

from __future__ import annotations

import time

import pytest

from pytest_callm.call.caller import CallerTurn
from pytest_callm.call.simulated_caller import spoken_only
from pytest_callm.model.microthinking import ThoughtSplitter
from pytest_callm.model.protocol import MAX_REPLY_CHARS
from pytest_callm.phone.line import make_line
from pytest_callm.phone.spoken_numbers import _find_numbers
from test_engine import Model

# Turn shapes that each took one of the quadratic paths: digit-form numbers (words filtered against every
# number), spoken numbers beside digits (a copy of the word list per number), amounts (a copy of the
# rest of the turn per amount), one spoken number of 60,000 digits (a copy of it per digit tried).
SHAPES = {"digits": "206-555-0142 and 12 ", "spoken-and-digits": "one two 3 four 5 ",
          "amounts": "forty five dollars and ", "one-long-number": "two oh six, five five five, "}


FLOOR_S = 0.01  # a short run is timed as at least this: a few milliseconds are mostly the machine's noise


def _best_of_three(work) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_the_line_reads_a_turn_ten_times_longer_in_about_ten_times_the_time(shape):
    """Linear, not quadratic: ten times the text costs about ten times the work (a quadratic reader, a
    hundred). A ratio, so it holds on a slow or busy machine; 35 leaves room for noise either way."""
    def transmit(n):
        text = (shape * (n // len(shape) + 1))[:n]

        def work():
            _find_numbers.cache_clear()  # each run reads the turn afresh
            make_line("default", "t", 1, "Dana Whitfield").transmit(text, 0)

        return work

    short, long = _best_of_three(transmit(6_000)), _best_of_three(transmit(60_000))
    assert long < 35 * max(short, FLOOR_S), (short, long)


@pytest.mark.parametrize("said", ["1," + "000," * 1700 + "000 dollars", "$" + "9" * 5000, "9" * 5000 + "th",
                                  "9" * 5000, "call me at " + "five " * 6000],
                         ids=["5100-digit-cardinal", "5000-digit-amount", "5000-digit-ordinal", "5000-digits",
                              "6000-digit-words"])
def test_a_number_too_long_for_python_is_heard_never_a_crash(said):
    for attempt in range(1, 9):  # several draws: the errors that rewrite a number run on some of them
        heard = make_line("default", "t", attempt, "Dana Whitfield").transmit(said, 0)
        assert heard.pieces


def test_a_stage_direction_reader_is_linear_too():
    assert _best_of_three(lambda: spoken_only("[" * 200_000)) < 35 * max(_best_of_three(
        lambda: spoken_only("[" * 20_000)), FLOOR_S)


def test_a_thought_that_never_closes_is_read_in_linear_time():
    def thought(pieces):
        def work():
            splitter = ThoughtSplitter()
            splitter.feed("<think>")
            for _ in range(pieces):
                splitter.feed("I think so. ")
        return work

    assert _best_of_three(thought(100_000)) < 35 * max(_best_of_three(thought(10_000)), FLOOR_S)


def test_a_caller_turn_of_300_kb_is_cut_like_an_agents_and_noted(play):
    long_turn = "My number is two oh six, five five five, oh one four two. " * 5200  # about 300 KB

    class Caller:
        def __init__(self):
            self.turns = 0

        async def respond(self, agent_said):
            self.turns += 1
            return CallerTurn(long_turn if self.turns == 1 else "", hang_up=self.turns > 1)

    model = Model("Thanks.")
    trajectory = play(model, Caller())
    said = next(t for t in trajectory.transcript if t.role == "caller")
    assert len(long_turn) > 300_000 and len(said.said) == MAX_REPLY_CHARS
    assert "the caller's turn passed 20,000 characters" in said.notes[-1]
    assert len(model.requests[0].messages[-1]["content"]) == MAX_REPLY_CHARS
