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
import os
import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.authoring.house_rules import HouseRules, load_house_rules, trap_rule_problems
from pytest_callm.authoring import rule_tables
from pytest_callm.authoring.exploit_judge import (Tally, judge_attempt, judge_exploit, one_line, tally_of,
                                                  unplayed_problem)
from pytest_callm.authoring.lock import find_task_files
from pytest_callm.authoring.probes import (KeyPlay, donors_of, exploits, misheard_retry, refused_attempts, reorders,
                                           repeats_and_rewordings, rule_violations)
from pytest_callm.authoring.trap_tables import counts, kind_of, write
from pytest_callm.authoring.replay import Outcome, Replay, apply_edit, one_off, play_all  # noqa: F401
from pytest_callm.call.oracle import AnswerKeyError, plan_answer_key
from pytest_callm.normalize import CORPORATE_SUFFIXES, words
from pytest_callm.phone.line import CleanLine
from pytest_callm.runs.runtime import Participants, Runtime
from pytest_callm.authoring.word_classes import measure_pack
from pytest_callm.authoring.word_probes import word_replays
from pytest_callm.scoring.verify import ALL_GATES as GATES, Verdict, verify
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import ExpectedCall, Task, load_task



def trap_replays(task: Task, pack: Pack) -> list[Replay]:
    out = []
    for trap in task.traps:
        if trap["caught_by"] == "speech-only":
            continue
        edit = trap["edit"]
        calls, touched = apply_edit(task.exp_tool_calls, edit.get("calls", []))
        path = [pack.agent_of_path_entry(e) for e in edit.get("handoff_path", task.exp_handoff_path)]
        out.append(Replay(task, pack, "trap", f"trap {trap['id']}: {trap['wrong_move']}", calls, path,
                          trap=trap, edited=frozenset(touched), caller_says=list(edit.get("caller_says", [])),
                          mishearings=dict(edit.get("mishearings", {}))))
    return out


# --- mutants -----------------------------------------------------------------------------------

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


_ACCENTED = {"a": "á", "e": "é", "i": "í", "o": "ó", "u": "ú", "n": "ñ"}


def _last_first_and_accent(name: str) -> list[str]:
    """"Clara Whitman" as a form writes it ("Whitman, Clara") and with an accent ("Clára Whitman")."""
    ws = name.split()
    out = [f"{ws[-1]}, {' '.join(ws[:-1])}"] if len(ws) >= 2 and "," not in name else []
    at = next((i for i, c in enumerate(name) if c.lower() in _ACCENTED), None)
    if at is not None:
        accented = _ACCENTED[name[at].lower()]
        out.append(name[:at] + (accented.upper() if name[at].isupper() else accented) + name[at + 1:])
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
        return [*_casings(value), f"Dr. {value}", f"{value}, MD", *_last_first_and_accent(value)]
    if kind == "organization":
        return _organization_forms(value)
    if kind == "party":
        forms = _casings(value)
        if len(value.split()) > 2 or any(w in CORPORATE_SUFFIXES for w in words(value)):
            forms = _organization_forms(value)
        else:
            forms += _last_first_and_accent(value)
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


@dataclass
class ProofRun:
    tasks: list[TaskProof]
    pack_problems: dict[str, list[str]] = field(default_factory=dict)  # rules.json, adversaries, invariants
    rules: dict[str, dict[str, Tally]] = field(default_factory=dict)  # pack -> rule id -> tally
    exploits: dict[str, dict[str, Tally]] = field(default_factory=dict)  # pack -> exploit -> tally
    right: dict[str, dict[str, Tally]] = field(default_factory=dict)  # pack -> kind of right answer -> tally
    refusals: dict[str, dict[str, Tally]] = field(default_factory=dict)  # pack -> refusal code -> tally
    house_rules: dict[str, HouseRules] = field(default_factory=dict)
    word_classes: dict[str, list[Any]] = field(default_factory=dict)  # pack -> each rule class's figures

    @property
    def problem_count(self) -> int:
        return sum(len(p.problems) for p in self.tasks) + sum(len(v) for v in self.pack_problems.values())


def prove(paths: Iterable[Path], industries: Iterable[Path], *, progress=None) -> list[TaskProof]:
    return prove_run(paths, industries).tasks


