"""The phone line between caller and model: what was said becomes what a recognizer heard.

`CleanLine` passes every turn through untouched (`--callm-line=clean`). `PhoneLine` is the simulated
line of DESIGN §6: it sorts each caller turn into a kind, draws a set of recognizer errors for that
kind from an error profile (`line_profile.py`), seeded by task, attempt and turn, and applies them
(`line_errors.py`). `make_line` builds either from the `--callm-line` value.

Every `Heard` lists what the line did, in order: entries with `"style": true` are the recognizer's
way of writing numbers (not errors); the others are errors, each `{"type", "before", "after", "at"}`
(the span as it was and as it became, and where) plus, for misheard spans, `"source"`: `dictionary`
or `model`; for number errors the digit strings; and `"drawn"` when the drawn type could not apply
to the turn and a fallback was used.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_callm.phone.errors import Stream, Turn, set_draw
from pytest_callm.phone.spoken_numbers import find_numbers
from pytest_callm.phone.error_profile import Profile, load_profile, name_parts, turn_kind

SEED_TAG = "callm-line/1"  # changes only when the draws are meant to change

# (span, context) -> replacement, or an awaitable of one. Context: {"type": misheard_name | misheard_word
# | misheard_phrase, "turn": the transcript so far, "at": where the span starts, "suggestion": the
# dictionary's sound-alike, "task_id", "attempt", "turn_index"}.
Rewriter = Callable[[str, dict[str, Any]], "str | Awaitable[str]"]


@dataclass
class Heard:
    pieces: list[str]  # usually one; a split turn reaches the model as two messages
    errors: list[dict[str, Any]] = field(default_factory=list)  # which recognizer errors were applied
    kind: str | None = None  # the turn's kind in the error profile (None on a clean line)


class Line(Protocol):
    def transmit(self, said: str, turn: int) -> Heard: ...


class CleanLine:
    """No recognizer errors: the model hears exactly what was said."""

    name = "clean"

    def transmit(self, said: str, turn: int) -> Heard:
        return Heard([said])

    async def atransmit(self, said: str, turn: int) -> Heard:
        return self.transmit(said, turn)


class PhoneLine:
    """A simulated phone line for one attempt of one task.

    Draws depend only on (task_id, attempt, turn index) and the profile, through SHA-256: attempt k of
    a task meets the same draws for every model and in every process; another attempt meets others.
    What is said decides the turn's kind and where each error lands. The draws that pick the error
    sets of one call's turns are spread evenly (`line_errors.set_draw`), not independent.

    `rewriter`, if given, rewords each misheard span (name, word, short phrase) the way the paper's
    small model prompt does: it gets the span and a context and returns the replacement, plainly or as
    an awaitable. A reply that is empty, unchanged, longer than four words, or holds a number is not
    used, and the dictionary's sound-alike stays. Only the span changes either way. In `transmit` an
    async rewriter runs on a helper thread's event loop; `atransmit` awaits it in the caller's loop.
    """

    name = "phone"

    def __init__(self, profile: Profile, task_id: str, attempt: int, caller_name: str | None = None,
                 rewriter: Rewriter | None = None):
        self.profile = profile
        self.task_id, self.attempt = str(task_id), int(attempt)
        self.caller_name = caller_name
        self.names = name_parts(caller_name)
        self.rewriter = rewriter

    def _prepare(self, said: str, turn: int) -> tuple[Turn, list[str], str]:
        key = (SEED_TAG, self.task_id, self.attempt, int(turn))
        kind = turn_kind(said, self.names)
        drawn = self.profile.draw(kind, set_draw(SEED_TAG, self.task_id, self.attempt, "set", turn=turn))
        # the recognizer's habits only touch numbers: no draw for a turn without one
        habits = self.profile.habits(Stream(*key, "style")) if find_numbers(said) else {}
        t = Turn.from_said(said, self.names, habits, Stream(*key, "apply"), words=bool(drawn))
        if said.strip():
            t.apply(drawn, range(0, 4))
        return t, drawn, kind

    def _finish(self, t: Turn, drawn: list[str], kind: str, said: str) -> Heard:
        if said.strip():
            t.apply(drawn, range(4, 7))
        return Heard(t.pieces(), t.errors, kind)

    def _contexts(self, t: Turn, turn: int):
        for entry, tok, context in t.rewrite_requests():
            context.update(task_id=self.task_id, attempt=self.attempt, turn_index=turn)
            yield entry, tok, context

    def transmit(self, said: str, turn: int) -> Heard:
        t, drawn, kind = self._prepare(said, turn)
        if self.rewriter is not None:
            for entry, tok, context in self._contexts(t, turn):
                reply = self.rewriter(entry["before"], context)
                if inspect.isawaitable(reply):
                    reply = _run_coroutine(reply)
                t.use_rewrite(entry, tok, reply)
        return self._finish(t, drawn, kind, said)

    async def atransmit(self, said: str, turn: int) -> Heard:
        t, drawn, kind = self._prepare(said, turn)
        if self.rewriter is not None:
            for entry, tok, context in self._contexts(t, turn):
                reply = self.rewriter(entry["before"], context)
                if inspect.isawaitable(reply):
                    reply = await reply
                t.use_rewrite(entry, tok, reply)
        return self._finish(t, drawn, kind, said)


def _run_coroutine(awaitable: Awaitable) -> Any:
    """Run an awaitable to completion from sync code, even inside a running event loop."""
    out: dict[str, Any] = {}

    async def wrap():
        return await awaitable

    def target():
        try:
            out["value"] = asyncio.run(wrap())
        except BaseException as exc:  # handed back to the caller below
            out["error"] = exc

    worker = threading.Thread(target=target, name="callm-line-rewriter")
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


class ScriptedLine:
    """A line that mishears exactly what it is told: each `(said, heard)` pair turns the first time
    `said` is spoken, and only that time, into `heard`, recorded as a `misheard` error as the simulated
    line records its own. For replays and tests that need a known mishearing (a date of birth one day
    off, tried, then heard right when the caller says it again)."""

    name = "scripted"

    def __init__(self, mishearings: dict[str, str]):
        self.left = dict(mishearings)

    def transmit(self, said: str, turn: int) -> Heard:
        text, errors = said, []
        for before, after in list(self.left.items()):
            at = text.find(before)
            if at < 0:
                continue
            text = text[:at] + after + text[at + len(before):]
            errors.append({"type": "misheard", "before": before, "after": after, "at": at})
            del self.left[before]
        return Heard([text], errors)

    async def atransmit(self, said: str, turn: int) -> Heard:
        return self.transmit(said, turn)


def is_clean(spec: str | None) -> bool:
    return (spec or "default").strip().lower() in ("clean", "off", "none")


def warm_up(spec: str) -> None:
    """Load what a line of this spec reads (the pronouncing dictionary, about half a second), so the
    first call that mishears a name does not stall every call in flight beside it."""
    if not is_clean(spec):
        from pytest_callm.phone.sounds import sounds

        sounds()


def make_line(spec: str, task_id: str, attempt: int, caller_name: str | None = None, *,
              rewriter: Rewriter | None = None) -> Line:
    """The line for one attempt: `spec` is `clean` (no errors), `default` (the shipped profile) or
    the path of a profile file (`callm fit-line-profile`). Raises `ProfileError` for a bad profile."""
    spec = (spec or "default").strip()
    if is_clean(spec):
        return CleanLine()
    return PhoneLine(load_profile(spec), task_id, attempt, caller_name, rewriter)
