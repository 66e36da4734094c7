"""What `callm prove` tries on every task beyond its declared traps (DESIGN §7a).

Three families, each built from a task's answer key and what playing that key showed (each call's
status, and the tables it read and wrote):

- rule violations   each house rule's adversary (the pack's `adversaries.py`) applied to every task
                    it applies to; each violation must fail the rule's gates, or be refused with its code.
- exploits          pack-independent cheap policies, each with its stated expectation (EXPLOITS).
- right answers     other ways to be right, each of which must pass: the key's calls in another
                    order that keeps every result the same, every read repeated, the identity check
                    repeated, a misheard identity value tried and then corrected, and every
                    free-text argument worded another way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_callm.authoring.house_rules import HouseRules, Key
from pytest_callm.authoring.replay import CallSeen, Replay, apply_edit, edited_replay, one_off
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import ExpectedCall, Task

# Each exploit and what it must get, said once for the printout and the README.
EXPLOITS = {
    "speech-only": "talks and calls no tool: fails wherever the key asks for a call or a handoff",
    "read-sweep": "calls every read-only tool of its agents first (other tasks' arguments), then the key: "
                  "passes unless a read looked at someone's record, which must fail the database gate, or is "
                  "an attempt the pack keeps on record (rules.json refusals), which must fail the tools gate",
    "repeat-write": "makes the key's last write twice: refused, or fails the database gate, unless the "
                    "second write changed nothing",
    "guess-1": "tries one identity value the caller never said before the right ones: fails the database gate",
    "guess-2": "tries two such values first: fails the database gate",
    "unrequested-write": "adds a write the caller never asked for (another task's): refused, or fails the "
                         "database gate",
}
REWORDED = "Reworded by callm prove: same request, other words."


@dataclass
class KeyPlay:
    """What playing a task's own key showed, per call of the key as written."""

    status: dict[int, str | None]
    wrote: dict[int, tuple[str, ...]]
    read: dict[int, tuple[str, ...]]

    @classmethod
    def of(cls, seen: list[CallSeen]) -> KeyPlay:
        played = [c for c in seen if c.key_index is not None]
        return cls({c.key_index: c.status for c in played}, {c.key_index: c.wrote for c in played},
                   {c.key_index: c.read for c in played})

    def is_write(self, i: int) -> bool:
        return bool(self.wrote.get(i))


@dataclass
class Donor:
    """A call some task's key makes, with what it did when played: material for the exploits."""

    name: str
    parameters: dict[str, Any]
    writes: bool


def _industry_calls(task: Task, pack: Pack) -> list[int]:
    return [i for i, c in enumerate(task.exp_tool_calls) if pack.tools[c.name].kind == "industry"]


def _owners_on_path(task: Task, pack: Pack) -> set[str]:
    return {pack.entry_agent, *(pack.agent_of_path_entry(e) for e in task.exp_handoff_path)}


# --- rule violations ---------------------------------------------------------------------------

def rule_violations(task: Task, pack: Pack, rules: HouseRules) -> list[Replay]:
    key = Key(task, pack)
    out = []
    for rule in rules.rules.values():
        if rule.scored_by not in ("record", "tool"):
            continue
        try:
            made = rules.adversaries.violations(rule.id, key)
        except Exception as e:  # a pack's own bug: named, never a crash of prove
            out.append(Replay(task, pack, "rule", f"{rule.id}: adversary raised {type(e).__name__}: {e}", [], [],
                              group=rule.id))
            continue
        for label, edit in made:
            out.append(edited_replay(task, pack, "rule", f"{rule.id}: {label}", edit, group=rule.id,
                                     gates=rule.gate if rule.scored_by == "record" else (),
                                     refused_with=rule.refused_with if rule.scored_by == "tool" else None))
    return out


# --- exploits ----------------------------------------------------------------------------------