# Below this many tasks one process proves them all; above, each core takes a share (the engine
# replaying keys is the bottleneck: one process keeps one core busy, its tool server little more).
PARALLEL_FROM = 40


def prove_run(paths: Iterable[Path], industries: Iterable[Path], workers: int | None = None) -> ProofRun:
    """Prove every task under `paths`: in `workers` processes (default: one per core, at most 4, for
    a suite of PARALLEL_FROM tasks or more), each playing its share of the tasks."""
    files = find_task_files(paths)
    industries = [Path(i) for i in industries]
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(files) >= PARALLEL_FROM else 1
    if workers <= 1:
        return _prove_share(files, industries, 0, 1)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        shares = list(pool.map(_share_summary, [(files, industries, k, workers) for k in range(workers)]))
    return _merge(files, industries, shares)


def _share_summary(job: tuple[list[Path], list[Path], int, int]) -> dict[str, Any]:
    """One worker's share, as plain data (a pack's loaded code does not cross processes)."""
    run = _prove_share(*job)
    return {"tasks": {str(p.task.path): (p.problems, p.traps, p.mutants, p.unscorable, p.spellings) for p in run.tasks},
            "pack_problems": run.pack_problems, "rules": run.rules, "exploits": run.exploits, "right": run.right,
            "refusals": run.refusals}


def _merge(files: list[Path], industries: list[Path], shares: list[dict[str, Any]]) -> ProofRun:
    packs = PackRegistry(industries)
    run = ProofRun([TaskProof(load_task(p, packs)[1]) for p in files])
    for proof in run.tasks:
        share = next(s["tasks"][str(proof.task.path)] for s in shares if str(proof.task.path) in s["tasks"])
        proof.problems, proof.traps, proof.mutants, proof.unscorable, proof.spellings = share
        if proof.task.industry not in run.house_rules:
            run.house_rules[proof.task.industry] = load_house_rules(packs.get(proof.task.industry))
            run.word_classes[proof.task.industry] = measure_pack(packs.get(proof.task.industry))
    for share in shares:
        for pack, lines in share["pack_problems"].items():
            have = run.pack_problems.setdefault(pack, [])
            have.extend(line for line in lines if line.split(" (seen in ")[0] not in {h.split(" (seen in ")[0] for h in have})
        for name in ("rules", "exploits", "right", "refusals"):
            mine = getattr(run, name)
            for pack, groups in share[name].items():
                for group, t in groups.items():
                    mine.setdefault(pack, {}).setdefault(group, Tally()).add(t)
    return run


