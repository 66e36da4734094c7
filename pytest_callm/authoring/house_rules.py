"""A pack's house rules as data, and the adversary that breaks each one (DESIGN §7a).

A trap is its author's imagination; a rule is what the business says. Each pack lists its rules in
`rules.json` beside its prompts:

    {"rules": [
      {"id": "one-clinical-route",
       "rule": "A clinical question goes one way: a care-team message or the nurse line, never both.",
       "says": [{"agent": "clinical", "text": "Never send a care-team message and escalate the same question."}],
       "agents": ["clinical"],
       "scored_by": "record", "gate": ["database"], "record": "clinical_messages"},
      {"id": "verify-before-records", ..., "scored_by": "tool", "refused_with": "not_verified"},
      {"id": "no-medical-advice", ..., "scored_by": "speech",
       "reason": "advice is only spoken; no record a practice keeps holds what was said"}
    ]}

- `says`: the prompt sentences the rule comes from, each found verbatim (whitespace aside) in that
  agent's prompt, so a rule cannot drift from what the model is told.
- `scored_by`: `record` (a compared record shows the violation: `gate` names the gates that fail,
  `record` the table), `tool` (a tool refuses it with `refused_with`, and nothing changes), or
  `speech` (only what the agent says breaks it, with the `reason` no record can hold it).
- Every rule scored by a record has an adversary in the pack's `adversaries.py`: a function that
  turns any answer key it applies to into a violation of the rule. `callm prove` applies it to every
  task of the pack, not only those that declared a trap, and each violation must fail the rule's
  gates. A rule scored by a tool may have one too: its violation must be refused with its code.

    from pytest_callm.authoring.house_rules import Adversaries, insert

    adversaries = Adversaries()

    @adversaries.rule("one-clinical-route")
    def also_escalate(key):
        at = key.index("send_clinical_message")
        if at is None:
            return None  # the rule does not apply to this task
        return key.edit(insert(at + 1, "escalate_to_human", reason="clinical", summary="both ways"))

A generator returns None (does not apply), one violation, or a list of them. A violation is an
edit of the key in the trap format (`{"calls": [...], "handoff_path": [...], "caller_says": [...]}`)
with an optional `label` saying what the wrong agent did.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.task.pack import Pack, import_pack_file
from pytest_callm.task.task_file import ExpectedCall, Task

RULES_FILE = "rules.json"
ADVERSARIES_FILE = "adversaries.py"
SCORED_BY = ("record", "tool", "speech")
GATE_NAMES = ("tools", "handoff", "database")


@dataclass(frozen=True)
class Rule:
    id: str
    rule: str  # the rule in one sentence, for people
    says: tuple[tuple[str, str], ...]  # (agent, sentence of its prompt)
    agents: tuple[str, ...]
    scored_by: str
    gate: tuple[str, ...] = ()
    record: str | None = None
    refused_with: str | None = None
    reason: str | None = None
    words: bool = False  # a speech rule with a class of sentences the words gate reads


# --- the key an adversary edits ---------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    """One task's answer key, as an adversary sees it (read-only), with helpers to write an edit."""

    task: Task
    pack: Pack

    @property
    def calls(self) -> list[ExpectedCall]:
        return self.task.exp_tool_calls

    @property
    def path(self) -> list[str]:
        """The expected agents in order (handoff tools as agent names)."""
        return [self.pack.agent_of_path_entry(e) for e in self.task.exp_handoff_path]

    def index(self, name: str, **where: Any) -> int | None:
        """The position of the first call of `name` (whose parameters include `where`), or None."""
        found = self.indexes(name, **where)
        return found[0] if found else None

    def indexes(self, name: str, **where: Any) -> list[int]:
        return [i for i, c in enumerate(self.calls)
                if c.name == name and all(c.parameters.get(k) == v for k, v in where.items())]

    def call(self, i: int) -> ExpectedCall:
        return self.calls[i]

    def status(self, i: int) -> str | None:
        return self.calls[i].status

    def agent_at(self, i: int) -> str:
        """The agent active when the key makes its call `i` (as the oracle plays it)."""
        from pytest_callm.call.oracle import plan_answer_key

        for planned in plan_answer_key(self.task, self.pack):
            if planned.key_index == i:
                return planned.agent
        raise IndexError(i)

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Rows of the database the task's calls start from (the pack's seed, plus the task's own
        records): another customer to impersonate, the caller's other visit to cancel by mistake."""
        return [dict(r) for r in self.seeded().execute(sql, params)]

    def seeded(self) -> sqlite3.Connection:
        """The task's starting database, shared and read only (build a fresh one to write: `start_db`)."""
        return _seed_db(self.pack, self.task.records)

    def start_db(self) -> sqlite3.Connection:
        """A fresh, private database in the state the task's calls start from: the pack's schema and
        seed plus the task's own records (`records` in task.json), autocommit, rows as `sqlite3.Row`."""
        return start_db(self.pack, self.task.records)

    def edit(self, *changes: dict[str, Any], handoff_path: list[str] | None = None,
             caller_says: list[str] | None = None, label: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"calls": list(changes)}
        if handoff_path is not None:
            out["handoff_path"] = handoff_path
        if caller_says:
            out["caller_says"] = caller_says
        if label:
            out["label"] = label
        return out