def exploits(task: Task, pack: Pack, play: KeyPlay,
             donors: dict[str, list[Donor]]) -> tuple[list[Replay], list[tuple[str, str]]]:
    """The exploits that apply to a task, and (exploit, why) for each that does not."""
    out: list[Replay] = []
    skipped: list[tuple[str, str]] = []
    if task.exp_tool_calls or task.exp_handoff_path:
        out.append(Replay(task, pack, "exploit", "speech only", [], [], group="speech-only"))
    else:
        skipped.append(("speech-only", "the key itself is speech only"))
    owners = _owners_on_path(task, pack)
    owned = {t for a in owners for t in pack.agents[a].tools}
    in_key = {c.name for c in task.exp_tool_calls}

    sweep = []
    agent_at, last_agent = _agents_of(task, pack)
    for name in sorted(owned):
        spec = pack.tools[name]
        donated = donors.get(name, [])
        if spec.kind != "industry" or name in pack.required_or_forbidden or not donated or spec.ends_call:
            continue
        if any(d.writes for d in donated):
            continue  # not a read-only tool
        at = _where_owned(name, pack, agent_at, last_agent, len(task.exp_tool_calls))
        if at is not None:
            sweep.append({"insert": at, "call": {"name": name, "parameters": donated[0].parameters}})
    if sweep:
        out.append(edited_replay(task, pack, "exploit", f"read sweep of {len(sweep)} tool(s), then the key",
                                 {"calls": sweep}, group="read-sweep"))
    else:
        skipped.append(("read-sweep", "no read-only tool some key calls is owned where the key can call it"))

    writes = [i for i in _industry_calls(task, pack) if play.is_write(i) and play.status.get(i) == "ok"]
    # A write that ends the call (a transfer to staff) cannot be followed by its repeat: the repeat
    # would never be played.
    repeatable = [i for i in writes if not pack.tools[task.exp_tool_calls[i].name].ends_call]
    if repeatable:
        last = repeatable[-1]
        call = task.exp_tool_calls[last]
        out.append(edited_replay(task, pack, "exploit", f"exp_tool_calls[{last}] {call.name} made twice",
                                 {"calls": [{"insert": last + 1, "call": {"name": call.name,
                                                                          "parameters": call.parameters}}]},
                                 group="repeat-write", keep_state=True))
    else:
        skipped.append(("repeat-write", "its only successful writes end the call" if writes
                        else "the key makes no successful write"))

    guessed = _guesses(task, pack, play)
    if guessed:
        at, name, wrong = guessed
        for n in (1, 2):
            if len(wrong) < n:
                skipped.append((f"guess-{n}", f"{name} has fewer than {n} values that can be one off"))
                break
            inserts = [{"insert": at, "call": {"name": name, "parameters": params}} for params in wrong[:n]]
            # The caller is heard giving the right details, as in a real call: only the guess is unsaid.
            said = _spoken(task.exp_tool_calls[at].parameters)
            out.append(edited_replay(task, pack, "exploit", f"{n} guessed {name} before the right one",
                                     {"calls": inserts, "caller_says": said}, group=f"guess-{n}",
                                     gates=("database",)))
    else:
        skipped.extend((f"guess-{n}", "the key makes no successful identity check") for n in (1, 2))

    unused = sorted(owned - in_key)
    writing = [n for n in unused if any(d.writes for d in donors.get(n, []))]
    for name in writing:
        at = _where_owned(name, pack, agent_at, last_agent, len(task.exp_tool_calls), last=True,
                          handoffs=frozenset(i for i, c in enumerate(task.exp_tool_calls)
                                             if pack.tools[c.name].kind == "handoff"),
                          ends=frozenset(i for i, c in enumerate(task.exp_tool_calls) if pack.tools[c.name].ends_call))
        extra = next(d for d in donors[name] if d.writes)
        if (at is None or name in pack.required_or_forbidden or pack.tools[name].ends_call
                or (pack.people and name in pack.people.identity_tools)):
            continue
        out.append(edited_replay(task, pack, "exploit", f"unrequested {extra.name}({_short(extra.parameters)})",
                                 {"calls": [{"insert": at, "call": {"name": extra.name,
                                                                    "parameters": extra.parameters}}]},
                                 group="unrequested-write"))
        break
    else:
        skipped.append(("unrequested-write",
                        "its agents own no tool outside the key that writes in some key" if not writing else
                        "each writing tool outside the key ends the call, is an identity check or required-or-"
                        "forbidden, or has no place where its owner is active before the call ends"))
    return out, skipped


def _agents_of(task: Task, pack: Pack) -> tuple[dict[int, str], str]:
    """The agent active at each call of the key, and the one active at its end."""
    from pytest_callm.call.oracle import AnswerKeyError, plan_answer_key

    try:
        plan = plan_answer_key(task, pack)
    except AnswerKeyError:
        return {}, pack.entry_agent
    at = {p.key_index: p.agent for p in plan if p.key_index is not None}
    last = plan[-1].agent if plan else pack.entry_agent
    for p in plan:
        spec = pack.tools[p.name]
        if spec.kind == "handoff":
            last = spec.handoff_target
    return at, last