def _prove_share(files: list[Path], industries: list[Path], share: int, shares: int) -> ProofRun:
    """Prove the tasks of `files` whose position is `share` modulo `shares`; every task's key is still
    played (the exploits borrow other tasks' calls)."""
    packs = PackRegistry(industries)
    everything = [load_task(p, packs) for p in files]
    loaded = everything[share::shares]
    proofs = {id(task): TaskProof(task) for _, task, _ in loaded}
    run = ProofRun(list(proofs.values()))
    for _, task, pack in loaded:
        if pack.name not in run.house_rules:
            run.house_rules[pack.name] = load_house_rules(pack)
            run.pack_problems[pack.name] = list(run.house_rules[pack.name].problems)
            run.word_classes[pack.name] = measure_pack(pack)
            run.pack_problems[pack.name].extend(f"words class {p}" for f in run.word_classes[pack.name]
                                                for p in f.problems())
    for task, problem in trap_rule_problems([t for _, t, _ in loaded], run.house_rules):
        proofs[id(task)].problems.append(problem)
    mine = {id(t) for _, t, _ in loaded}

    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        # First each key as written: what each of its calls returns, reads and writes.
        keys = runtime.run(play_all(runtime, [Replay(t, pk, "key", "the answer key", list(t.exp_tool_calls),
                                                     list(t.exp_handoff_path), keep_state=id(t) in mine)
                                              for _, t, pk in everything]))
        plays = {id(o.replay.task): KeyPlay.of(o.seen) for o in keys}
        key_states = {id(o.replay.task): o.final_state for o in keys}
        for o in keys:
            if id(o.replay.task) in mine:
                _invariants(run, o)
        donors = donors_of((t, pk, plays[id(t)]) for _, t, pk in everything)
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
            play = plays[id(task)]
            replays.extend(rule_violations(task, pack, run.house_rules[pack.name]))
            played, skipped = exploits(task, pack, play, donors.get(pack.name, {}))
            replays.extend(played)
            for group, why in skipped:  # said beside the exploit's figures, never silently left out
                tally = tally_of(run.exploits, pack.name, group)
                tally.not_applied[why] = tally.not_applied.get(why, 0) + 1
            replays.extend(reorders(task, pack))
            replays.extend(repeats_and_rewordings(task, pack, play))
            replays.extend(misheard_retry(task, pack, play))
            attempts, not_tried = refused_attempts(task, pack, play)
            replays.extend(attempts)
            for why in not_tried:
                tally = tally_of(run.refusals, pack.name, "(none met)")
                tally.not_applied[why] = tally.not_applied.get(why, 0) + 1
            ok_tools = {c.name for i, c in enumerate(task.exp_tool_calls) if play.status.get(i) == "ok"}
            replays.extend(word_replays(task, pack, ok_tools))
        outcomes = runtime.run(play_all(runtime, replays))
        failed_rounds = [o for o in outcomes if o.replay.parts and not o.passed]
        singles = runtime.run(play_all(runtime, [p for o in failed_rounds for p in o.replay.parts]))
    finally:
        runtime.close()
    for o in [*outcomes, *singles]:
        _invariants(run, o)
        proof = proofs[id(o.replay.task)]
        kind = o.replay.kind
        if kind == "trap":
            problem = judge_trap(o)
            proof.traps.append({"id": o.replay.trap["id"], "failed": o.failed_gates, "ok": problem is None})
            if problem:
                proof.problems.append(problem)
        elif kind == "route":
            if not o.passed:
                why = o.error or o.verdict.explain().replace("\n", "\n      ")
                proof.problems.append(f"{o.replay.label} fails, though the task lists it as right:\n      {why}")
        elif kind == "mutant":
            proof.mutants += 1
            if o.error:
                proof.problems.append(f"mutant {o.replay.label}: {o.error}")
            elif o.verdict.passed and o.verdict.route is not None:
                proof.unscorable.append(f"{o.replay.label}: passes as route {o.verdict.route}, which the task "
                                        "lists as equally right")
            elif o.verdict.passed:
                proof.problems.append(f"mutant passes: {o.replay.label}")
        elif kind == "spelling":
            if o.replay.parts:
                proof.spellings += len(o.replay.parts)
            elif not o.passed:
                why = o.error or o.verdict.explain().replace("\n", "\n      ")
                proof.problems.append(f"correct spelling fails: {o.replay.label}\n      {why}")
        elif kind == "rule":
            _judge_violation(run, proof, o)
        elif kind == "exploit":
            tally = tally_of(run.exploits, o.replay.pack.name, o.replay.group)
            tally.tasks.add(o.replay.task.task_id)
            problem, note = judge_exploit(o, key_states[id(o.replay.task)])
            if problem:
                tally.problems += 1
                proof.problems.append(f"exploit {o.replay.group} ({o.replay.label}): {problem}")
            else:
                tally.as_required += 1
                tally.notes[note] = tally.notes.get(note, 0) + 1
        elif kind == "refusal":
            _judge_attempt(run, proof, o)
        elif kind == "right" and not (o.replay.parts and not o.passed):
            _judge_right(run, proof, o, plays[id(o.replay.task)], key_states[id(o.replay.task)])
    return run


def _invariants(run: ProofRun, o: Outcome) -> None:
    found = run.pack_problems.setdefault(o.replay.pack.name, [])
    for broken in o.broken:
        line = f"invariant broken: {broken} (seen in {o.replay.task.task_id}, {o.replay.label})"
        if not any(f"invariant broken: {broken} " in f for f in found):
            found.append(line)


def _judge_violation(run: ProofRun, proof: TaskProof, o: Outcome) -> None:
    r = o.replay
    tally = tally_of(run.rules, r.pack.name, r.group)
    tally.tasks.add(r.task.task_id)
    if o.error or o.unplayed:
        tally.problems += 1
        proof.problems.append(f"rule {r.label}: {o.error or unplayed_problem(o)}")
        return
    refused = r.refused_with is not None and any(s == r.refused_with and n in r.edited for n, s in o.statuses)
    failed = set(o.failed_gates)
    _count_violation_codes(run, proof, o)
    if refused or (r.gates and set(r.gates) <= failed):
        tally.as_required += 1
        note = "refused" if refused else "failed " + ", ".join(sorted(failed, key=GATES.index))
        tally.notes[note] = tally.notes.get(note, 0) + 1
        return
    tally.problems += 1
    wanted = f"refused with {r.refused_with!r}" if r.refused_with else f"fail {', '.join(r.gates)}"
    proof.problems.append(f"rule {r.label}: must {wanted}, but {'passes' if o.passed else 'fails ' + ', '.join(o.failed_gates)}"
                          f" ({one_line(o)})")