_SEEDS: dict[tuple[int, str], sqlite3.Connection] = {}


def _seed_db(pack: Pack, records: dict[str, list[dict[str, Any]]]) -> sqlite3.Connection:
    """One shared starting database per pack and set of task records (a locked task has none)."""
    at = (id(pack), json.dumps(records, sort_keys=True) if records else "")
    db = _SEEDS.pop(at, None)
    if db is None:
        db = start_db(pack, records)
    _SEEDS[at] = db  # most recent last
    while len(_SEEDS) > 64:  # a generated set has a start state per task: keep the recent ones
        del _SEEDS[next(iter(_SEEDS))]
    return db


def start_db(pack: Pack, records: dict[str, list[dict[str, Any]]]) -> sqlite3.Connection:
    """A fresh in-memory database: the pack's schema and seed, plus a task's own records."""
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.executescript(pack.schema_sql)
    db.executescript(pack.seed_sql)
    for table, rows in records.items():
        for row in rows:
            listed = ", ".join(f'"{c}"' for c in row)
            db.execute(f'INSERT INTO "{table}" ({listed}) VALUES ({", ".join("?" * len(row))})', tuple(row.values()))
    return db


def insert(at: int, name: str, **parameters: Any) -> dict[str, Any]:
    """A call inserted before the key's call `at` (the key's length: at the end)."""
    return {"insert": at, "call": {"name": name, "parameters": parameters}}


def replace(at: int, name: str, **parameters: Any) -> dict[str, Any]:
    return {"replace": at, "call": {"name": name, "parameters": parameters}}


def set_(at: int, **parameters: Any) -> dict[str, Any]:
    """The key's call `at` with these parameters changed (None removes one)."""
    return {"set": at, "parameters": parameters}


def drop(at: int) -> dict[str, Any]:
    return {"drop": at}


Generator = Callable[[Key], "dict[str, Any] | list[dict[str, Any]] | None"]


class Adversaries:
    """A pack's adversaries, by the rule each breaks (`adversaries.py` defines `adversaries`)."""

    def __init__(self) -> None:
        self.by_rule: dict[str, list[Generator]] = {}

    def rule(self, rule_id: str) -> Callable[[Generator], Generator]:
        def register(fn: Generator) -> Generator:
            self.by_rule.setdefault(rule_id, []).append(fn)
            return fn

        return register

    def violations(self, rule_id: str, key: Key) -> list[tuple[str, dict[str, Any]]]:
        """(label, edit) for every violation of `rule_id` the pack's generators make of `key`."""
        out = []
        for fn in self.by_rule.get(rule_id, []):
            made = fn(key)
            if made is None:
                continue
            for edit in made if isinstance(made, list) else [made]:
                label = edit.get("label") or (fn.__doc__ or fn.__name__).strip().splitlines()[0]
                out.append((f"{fn.__name__}: {label}", {k: v for k, v in edit.items() if k != "label"}))
        return out


# --- loading and checking ----------------------------------------------------------------------

@dataclass
class HouseRules:
    pack: Pack
    rules: dict[str, Rule] = field(default_factory=dict)
    adversaries: Adversaries = field(default_factory=Adversaries)
    problems: list[str] = field(default_factory=list)  # what is wrong with the declarations

    @property
    def declared(self) -> bool:
        return bool(self.rules)


def _flat(text: str) -> str:
    return " ".join(text.split())


def load_house_rules(pack: Pack) -> HouseRules:
    """The pack's rules and adversaries, with every problem of their declaration named (a pack with
    no rules.json has none, and prove says so)."""
    out = HouseRules(pack)
    path = pack.root / RULES_FILE
    if not path.is_file():
        return out
    where = f"{pack.name}/{RULES_FILE}"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        out.problems.append(f"{where}: not JSON: {e}")
        return out
    entries = raw.get("rules") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        out.problems.append(f"{where}: expected {{\"rules\": [...]}}")
        return out
    for n, entry in enumerate(entries):
        rule, problems = _parse_rule(entry, pack, f"{where}: rules[{n}]")
        out.problems.extend(problems)
        if rule is None:
            continue
        if rule.id in out.rules:
            out.problems.append(f"{where}: rules[{n}]: id {rule.id!r} is used twice")
        out.rules[rule.id] = rule
    out.adversaries = _import_adversaries(pack, out.problems)
    for rule_id in sorted(set(out.adversaries.by_rule) - set(out.rules)):
        out.problems.append(f"{pack.name}/{ADVERSARIES_FILE}: an adversary breaks {rule_id!r}, which {RULES_FILE} "
                            "does not declare")
    for rule in out.rules.values():
        if rule.scored_by == "record" and rule.id not in out.adversaries.by_rule:
            out.problems.append(f"{where}: rule {rule.id!r} is scored by a record, but {ADVERSARIES_FILE} has no "
                                "adversary that breaks it")
    return out