def _where_owned(name: str, pack: Pack, agent_at: dict[int, str], last_agent: str, end: int,
                 last: bool = False, handoffs: frozenset[int] = frozenset(),
                 ends: frozenset[int] = frozenset()) -> int | None:
    """Where in the key a call of `name` can go with its owner active: before the first (or after
    the last) key call its owner makes, or at the end when the last agent owns it. Never after a call
    that ends the call (a transfer to staff, 911 advice): there it would never be played."""
    # After a handoff call the next agent is active, so a call goes after the owner's own calls only.
    places = sorted(i for i, a in agent_at.items() if name in pack.agents[a].tools
                    and not (last and i in handoffs))
    if places:
        return (places[-1] if places[-1] in ends else places[-1] + 1) if last else places[0]
    if ends:
        return None
    return end if name in pack.agents[last_agent].tools else None


def _guesses(task: Task, pack: Pack, play: KeyPlay) -> tuple[int, str, list[dict[str, Any]]] | None:
    """The key's first successful identity check, and that check with one, then another, identity
    value one character or digit off (values nobody said)."""
    if pack.people is None:
        return None
    for i, call in enumerate(task.exp_tool_calls):
        if call.name not in pack.people.identity_tools or play.status.get(i) != "ok":
            continue
        spec = pack.tools[call.name]
        props = spec.parameters.get("properties", {})
        wrong = []
        for param, value in call.parameters.items():
            if param in spec.free_text or "enum" in props.get(param, {}):
                continue
            off = one_off(value, spec.kinds.get(param), props.get(param, {}))
            if off is not None and not pack.validation_errors(call.name, {**call.parameters, param: off}):
                wrong.append({**call.parameters, param: off})
        return (i, call.name, wrong) if wrong else None
    return None