def _count_violation_codes(run: ProofRun, proof: TaskProof, o: Outcome) -> None:
    """A rule's adversary whose edited call meets a code the pack's refusal table always keeps on
    record (`violation`) is that code's adversary too: it must fail the tools gate."""
    refusals = o.replay.pack.refusals
    met = {s for n, s in o.statuses if n in o.replay.edited and s in refusals and refusals[s].attempt == "violation"}
    for code in sorted(met):
        tally = tally_of(run.refusals, o.replay.pack.name, code)
        tally.tasks.add(o.replay.task.task_id)
        if "tools" in o.failed_gates:
            tally.as_required += 1
            tally.notes["a rule's adversary: fails tools"] = tally.notes.get("a rule's adversary: fails tools", 0) + 1
        else:
            tally.problems += 1
            proof.problems.append(f"rule {o.replay.label}: meets {code} (a violation in rules.json \"refusals\"), "
                                  f"but the tools gate passes")


def _judge_attempt(run: ProofRun, proof: TaskProof, o: Outcome) -> None:
    problem, code, note = judge_attempt(o)
    tally = tally_of(run.refusals, o.replay.pack.name, code or "(none met)")
    tally.tasks.add(o.replay.task.task_id)
    if problem:
        tally.problems += 1
        proof.problems.append(f"refused attempt ({o.replay.label}): {problem}")
    elif code is None:
        tally.not_applied[note] = tally.not_applied.get(note, 0) + 1
    else:
        tally.as_required += 1
        tally.notes[note] = tally.notes.get(note, 0) + 1


def _judge_right(run: ProofRun, proof: TaskProof, o: Outcome, play: KeyPlay,
                 key_state: dict[str, Any] | None = None) -> None:
    r = o.replay
    tally = tally_of(run.right, r.pack.name, r.group)
    tally.tasks.add(r.task.task_id)
    if r.group == "reorder" and o.error is None:
        now = {c.key_index: c.status for c in o.seen if c.key_index is not None}
        # A result changed, a call was never reached (one ended the call first), or the order a house
        # rule states was recorded otherwise (a pack's order column): the order carries a dependency.
        if now != play.status or _order_changed(r.pack, o.final_state, key_state):
            tally.skipped += 1  # not another right answer
            return
    if r.parts:
        tally.as_required += len(r.parts)
        return
    if o.passed:
        tally.as_required += 1
        return
    tally.problems += 1
    why = o.error or o.verdict.explain().replace("\n", "\n      ")
    proof.problems.append(f"right answer fails: {r.label}\n      {why}")