def _parse_rule(entry: Any, pack: Pack, where: str) -> tuple[Rule | None, list[str]]:
    problems: list[str] = []
    if not isinstance(entry, dict):
        return None, [f"{where}: expected an object"]
    rule_id = entry.get("id")
    if not isinstance(rule_id, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", rule_id):
        return None, [f"{where}.id: a short name of lower-case letters, digits and dashes"]
    where = f"{where} ({rule_id})"
    known = {"id", "rule", "says", "agents", "scored_by", "gate", "record", "refused_with", "reason", "words"}
    problems.extend(f"{where}.{k}: unknown field" for k in sorted(set(entry) - known))
    if not isinstance(entry.get("rule"), str) or not entry["rule"].strip():
        problems.append(f"{where}.rule: say the rule in one sentence")
    agents = entry.get("agents") or []
    problems.extend(f"{where}.agents: {a!r} is not an agent of the pack" for a in agents if a not in pack.agents)
    says = []
    for i, said in enumerate(entry.get("says") or []):
        agent, text = (said or {}).get("agent"), (said or {}).get("text")
        if agent not in pack.agents or not isinstance(text, str):
            problems.append(f"{where}.says[{i}]: needs an agent of the pack and the text of its prompt")
            continue
        if _flat(text) not in _flat(pack.agents[agent].prompt):
            problems.append(f"{where}.says[{i}]: not found in {agent}'s prompt: {text[:80]!r}")
        says.append((agent, text))
    if not says:
        problems.append(f"{where}.says: name the prompt sentences the rule comes from")
    scored_by = entry.get("scored_by")
    gate = tuple(entry.get("gate") or ())
    if scored_by not in SCORED_BY:
        problems.append(f"{where}.scored_by: one of {', '.join(SCORED_BY)}")
    elif scored_by == "record":
        if not gate or any(g not in GATE_NAMES for g in gate):
            problems.append(f"{where}.gate: the gates a violation fails ({', '.join(GATE_NAMES)})")
        if entry.get("record") not in pack.compared_tables and "database" in gate:
            problems.append(f"{where}.record: the compared table that shows the violation")
    elif scored_by == "tool" and not entry.get("refused_with"):
        problems.append(f"{where}.refused_with: the error code the tool refuses with")
    elif scored_by == "speech" and not entry.get("reason"):
        problems.append(f"{where}.reason: why no record a business keeps can show the violation")
    if "words" in entry and scored_by != "speech":
        problems.append(f"{where}.words: a class of sentences is for a rule scored by speech (the words gate)")
    return Rule(rule_id, entry.get("rule", ""), tuple(says), tuple(agents), scored_by or "", gate,
                entry.get("record"), entry.get("refused_with"), entry.get("reason"), "words" in entry), problems


def _import_adversaries(pack: Pack, problems: list[str]) -> Adversaries:
    path = pack.root / ADVERSARIES_FILE
    if not path.is_file():
        return Adversaries()
    try:
        module = import_pack_file(pack.root, pack.name, ADVERSARIES_FILE)
    except Exception as e:  # a pack's own bug: named, never a crash of prove
        problems.append(f"{pack.name}/{ADVERSARIES_FILE} failed to import: {type(e).__name__}: {e}")
        return Adversaries()
    found = getattr(module, "adversaries", None)
    if not isinstance(found, Adversaries):
        problems.append(f"{pack.name}/{ADVERSARIES_FILE} must define `adversaries = Adversaries()`")
        return Adversaries()
    return found


def trap_rule_problems(tasks: Iterable[Task], rules: dict[str, HouseRules]) -> list[tuple[Task, str]]:
    """Each declared trap of a pack with rules names one of them."""
    out = []
    for task in tasks:
        declared = rules.get(task.industry)
        if declared is None or not declared.declared:
            continue
        for trap in task.traps:
            rule_id = trap.get("rule")
            if rule_id is None:
                out.append((task, f"trap {trap['id']}: names no rule (\"rule\": one of {RULES_FILE}'s ids)"))
            elif rule_id not in declared.rules:
                out.append((task, f"trap {trap['id']}: rule {rule_id!r} is not in {task.industry}/{RULES_FILE}"))
    return out