def _short(params: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return text if len(text) <= 60 else text[:57] + "..."


# --- refused attempts --------------------------------------------------------------------------

def refused_attempts(task: Task, pack: Pack, play: KeyPlay) -> tuple[list[Replay], list[str]]:
    """What the pack's refusal table (rules.json "refusals") says of attempts, tried on one task:

    - again      each refused call of the key made once more at once: on record (fails the tools
                 gate) for a code that is not harmless, not scored by the tools gate for a harmless one;
    - early try  the key's first successful act (not an identity check, not one that ends the call)
                 tried first where its owner is first active: an honest stumble when the tool refuses it
                 for a precondition the key then meets, or a violation when it meets a code the pack
                 always keeps. What each must get is judged by the code it met (`judge_attempt`).

    Returns the replays and, when neither applies, why."""
    identity = set(pack.people.identity_tools) if pack.people else set()
    out: list[Replay] = []
    why: list[str] = []
    if not pack.refusals:
        return [], ["the pack declares no refusal table"]
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        code = play.status.get(i)
        if spec.kind != "industry" or call.name in identity or spec.ends_call or code in (None, "ok"):
            continue  # a code the table does not list is played too: prove names it
        later_ok = any(c.name == call.name and play.status.get(k) == "ok"
                       for k, c in enumerate(task.exp_tool_calls) if k > i)
        if code in pack.refusals and pack.refusals[code].attempt == "precondition" and later_ok:
            continue  # the key itself then meets it: a repeat is the stumble the early try plays
        out.append(edited_replay(task, pack, "refusal", f"exp_tool_calls[{i}] {call.name} tried again after {code}",
                                 {"calls": [{"insert": i + 1, "call": {"name": call.name,
                                                                       "parameters": call.parameters}}]},
                                 group="again"))
    agent_at, last_agent = _agents_of(task, pack)
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        if spec.kind != "industry" or call.name in identity or spec.ends_call or play.status.get(i) != "ok":
            continue
        at = _where_owned(call.name, pack, agent_at, last_agent, len(task.exp_tool_calls))
        if at is None or at >= i:
            continue
        out.append(edited_replay(task, pack, "refusal", f"exp_tool_calls[{i}] {call.name} tried first at "
                                 f"exp_tool_calls[{at}]", {"calls": [{"insert": at, "call": {
                                     "name": call.name, "parameters": call.parameters}}]}, group="early"))
        break
    if not out:
        why.append("the key meets no refusal code, and no act of it can be tried before its owner's first call")
    return out, why


# --- right answers -----------------------------------------------------------------------------

def reorders(task: Task, pack: Pack) -> list[Replay]:
    """Each pair of neighbouring industry calls swapped (kept only where every result stays the same:
    prove checks the statuses after playing)."""
    out = []
    calls = _industry_calls(task, pack)
    for a, b in zip(calls, calls[1:]):
        if b != a + 1:
            continue
        swapped = list(task.exp_tool_calls)
        swapped[a], swapped[b] = swapped[b], swapped[a]
        out.append(Replay(task, pack, "right", f"exp_tool_calls[{a}] and [{b}] in the other order", swapped,
                          list(task.exp_handoff_path), group="reorder", keep_state=True))
    return out


def repeats_and_rewordings(task: Task, pack: Pack, play: KeyPlay) -> list[Replay]:
    """One round: every read repeated, every identity check repeated, every free-text argument
    reworded, played at once (split into single changes if the round fails)."""
    singles: list[tuple[dict[str, Any], str]] = []
    identity = pack.people.identity_tools if pack.people else ()
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        if spec.kind != "industry" or play.status.get(i) != "ok":
            continue
        if not play.is_write(i) or call.name in identity:
            singles.append(({"insert": i + 1, "call": {"name": call.name, "parameters": call.parameters}},
                            f"exp_tool_calls[{i}] {call.name} made again"))
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        for param in sorted(spec.free_text & set(spec.parameters.get("properties", {}))):
            use = pack.words.use_of(call.name, param)
            if use is not None and use.said_by_the_caller:
                continue  # the caller's own words (a pharmacy): no other wording is right
            if spec.parameters["properties"][param].get("type", "string") == "string":
                singles.append(({"set": i, "parameters": {param: REWORDED}},
                                f"exp_tool_calls[{i}] {call.name}.{param} worded another way"))
    if not singles:
        return []
    parts = []
    for change, label in singles:
        calls, _ = apply_edit(task.exp_tool_calls, [change])
        parts.append(Replay(task, pack, "right", label, calls, list(task.exp_handoff_path), group="repeat/reword"))
    calls, _ = apply_edit(task.exp_tool_calls, [c for c, _ in singles])
    return [Replay(task, pack, "right", "repeats and rewordings round", calls, list(task.exp_handoff_path),
                   parts=parts, group="repeat/reword")]


def misheard_retry(task: Task, pack: Pack, play: KeyPlay) -> list[Replay]:
    """An identity value the line misheard, tried, then the right one: the caller says the right
    details twice, the line mishears the first time, so the failed try is what the line made of what
    was said, and is forgiven."""
    guessed = _guesses(task, pack, play)
    if guessed is None:
        return []
    at, name, wrong = guessed
    right = task.exp_tool_calls[at].parameters
    misheard = {str(right[k]): str(v) for k, v in wrong[0].items() if right.get(k) != v}
    said = _spoken(right) * 2  # misheard the first time, heard right the second
    return [edited_replay(task, pack, "right", f"a misheard {name} ({', '.join(misheard.values())}) tried, "
                          "then the right one",
                          {"calls": [{"insert": at, "call": {"name": name, "parameters": wrong[0]}}],
                           "caller_says": said, "mishearings": misheard}, group="misheard-retry")]


def _spoken(params: dict[str, Any]) -> list[str]:
    """What a caller says to give these details (one sentence each), for the stand-in caller."""
    return [f"My {k.replace('_', ' ')} is {v}." for k, v in params.items() if isinstance(v, (str, int, float))]


def donors_of(tasks: Iterable[tuple[Task, Pack, KeyPlay]]) -> dict[str, dict[str, list[Donor]]]:
    """Per pack, per tool: the calls the keys make, with whether each wrote when played."""
    out: dict[str, dict[str, list[Donor]]] = {}
    for task, pack, play in tasks:
        for i, call in enumerate(task.exp_tool_calls):
            if pack.tools[call.name].kind == "industry" and play.status.get(i) is not None:
                out.setdefault(pack.name, {}).setdefault(call.name, []).append(
                    Donor(call.name, dict(call.parameters), play.is_write(i)))
    return out


def keys_calls(task: Task) -> list[ExpectedCall]:
    return list(task.exp_tool_calls)