def _order_changed(pack: Pack, a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two final states record a rule's order differently (`order_columns` of pack.json)."""
    if a is None or b is None:
        return False
    for name, table in pack.compared_tables.items():
        if table.order_columns:
            cols = sorted(table.order_columns)
            seen = lambda state: Counter(tuple(r.get(c) for c in cols) for r in state.get(name, []))
            if seen(a) != seen(b):
                return True
    return False


def _passes(outcome: Outcome) -> bool:
    return outcome.passed


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
    run = prove_run(args.paths, industries)
    proofs = run.tasks
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
    for pack, problems in sorted(run.pack_problems.items()):
        for line in problems:
            print(f"{pack}: FAIL {line}")
    traps = sum(len(p.traps) for p in proofs)
    print(f"{len(proofs)} task(s): {traps} trap replay(s), {sum(p.mutants for p in proofs)} mutant(s), "
          f"{sum(p.spellings for p in proofs)} correct spelling(s), "
          f"{sum(len(p.unscorable) for p in proofs)} unscorable mutant(s) listed with -v; "
          f"{run.problem_count} problem(s) in {len(bad)} task(s) and "
          f"{sum(1 for v in run.pack_problems.values() if v)} pack(s) ({time.perf_counter() - started:.0f} s)")
    for pack, c in sorted(counts(p.task for p in proofs).items()):
        print(f"  {pack}: {c['tasks']} tasks: {c['scored']} with a scored trap, {c['tool_refused']} tool-refused only, "
              f"{c['speech_only']} speech-only")
    print_figures(run)
    if args.write_tables:
        write_tables(proofs, industries, run)
    return 1 if run.problem_count else 0


def print_figures(run: ProofRun) -> None:
    """Per pack: each rule (applicable tasks, violations failed, violations passed), each exploit
    with its expectation, and each kind of generated right answer."""
    for pack in sorted(run.house_rules):
        rules = run.house_rules[pack]
        if not rules.declared:
            print(f"{pack}: no rules.json: its house rules are not declared, so no rule is proven")
        else:
            by = {k: sum(1 for r in rules.rules.values() if r.scored_by == k) for k in ("record", "tool", "speech")}
            print(f"{pack}: {len(rules.rules)} house rules ({by['record']} scored by a record, {by['tool']} refused by a "
                  f"tool, {by['speech']} speech only)")
            for rule in rules.rules.values():
                t = run.rules.get(pack, {}).get(rule.id)
                how = {"record": f"record {rule.record} ({', '.join(rule.gate)})" if rule.record else f"{', '.join(rule.gate)} gate",
                       "tool": f"tool refuses ({rule.refused_with})",
                       "speech": "words gate (a class of sentences)" if t is not None else "speech only"}[rule.scored_by]
                if t is None:
                    figures = "no task it applies to" if rule.scored_by != "speech" else rule.reason
                else:
                    figures = (f"{len(t.tasks)} task(s): {t.as_required} violation(s) caught, "
                               f"{t.problems} passed")
                print(f"  rule {rule.id:<28} {how:<44} {figures}")
        for figures in run.word_classes.get(pack, []):
            print(f"  words class {figures.line()}")
        for name, t in sorted(run.exploits.get(pack, {}).items()):
            notes = "; ".join(f"{k} {v}" for k, v in sorted(t.notes.items()))
            print(f"  exploit {name:<18} {len(t.tasks)} task(s): {t.as_required} as expected ({notes}), "
                  f"{t.problems} not")
            if t.not_applied:
                why = "; ".join(f"{k}: {v}" for k, v in sorted(t.not_applied.items()))
                print(f"    not tried on {sum(t.not_applied.values())} task(s): {why}")
        refusals = run.house_rules[pack].pack.refusals
        for code, t in sorted(run.refusals.get(pack, {}).items()):
            if code == "(none met)":  # probes that met no refusal: said once, with why
                why = "; ".join(f"{k}: {v}" for k, v in sorted(t.not_applied.items()))
                print(f"  refused attempts not tried on {sum(t.not_applied.values())} task(s): {why}")
                continue
            attempt = refusals[code].attempt if code in refusals else "not listed"
            notes = "; ".join(f"{k} {v}" for k, v in sorted(t.notes.items()))
            line = f"  refusal {code:<26} {attempt:<12} {len(t.tasks)} task(s): {t.as_required} as the table says"
            print(line + (f" ({notes})" if notes else "") + f", {t.problems} not")
            if t.not_applied:
                why = "; ".join(f"{k}: {v}" for k, v in sorted(t.not_applied.items()))
                print(f"    not tried on {sum(t.not_applied.values())} task(s): {why}")
        unmet = sorted(set(refusals) - set(run.refusals.get(pack, {})))
        if unmet:
            print(f"  refusal codes no replay met ({len(unmet)}): {', '.join(unmet)}")
        for name, t in sorted(run.right.get(pack, {}).items()):
            skipped = f", {t.skipped} changed a result (kept order)" if t.skipped else ""
            print(f"  right answers {name:<15} {len(t.tasks)} task(s): {t.as_required} pass, {t.problems} fail{skipped}")


def write_tables(proofs: list[TaskProof], industries: list[Path], run: ProofRun | None = None) -> None:
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
            rules = run.house_rules.get(name) if run else None
            if rules is not None and rules.declared and not run.pack_problems.get(name):
                changed = rule_tables.write(readme, rules, [p.task for p in group], run.rules.get(name, {}))
                print(f"{readme}: house-rule table {'written' if changed else 'unchanged'}")
