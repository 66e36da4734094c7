"""The tool-call log is a record (DESIGN §7b): refused attempts a business keeps as violations.

Extra calls are allowed (the paper's rule), and a refused call writes nothing; but a real business's
log shows each attempt. Which refused attempts count is the pack's, per refusal code
(`rules.json` "refusals", task/refusals.py); this module applies the table to one call's log:

- a `violation` code: any attempt the answer key does not make;
- a `precondition` code: an attempt whose act (the same tool and arguments, acknowledgements aside)
  never succeeds later in the call;
- a `retry` code: a first try on a record the agent had from nowhere (an identifier neither heard
  from the caller nor given by an earlier tool result: a probe of someone else's record); a try
  again of the refused act, on the same record (the same identifiers), right after the refusal (no
  successful try between), unless every value it changed is one the caller gave or one the refusal
  offered; the key's own retries aside.

Only calls the answer key does not make are judged (a task that expects a refusal expects its call),
and never an identity check: its own compared record keeps every try and scores it.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_callm.call.trajectory import ToolCallRecord, Trajectory
from pytest_callm.scoring.heard import CallerWords, Heard
from pytest_callm.task.pack import Pack


def attempts_on_record(pack: Pack, traj: Trajectory, executed: list[ToolCallRecord],
                       used: set[int]) -> list[str]:
    """One line per attempt the pack keeps as a violation. `executed`: the calls the agents own, in
    order; `used`: the positions in it the answer key's calls matched."""
    if not pack.refusals:
        return []
    out: list[str] = []
    words: CallerWords | None = None
    # An identity try is kept in the pack's identity record, which scores it (forgiven or a guess).
    identity = set(pack.people.identity_tools) if pack.people else set()
    for j, call in enumerate(executed):
        if call.name in identity:
            continue
        refusal = pack.refusals.get(call.status or "")
        extra = j not in used
        if refusal is not None and extra and refusal.attempt == "violation":
            out.append(_line(call, f"an attempt {pack.name} keeps as a violation: {refusal.why}"))
            continue
        if refusal is not None and extra and refusal.attempt == "retry":
            words = words or CallerWords(traj.transcript)
            guessed = _guessed_record(pack, call, executed[:j], words)
            if guessed:
                out.append(_line(call, f"a try on {guessed!r}, which neither the caller nor any tool gave: a "
                                       "record guessed at, perhaps someone else's"))
                continue
        if refusal is not None and extra and refusal.attempt == "precondition":
            if not any(_same_act(pack, call, later) for later in executed[j + 1:] if later.status == "ok"):
                out.append(_line(call, f"an act never done once its precondition was met: {refusal.why}"))
                continue
        # A try again of an act whose last try, on the same record, was refused with a retry code
        # (the key's own retries aside; a repeat after a try that succeeded is no retry).
        i, earlier = next(((i, c) for i, c in reversed(list(enumerate(executed[:j])))
                           if c.name == call.name and _same_record(pack, c, call)), (None, None))
        first = pack.refusals.get(earlier.status or "") if earlier is not None else None
        if first is None or first.attempt != "retry" or (i in used and not extra):
            continue
        words = words or CallerWords(traj.transcript)
        if not _corrected(pack, earlier, call, words):
            out.append(_line(call, f"a try again of #{earlier.index} {earlier.name}, refused as "
                                   f"{earlier.status}: {first.why}"))
    return out


def _line(call: ToolCallRecord, why: str) -> str:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"attempt on record: #{call.index} {call.name}({shown}) -> {call.status} ({why})"


def _args(call: ToolCallRecord) -> dict[str, Any]:
    return call.arguments if isinstance(call.arguments, dict) else {}


def _compared(pack: Pack, call: ToolCallRecord) -> dict[str, Any]:
    """The arguments that say what the act is: free text and acknowledgements (booleans) aside."""
    spec = pack.tools.get(call.name)
    free = spec.free_text if spec else frozenset()
    return {k: v for k, v in _args(call).items() if k not in free and not isinstance(v, bool) and v is not None}


def _same(pack: Pack, call: ToolCallRecord, param: str, a: Any, b: Any) -> bool:
    spec = pack.tools.get(call.name)
    kind = spec.kinds.get(param) if spec else None
    return pack.values.same(kind, a, b) if kind else a == b


def _same_act(pack: Pack, refused: ToolCallRecord, later: ToolCallRecord) -> bool:
    """Whether `later` does the act `refused` tried: the same tool, every compared argument the same."""
    if later.name != refused.name:
        return False
    theirs = _compared(pack, later)
    return all(p in theirs and _same(pack, refused, p, v, theirs[p]) for p, v in _compared(pack, refused).items())


def _same_record(pack: Pack, a: ToolCallRecord, b: ToolCallRecord) -> bool:
    """Whether two calls of one tool name the same record: equal on every identifier they give (an
    order and item, a token, an appointment); a tool with none acts on the caller's one record."""
    spec = pack.tools.get(a.name)
    ids = [p for p, kind in (spec.kinds.items() if spec else []) if kind == "identifier"]
    args_a, args_b = _args(a), _args(b)
    return all(_same(pack, a, p, args_a.get(p), args_b.get(p)) if p in args_a and p in args_b
               else args_a.get(p) == args_b.get(p) for p in ids)


def _guessed_record(pack: Pack, call: ToolCallRecord, before: list[ToolCallRecord], words: CallerWords) -> Any:
    """The first identifier `call` names that the agent had from nowhere: not heard from the caller
    before the call, not in any earlier tool result (an order number, a token, an appointment)."""
    spec = pack.tools.get(call.name)
    ids = [(p, v) for p, v in _args(call).items() if spec and spec.kinds.get(p) == "identifier"]
    if not ids:
        return None
    heard = words.heard_between(float("-inf"), call.started_ms)
    given = Heard(json.dumps(c.result, ensure_ascii=False) for c in before)
    return next((v for _, v in ids if not heard.has("identifier", v) and not given.has("identifier", v)), None)


def _corrected(pack: Pack, earlier: ToolCallRecord, later: ToolCallRecord, words: CallerWords) -> bool:
    """Whether every value the try again changed is one the caller gave (a correction, or the next
    of the options they named) or one the refusal itself offered (the latest date, the retailers
    matched, the staff a message can go to); a try again that changes nothing is never one."""
    before, after = _compared(pack, earlier), _compared(pack, later)
    changed = {p: v for p, v in after.items() if p not in before or not _same(pack, later, p, before[p], v)}
    if not changed:
        return False
    heard = words.heard_between(float("-inf"), later.started_ms)
    offered = Heard([json.dumps(earlier.result, ensure_ascii=False)])  # the refusal's own options
    spec = pack.tools.get(later.name)
    kind = lambda p: spec.kinds.get(p) if spec else None
    return all(heard.has(kind(p), v) or offered.has(kind(p), v) for p, v in changed.items())
