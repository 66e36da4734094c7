"""Proof that each task discriminates (DESIGN §7a): wrong answers fail, right ones pass.

A task is only as good as its worst verdict, and an oracle that passes proves only half of it. This
module plays, through the real engine and tool server exactly as the oracle does, three kinds of
edited answer keys and scores each against the task as written:

- traps     the wrong moves the task declares (`traps` in task.json): each must fail exactly the
            gates it names, or be refused by a tool with the code it names; a speech-only trap is
            listed, never replayed (what the agent says is not scored, as in the paper).
- mutants   generated: each constrained argument one character or digit off, each required call that
            is not a handoff dropped, each expected handoff dropped (with the calls only that agent
            could make), each required-or-forbidden tool flipped. Each must fail. A mutant that no
            replay can play (a forbidden tool no agent on the path owns) is listed as unscorable.
- routes     the task's other answer keys (`routes`): each must pass, as the main key does.
- spellings generated: other correct ways to write each constrained value of a declared kind (a
            phone with +1, dots or brackets; a name in capitals or with a title; money with $ and
            thousands separators; a date as a date-time; every variant of an alias). Each must pass:
            the tool and the verifier read the value the same way.

`callm prove` prints what fails and exits 1; CI runs it on every locked task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.authoring.lock import find_task_files
from pytest_callm.authoring.trap_tables import counts, kind_of, write
from pytest_callm.call.oracle import AnswerKeyError, ScriptedCaller, ScriptedModel, plan_answer_key
from pytest_callm.normalize import CORPORATE_SUFFIXES, words
from pytest_callm.phone.line import CleanLine
from pytest_callm.runs.runtime import Participants, Runtime
from pytest_callm.scoring.verify import GATES, Verdict, verify
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import ExpectedCall, Task, load_task

IN_FLIGHT = 8  # replays at once: the engine and the tool server each keep a core busy


# --- edited keys -------------------------------------------------------------------------------

@dataclass
class Replay:
    """One edited answer key to play, and what its verdict must be."""

    task: Task
    pack: Pack
    kind: str  # "trap", "mutant" or "spelling"
    label: str  # what was changed, for people
    calls: list[ExpectedCall]
    path: list[str]
    skip_unowned: bool = False  # a dropped handoff: calls only the skipped agent owns go too
    trap: dict[str, Any] | None = None
    edited: frozenset[str] = frozenset()  # tools the edit touched (where a refusal is looked for)
    parts: list[Replay] = field(default_factory=list)  # a spelling round: its single spellings
    caller_says: list[str] = field(default_factory=list)  # what the stand-in caller says first (heard)


@dataclass
class Outcome:
    replay: Replay
    verdict: Verdict | None = None
    statuses: list[tuple[str, str | None]] = field(default_factory=list)  # (tool, status) as played
    error: str | None = None  # the edited key could not be played

    @property
    def failed_gates(self) -> list[str]:
        return [] if self.verdict is None else [g for g, ok in self.verdict.gates.items() if not ok]


def _call(raw: dict[str, Any]) -> ExpectedCall:
    return ExpectedCall(raw["name"], dict(raw.get("parameters") or {}), None)


def apply_edit(key: list[ExpectedCall], changes: Iterable[dict[str, Any]]) -> tuple[list[ExpectedCall], set[str]]:
    """The key with `changes` made (indexes are positions in the key as written), and the tools touched."""
    current: list[ExpectedCall | None] = list(key) + [None]
    before: list[list[ExpectedCall]] = [[] for _ in current]
    touched: set[str] = set()
    for change in changes:
        if "drop" in change:
            current[change["drop"]] = None
        elif "set" in change:
            old = current[change["set"]]
            params = dict(old.parameters)
            for name, value in change["parameters"].items():
                if value is None:
                    params.pop(name, None)
                else:
                    params[name] = value
            current[change["set"]] = ExpectedCall(old.name, params, None)
            touched.add(old.name)
        elif "replace" in change:
            current[change["replace"]] = _call(change["call"])
            touched.add(change["call"]["name"])
        else:
            before[change["insert"]].append(_call(change["call"]))
            touched.add(change["call"]["name"])
    out: list[ExpectedCall] = []
    for extra, call in zip(before, current):
        out.extend(extra)
        if call is not None:
            out.append(call)
    return out, touched


def trap_replays(task: Task, pack: Pack) -> list[Replay]:
    out = []
    for trap in task.traps:
        if trap["caught_by"] == "speech-only":
            continue
        edit = trap["edit"]
        calls, touched = apply_edit(task.exp_tool_calls, edit.get("calls", []))
        path = [pack.agent_of_path_entry(e) for e in edit.get("handoff_path", task.exp_handoff_path)]
        out.append(Replay(task, pack, "trap", f"trap {trap['id']}: {trap['wrong_move']}", calls, path,
                          trap=trap, edited=frozenset(touched), caller_says=list(edit.get("caller_says", []))))
    return out


# --- mutants -----------------------------------------------------------------------------------

def _next_letter(c: str) -> str:
    if c.isdigit():
        return str((int(c) + 1) % 10)
    base = "A" if c.isupper() else "a"
    return chr((ord(c.lower()) - ord("a") + 1) % 26 + ord(base))


def one_off(value: Any, kind: str | None, schema: dict[str, Any]) -> Any:
    """`value` one character or digit off (or the next choice of an enum, the other boolean, a day
    later); None when no such value exists."""
    if isinstance(value, bool):
        return not value
    if "enum" in schema:
        others = [v for v in schema["enum"] if v != value]
        return others[0] if others else None
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [one_off(value[0], kind, schema.get("items", {})), *value[1:]] if value else None
    if not isinstance(value, str) or not value.strip():
        return None
    if kind == "date":
        try:
            return (dt.date.fromisoformat(value[:10]) + dt.timedelta(days=1)).isoformat() + value[10:]
        except ValueError:
            pass
    # The last digit when there is one (a number misheard), else the last letter of the longest word.
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if digits:
        i = digits[-1]
    else:
        spans = [m.span() for m in re.finditer(r"[A-Za-z]+", value)]
        if not spans:
            return None
        start, end = max(spans, key=lambda s: s[1] - s[0])
        i = end - 1
    return value[:i] + _next_letter(value[i]) + value[i + 1:]


def _handoff_calls(task: Task, pack: Pack) -> list[tuple[int, str]]:
    return [(i, pack.tools[c.name].handoff_target) for i, c in enumerate(task.exp_tool_calls)
            if pack.tools[c.name].kind == "handoff"]


def mutants(task: Task, pack: Pack) -> tuple[list[Replay], list[str]]:
    """The generated wrong answers of a task, and the ones that cannot be played (why, for people)."""
    key, path = task.exp_tool_calls, task.exp_handoff_path
    out: list[Replay] = []
    unscorable: list[str] = []

    def mutant(label: str, changes: list[dict[str, Any]], new_path: list[str] | None = None, **kw: Any) -> None:
        calls, touched = apply_edit(key, changes)
        out.append(Replay(task, pack, "mutant", label, calls, list(path if new_path is None else new_path),
                          edited=frozenset(touched), **kw))

    for i, call in enumerate(key):
        spec = pack.tools[call.name]
        props = spec.parameters.get("properties", {})
        for param, value in call.parameters.items():
            if param in spec.free_text:
                continue
            kind = spec.kinds.get(param)
            wrong = one_off(value, kind, props.get(param, {}))
            accepted = [value, *call.alternatives.get(param, [])]
            if wrong is None:
                continue
            if any(pack.values.same(kind, a, wrong) for a in accepted):
                unscorable.append(f"exp_tool_calls[{i}] {call.name}.{param}: {wrong!r} is an accepted value")
                continue
            mutant(f"exp_tool_calls[{i}] {call.name}.{param} {value!r} -> {wrong!r}",
                   [{"set": i, "parameters": {param: wrong}}])
        if spec.kind != "handoff" and call.name not in pack.required_or_forbidden:
            mutant(f"exp_tool_calls[{i}] {call.name} dropped", [{"drop": i}])
    handoffs = _handoff_calls(task, pack)
    for j, agent in enumerate(path):
        # The key's handoff to this agent at this point of the path, if it lists one.
        nth = path[:j].count(agent)
        listed = [i for i, target in handoffs if target == agent]
        changes = [{"drop": listed[nth]}] if nth < len(listed) else []
        mutant(f"handoff to {agent} (exp_handoff_path[{j}]) dropped", changes, path[:j] + path[j + 1:],
               skip_unowned=True)
    for tool in sorted(pack.required_or_forbidden):
        required = [i for i, c in enumerate(key) if c.name == tool]
        if required:
            mutant(f"required {tool} dropped", [{"drop": i} for i in required])
            continue
        placed = _place_forbidden(task, pack, tool)
        if placed is None:
            unscorable.append(f"forbidden {tool}: no agent on the expected path owns it, so no replay can call it")
        else:
            mutant(f"forbidden {tool} called", [{"insert": placed, "call": {"name": tool, "parameters": {}}}])
    return out, unscorable


def _place_forbidden(task: Task, pack: Pack, tool: str) -> int | None:
    """The latest point of the key where an agent that owns `tool` is active and the call still goes
    on, or None."""
    for at in range(len(task.exp_tool_calls), -1, -1):
        calls, _ = apply_edit(task.exp_tool_calls, [{"insert": at, "call": {"name": tool}}])
        try:
            plan = plan_answer_key(dataclasses.replace(task, exp_tool_calls=calls), pack)
        except AnswerKeyError:
            continue
        names = [p.name for p in plan]
        # Played only if the call comes before one that ends the call (a human transfer).
        if tool in names and not any(pack.tools[n].ends_call for n in names[:names.index(tool)]):
            return at
    return None


# --- correct spellings -------------------------------------------------------------------------

# Long words and the short forms people write for them (normalize.py must read both as one word).
ABBREVIATIONS = {"management": "Mgmt.", "manufacturing": "Mfg.", "services": "Svcs.", "international": "Intl.",
                 "association": "Assn.", "brothers": "Bros.", "company": "Co."}


def _phone_forms(digits: str) -> list[str]:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    return [f"+1 {a}-{b}-{c}", f"1-{a}-{b}-{c}", f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}"]


def _casings(text: str) -> list[str]:
    return [text.upper(), text.lower()]


def _organization_forms(text: str) -> list[str]:
    out = _casings(text)
    ws = text.split()
    if ws and words(ws[-1]) and words(ws[-1])[0] in CORPORATE_SUFFIXES and len(ws) > 1:
        out.append(" ".join(ws[:-1]).rstrip(","))  # without its suffix
    else:
        out.append(f"{text}, Inc.")
    if not text.lower().startswith("the "):
        out.append(f"The {text}")
    for i, w in enumerate(ws):
        short = ABBREVIATIONS.get(w.lower())
        if short and i > 0:
            out.append(" ".join([*ws[:i], short, *ws[i + 1:]]))
    return out


def spellings(value: Any, kind: str | None, schema: dict[str, Any], pack: Pack) -> list[Any]:
    """Other correct ways to write `value`, a value of `kind` (empty for a kind with no variety)."""
    if isinstance(value, bool) or "enum" in schema or kind is None:
        return []
    types = schema.get("type")
    types = set(types if isinstance(types, list) else [types] if types else [])
    if isinstance(value, (int, float)):
        if kind == "money" and "string" in types:
            return [f"${value:,.2f}", f"{value:,.2f}"]
        return [float(value)] if isinstance(value, int) and "number" in types else []
    if not isinstance(value, str):
        return []
    if kind == "phone" or (kind == "contact" and len(re.sub(r"\D", "", value)) == 10 and "@" not in value):
        digits = re.sub(r"\D", "", value)
        return _phone_forms(digits) if len(digits) == 10 else []
    if kind == "person":
        return [*_casings(value), f"Dr. {value}", f"{value}, MD"]
    if kind == "organization":
        return _organization_forms(value)
    if kind == "party":
        forms = _casings(value)
        if len(value.split()) > 2 or any(w in CORPORATE_SUFFIXES for w in words(value)):
            forms = _organization_forms(value)
        return forms
    if kind == "identifier":
        return [value.lower(), re.sub(r"[-_]", " ", value)] if value.lower() != value or "-" in value else []
    if kind == "date":
        return [f"{value[:10]}T09:00:00"] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) else []
    if kind == "money":
        try:
            amount = float(re.sub(r"[$,\s]", "", value))
        except ValueError:
            return []
        return [f"${amount:,.2f}", f"{amount:,.2f}", f"{amount:g}"]
    if kind in ("email",) or (kind == "contact" and "@" in value):
        return [value.upper(), value.replace("@", " at ").replace(".", " dot ")]
    if kind == "contact" and re.fullmatch(r"\d+", value.strip()):  # a short code: digits only, no other form
        return []
    if kind == "contact":  # a web address
        return [f"https://www.{value}/", f"www.{value.upper()}", f"{value}/help"]
    if kind in pack.values.tables:
        canon = pack.values.canonical(kind, value)
        if canon is None:
            return []
        written = [canon, *pack.values.variants[kind][canon]]
        return [v for v in written if v != value] + [value.upper()]
    return []


def spelling_rounds(task: Task, pack: Pack) -> list[Replay]:
    """One replay per round: round r writes every value its r-th other way at once (fast); a round
    that fails is split into its single spellings, so each failure names its value."""
    singles: list[list[tuple[dict[str, Any], Replay]]] = []  # per value: (its change, its replay) per spelling
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        props = spec.parameters.get("properties", {})
        for param, value in call.parameters.items():
            if param in spec.free_text:
                continue
            forms = spellings(value, spec.kinds.get(param), props.get(param, {}), pack)
            forms = [f for f in forms if not pack.validation_errors(call.name, {**call.parameters, param: f})]
            row = []
            for form in forms:
                change = {"set": i, "parameters": {param: form}}
                calls, touched = apply_edit(task.exp_tool_calls, [change])
                row.append((change, Replay(task, pack, "spelling", f"exp_tool_calls[{i}] {call.name}.{param} "
                                           f"{value!r} written {form!r}", calls, list(task.exp_handoff_path),
                                           edited=frozenset(touched))))
            if row:
                singles.append(row)
    rounds = []
    for r in range(max(map(len, singles), default=0)):
        taken = [row[r] for row in singles if r < len(row)]
        calls, _ = apply_edit(task.exp_tool_calls, [change for change, _ in taken])
        rounds.append(Replay(task, pack, "spelling", f"spelling round {r + 1}", calls, list(task.exp_handoff_path),
                             parts=[single for _, single in taken]))
    return rounds


# --- playing -----------------------------------------------------------------------------------

async def _play(runtime: Runtime, replay: Replay, limit: asyncio.Semaphore) -> Outcome:
    edited = dataclasses.replace(replay.task, exp_tool_calls=replay.calls, exp_handoff_path=replay.path)
    try:
        plan = plan_answer_key(edited, replay.pack, skip_unowned=replay.skip_unowned)
    except AnswerKeyError as e:
        return Outcome(replay, error=f"cannot be played: {e}")
    model = ScriptedModel(plan, runtime.limits.max_requests_per_turn)
    async with limit:
        trajectory = await runtime.play_async(replay.task, replay.pack, 1,
                                              Participants(model, ScriptedCaller(model, replay.caller_says), CleanLine()), rerun=False)
    return Outcome(replay, verify(replay.task, replay.pack, trajectory),
                   [(c.name, c.status) for c in trajectory.tool_calls])


async def _play_all(runtime: Runtime, replays: list[Replay]) -> list[Outcome]:
    limit = asyncio.Semaphore(IN_FLIGHT)
    return list(await asyncio.gather(*(_play(runtime, r, limit) for r in replays)))


# --- judging -----------------------------------------------------------------------------------

@dataclass
class TaskProof:
    task: Task
    problems: list[str] = field(default_factory=list)
    traps: list[dict[str, Any]] = field(default_factory=list)  # per declared trap: id, caught_by, result
    mutants: int = 0
    unscorable: list[str] = field(default_factory=list)
    spellings: int = 0

    @property
    def scored_traps(self) -> int:
        return sum(1 for t in self.task.traps if isinstance(t["caught_by"], list) and t["caught_by"])


def judge_trap(outcome: Outcome) -> str | None:
    trap = outcome.replay.trap
    if outcome.error:
        return f"trap {trap['id']}: {outcome.error}"
    declared = sorted(trap["caught_by"], key=GATES.index)
    failed = outcome.failed_gates
    problems = []
    if failed != declared:
        said = ", ".join(declared) or "no gate"
        got = ", ".join(failed) or "no gate (the wrong answer passes)"
        problems.append(f"caught by {said} as declared, but the replay fails {got}")
    code = trap.get("refused_with")
    if code and not any(status == code and name in outcome.replay.edited for name, status in outcome.statuses):
        seen = ", ".join(f"{n} -> {s}" for n, s in outcome.statuses if n in outcome.replay.edited) or "no edited call"
        problems.append(f"refused with {code!r} as declared, but the edited calls returned: {seen}")
    if not problems:
        return None
    detail = "" if outcome.verdict is None or outcome.verdict.passed else "\n      " + \
        outcome.verdict.explain().replace("\n", "\n      ")
    return f"trap {trap['id']} ({trap['wrong_move']}): " + "; ".join(problems) + detail


def prove(paths: Iterable[Path], industries: Iterable[Path], *, progress=None) -> list[TaskProof]:
    packs = PackRegistry(industries)
    loaded = [load_task(p, packs) for p in find_task_files(paths)]
    proofs = {id(task): TaskProof(task) for _, task, _ in loaded}
    replays: list[Replay] = []
    for _, task, pack in loaded:
        proof = proofs[id(task)]
        if not task.traps:
            proof.problems.append("declares no trap: say what wrong move the task catches (traps in task.json)")
        replays.extend(trap_replays(task, pack))
        replays.extend(Replay(task, pack, "route", f"route {key.route_id}", key.exp_tool_calls,
                              key.exp_handoff_path) for key in task.keys()[1:])
        made, proof.unscorable = mutants(task, pack)
        replays.extend(made)
        replays.extend(spelling_rounds(task, pack))
    runtime = Runtime("oracle", packs.loaded())
    try:
        outcomes = runtime.run(_play_all(runtime, replays))
        failed_rounds = [o for o in outcomes if o.replay.kind == "spelling" and not _passes(o)]
        singles = runtime.run(_play_all(runtime, [p for o in failed_rounds for p in o.replay.parts]))
    finally:
        runtime.close()
    for o in outcomes:
        proof = proofs[id(o.replay.task)]
        if o.replay.kind == "trap":
            problem = judge_trap(o)
            proof.traps.append({"id": o.replay.trap["id"], "failed": o.failed_gates, "ok": problem is None})
            if problem:
                proof.problems.append(problem)
        elif o.replay.kind == "route":
            if not _passes(o):
                why = o.error or o.verdict.explain().replace("\n", "\n      ")
                proof.problems.append(f"{o.replay.label} fails, though the task lists it as right:\n      {why}")
        elif o.replay.kind == "mutant":
            proof.mutants += 1
            if o.error:
                proof.problems.append(f"mutant {o.replay.label}: {o.error}")
            elif o.verdict.passed and o.verdict.route is not None:
                proof.unscorable.append(f"{o.replay.label}: passes as route {o.verdict.route}, which the task "
                                        "lists as equally right")
            elif o.verdict.passed:
                proof.problems.append(f"mutant passes: {o.replay.label}")
        else:
            proof.spellings += len(o.replay.parts)
    for o in singles:
        if not _passes(o):
            why = o.error or o.verdict.explain().replace("\n", "\n      ")
            proofs[id(o.replay.task)].problems.append(f"correct spelling fails: {o.replay.label}\n      {why}")
    return list(proofs.values())


def _passes(outcome: Outcome) -> bool:
    return outcome.error is None and outcome.verdict.passed


# --- the command -------------------------------------------------------------------------------

def main(argv: list[str], industries: list[Path]) -> int:
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="callm prove", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every task, and unscorable mutants")
    parser.add_argument("--write-tables", action="store_true",
                        help="write each wholly proven pack's trap table into its README.md (whole suites only)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    proofs = prove(args.paths, industries)
    bad = [p for p in proofs if p.problems]
    for p in proofs:
        if p.problems or args.verbose:
            traps = ", ".join(f"{t['id']} {kind_of(t)}" for t in p.task.traps) or "none"
            print(f"{p.task.path}: {p.task.task_id}: traps: {traps}")
            for line in p.problems:
                print(f"  FAIL {line}")
            if args.verbose:
                for line in p.unscorable:
                    print(f"  unscorable mutant: {line}")
    traps = sum(len(p.traps) for p in proofs)
    print(f"{len(proofs)} task(s): {traps} trap replay(s), {sum(p.mutants for p in proofs)} mutant(s), "
          f"{sum(p.spellings for p in proofs)} correct spelling(s), "
          f"{sum(len(p.unscorable) for p in proofs)} unscorable mutant(s) listed with -v; "
          f"{sum(len(p.problems) for p in bad)} problem(s) in {len(bad)} task(s) "
          f"({time.perf_counter() - started:.0f} s)")
    for pack, c in sorted(counts(p.task for p in proofs).items()):
        print(f"  {pack}: {c['tasks']} tasks: {c['scored']} with a scored trap, {c['tool_refused']} tool-refused only, "
              f"{c['speech_only']} speech-only")
    if args.write_tables:
        write_tables(proofs, industries)
    return 1 if bad else 0


def write_tables(proofs: list[TaskProof], industries: list[Path]) -> None:
    packs = PackRegistry(industries)
    by_pack: dict[str, list[TaskProof]] = {}
    for p in proofs:
        by_pack.setdefault(p.task.industry, []).append(p)
    for name, group in sorted(by_pack.items()):
        pack = packs.get(name)
        readme = pack.root / "README.md"
        suite = pack.suite and len(pack.suite["categories"]) * sum(pack.suite["per_category"].values())
        if not readme.exists():
            print(f"{pack.root}: no README.md, no trap table written")
        elif any(p.problems for p in group):
            print(f"{readme}: not written: the pack has tasks whose traps are not proven")
        elif suite and len(group) < suite:
            print(f"{readme}: not written: {len(group)} of the suite's {suite} tasks proven (run it on the whole suite)")
        else:
            changed = write(readme, [p.task for p in group])
            print(f"{readme}: trap table {'written' if changed else 'unchanged'}")
