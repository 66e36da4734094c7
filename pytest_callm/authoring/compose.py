"""Composing a training scenario from the sub-goals a pack declares (`industries/<pack>/compose.py`).

A pack's `compose.py` defines `compose(s: Scenario)`: it draws the caller and the facts that decide
the answer (from its own tables and pools, on both sides of each rule), writes what the caller says
from its own phrasings, and plays each step of the answer key through the pack's tools as it goes
(`s.call`), so every branch follows what the tools return on the drawn records, never what a locked
task did. The engine here knows no industry: it keeps the call's database, the key, the handoff
path and the caller's words, and checks the result:

- **intended**: a step played with `expect={...}` must return those fields (a conflict drawn is a
  conflict the tools find; a deadline drawn just expired is expired), else the draw is redrawn;
- **solvable**: every value of the key the pack gives a kind (a person, a phone, a date, a state,
  an id) is said by the caller in one of its spellings, or returned by an earlier tool.

A draw that fails either raises `Redraw`; `callm generate` then draws again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import itertools
import random
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pytest_callm.authoring.lint import scalars
from pytest_callm.normalize import phone as phone_digits
from pytest_callm.phone.spoken_numbers import ordinal_words, year_words
from pytest_callm.task.pack import Pack

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class Redraw(Exception):
    """This draw does not make a task the pack meant (or one that can be solved): draw again."""


# ----------------------------------------------------------------------------------------------
# spellings: how a caller may say a value, for the solvability check and for the pack's phrasings

def phone_forms(digits: str) -> list[str]:
    d = phone_digits(digits)[-10:]
    a, b, c = d[:3], d[3:6], d[6:]
    return [f"{a}-{b}-{c}", f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}", d]


def date_words(day: dt.date, year: bool = True) -> str:
    """"March fourth, twenty twenty-five": a date as a caller says it."""
    said = f"{MONTHS[day.month - 1]} {ordinal_words(day.day)}"
    return f"{said}, {year_words(day.year)}" if year else said


def date_forms(iso: str) -> list[str]:
    day = dt.date.fromisoformat(iso[:10])
    month = MONTHS[day.month - 1]
    return [iso[:10], date_words(day), f"{month} {day.day}, {day.year}", f"{month} {ordinal_words(day.day)} {day.year}",
            f"{day.month}/{day.day}/{day.year}", f"{day.month:02d}/{day.day:02d}/{day.year}"]


def spelled_out(text: str) -> str:
    """"HR-25-0519" said one character at a time: "H R dash 2 5 dash 0 5 1 9"."""
    return " ".join("dash" if c == "-" else c for c in text.upper() if not c.isspace())


# ----------------------------------------------------------------------------------------------
# the scenario a pack composes

@dataclass
class Step:
    call: dict[str, Any]
    result: Any  # the tool's data (its error's data when it failed); None for a handoff


@dataclass
class Scenario:
    """One training task as a pack composes it. The pack fills the caller's words and plays the key."""

    pack: Pack
    rng: random.Random
    names: Callable[[str], str]  # kind ("first", "last", "organization") -> a fresh word never in a locked task
    bench: Bench | None = None  # where the key is played (one per run; made here when not given)
    title: str = ""
    category: str = ""
    category_slug: str = ""
    difficulty: str = "medium"
    customer_name: str = ""
    opening: str = ""
    lines: list[str] = field(default_factory=list)  # the caller's script, sentence by sentence
    responses: list[dict[str, Any]] = field(default_factory=list)
    traits: list[dict[str, Any]] = field(default_factory=list)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    handoff_path: list[str] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)  # the sub-goals and complications composed: the scenario's shape
    traps: list[dict[str, Any]] = field(default_factory=list)  # wrong moves the task catches (`callm prove` replays them)
    forbidden: list[str] = field(default_factory=list)  # tools the right answer never calls
    _player: _Player | None = None

    # -- the caller's words -------------------------------------------------------------------

    def pick(self, options: Iterable[Any]) -> Any:
        options = list(options)
        return options[self.rng.randrange(len(options))]

    def say(self, text: str) -> None:
        self.lines.append(text)

    def answer(self, match_type: str, match_phrase: str, text: str) -> None:
        """A scripted line: when the agent asks (`question`), offers (`offer`) or something happens (`event`)."""
        self.responses.append({"match_type": match_type, "match_phrase": match_phrase,
                               "response_type": "say", "response_value": text})
        self.lines.append(f"When the agent {_verb(match_type)} {match_phrase}, say: \"{text}\"")

    def trait(self, name: str, value: Any) -> None:
        self.traits.append({"trait_name": name, "value": value})

    def caller_text(self) -> str:
        return "\n".join([self.opening, *self.lines, *(str(t["value"]) for t in self.traits)])

    # -- the answer key, played as it is written ----------------------------------------------

    def start(self) -> None:
        """Open the call's database (the seed and `records`); call after the records are drawn."""
        if self.bench is None:
            self.bench = Bench(self.pack)
        self._player = _Player(self.bench, self.records)

    def call(self, name: str, expect: dict[str, Any] | None = None, loose: dict[str, Any] | None = None,
             **parameters: Any) -> Any:
        """Play one call of the key through the pack's tools and keep it. `expect`: result fields the
        draw meant ("status": "conflict"); a result that differs, or a refusal the draw did not
        expect, raises `Redraw`. `loose`: arguments the call is played with that the key leaves free
        (any value is right)."""
        if self._player is None:
            self.start()
        spec = self.pack.tools.get(name)
        if spec is None:
            raise ValueError(f"pack {self.pack.name!r} has no tool {name!r}")
        call = {"name": name, "parameters": dict(parameters)} if parameters else {"name": name}
        if spec.kind == "handoff":
            self.handoff_path.append(name)
            self._player.agent = spec.handoff_target
            self.steps.append(Step(call, None))
            return None
        ok, status, data = self._player.play(name, {**(loose or {}), **parameters})
        call["status"] = status
        self.steps.append(Step(call, data))
        if not ok and "status" not in (expect or {}):
            raise Redraw(f"{name} refused with {status!r}: {data}")
        for key, want in (expect or {}).items():
            # "status" is the call's own status when it failed, else the result's field of that name
            got = status if key == "status" and not ok else \
                (data.get(key, status if key == "status" else None) if isinstance(data, dict) else None)
            if got != want:
                raise Redraw(f"{name} returned {key}={got!r}, the draw meant {want!r}")
        return data

    def at(self, name: str) -> int:
        """The place in the key of the last call of `name` so far (for a trap's edit)."""
        for i in range(len(self.steps) - 1, -1, -1):
            if self.steps[i].call["name"] == name:
                return i
        raise ValueError(f"no call of {name!r} in the key yet")

    def trap(self, trap_id: str, rule: str, wrong_move: str, caught_by: list[str] | str,
             calls: list[dict[str, Any]] | None = None, **extra: Any) -> None:
        """A wrong move the task catches: an edit of the key (as task files write it) and the gates that fail."""
        trap = {"id": trap_id, "rule": rule, "wrong_move": wrong_move, "caught_by": caught_by, **extra}
        if calls is not None:
            trap["edit"] = {"calls": calls}
        self.traps.append(trap)

    def close(self) -> None:
        if self._player is not None:
            self._player.close()
            self._player = None

    # -- checks and the task file -------------------------------------------------------------

    def unsolvable(self) -> list[str]:
        """Each value of the key that the caller never says and no earlier tool returned."""
        text = self.caller_text()
        folded = _fold(text)
        problems = []
        for i, step in enumerate(self.steps):
            spec = self.pack.tools[step.call["name"]]
            for param, value in (step.call.get("parameters") or {}).items():
                kind = spec.kinds.get(param)
                if kind is None or param in spec.free_text or value is None or isinstance(value, bool):
                    continue
                if self._said(kind, value, text, folded) or self._returned(kind, value, self.steps[:i]):
                    continue
                problems.append(f"{step.call['name']}.{param} = {value!r} ({kind}): the caller never says it and no "
                                "earlier tool returns it")
        return problems

    def _said(self, kind: str, value: Any, text: str, folded: str) -> bool:
        value = str(value)
        if kind == "phone":
            digits = re.sub(r"\D", "", text)
            return phone_digits(value)[-10:] in digits
        if kind == "date":  # a day said without its year is the coming one: the agent has the calendar
            day = dt.date.fromisoformat(str(value)[:10])
            bare = [date_words(day, year=False), f"{MONTHS[day.month - 1]} {day.day}"]
            return any(re.search(rf"(?<!\w){re.escape(_fold(f))}(?!\w)", folded) for f in [*date_forms(value), *bare])
        if kind in self.pack.values.tables:  # an alias table: any of its spellings of the value
            canon = self.pack.values.canonical(kind, value) or value
            variants = [canon, *self.pack.values.variants.get(kind, {}).get(canon, [])]
            return any(re.search(rf"(?<!\w){re.escape(_fold(v))}(?!\w)", folded) for v in variants)
        if kind == "identifier":
            return _fold(value) in folded or _fold(spelled_out(value)) in folded
        return _fold(value) in folded

    def _returned(self, kind: str, value: Any, earlier: list[Step]) -> bool:
        want = self.pack.values.key(kind, value)
        return any(isinstance(leaf, (str, int, float)) and not isinstance(leaf, bool)
                   and self.pack.values.key(kind, leaf) == want
                   for step in earlier for leaf in scalars(step.result))

    def task(self, task_id: str, generated: dict[str, Any]) -> dict[str, Any]:
        """The task file (unlocked: `callm lock` writes its expected state)."""
        intent = " ".join([f"Open with: \"{self.opening}\"", *self.lines])
        data: dict[str, Any] = {
            "task_name": f"{task_id}: {self.title}",
            "customer_name": self.customer_name,
            "intent": intent,
            "traits": self.traits,
            "exp_handoff_path": self.handoff_path,
            "exp_tool_calls": [s.call for s in self.steps],
            "scripted_responses": self.responses,
            "behaviors": [],
            "metadata": {"category": self.category, "category_slug": self.category_slug,
                         "difficulty": self.difficulty, "industry": self.pack.name},
            "traps": self.traps,
        }
        if self.forbidden:
            data["forbidden_tools"] = self.forbidden
        if self.records:
            data["records"] = self.records
        data["generated"] = {**generated, "scenario": self.shape()}
        return data

    def shape(self) -> str:
        """The scenario with its values, names left out: what makes two generated tasks one scenario."""
        return " + ".join(self.parts)


def _verb(match_type: str) -> str:
    return {"question": "asks", "offer": "offers", "event": "reaches the point where"}.get(match_type, match_type)


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w@.\s-]", " ", text.lower())).strip()


class Bench:
    """The pack's tools run in this process as the tool server runs them, one database per call.
    Building a pack's seeded template takes a while: one bench serves every scenario of a run."""

    def __init__(self, pack: Pack):
        from pytest_callm.toolserver.in_process import InProcessTools

        self.pack = pack
        self.loop = asyncio.new_event_loop()
        self.tools = InProcessTools({pack.name: pack})
        self.calls = itertools.count(1)

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        self.run(self.tools.aclose())
        self.loop.close()


class _Player:
    """One call of the bench: its database (the seed and the task's records) and whose desk it is at."""

    def __init__(self, bench: Bench, records: dict[str, list[dict[str, Any]]]):
        self.bench, self.pack = bench, bench.pack
        self.agent = self.pack.entry_agent
        self.call_id = f"compose{next(bench.calls)}"
        bench.run(bench.tools.start_call(self.pack.name, self.call_id, records or None))

    def play(self, name: str, parameters: dict[str, Any]) -> tuple[bool, str, Any]:
        desk = self.agent if name in self.pack.agents[self.agent].tools else \
            (self.pack.owner_agents(name) or [self.agent])[0]
        result, _ = self.bench.run(
            self.bench.tools.call_audited(self.pack.name, self.call_id, name, dict(parameters), agent=desk))
        if result.get("ok"):
            return True, "ok", result.get("data")
        return False, result.get("error_code") or "error", result.get("data")

    def close(self) -> None:
        self.bench.run(self.bench.tools.remove_call(self.pack.name, self.call_id))


def load_composer(pack: Pack) -> Callable[[Scenario], None]:
    """The pack's `compose(scenario)`, from `industries/<pack>/compose.py`."""
    path = pack.root / "compose.py"
    if not path.exists():
        raise FileNotFoundError(f"pack {pack.name!r} has no compose.py: it declares the sub-goals training "
                                "scenarios are composed from (see docs/generate.md)")
    spec = importlib.util.spec_from_file_location(f"callm_compose_{pack.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "compose", None)):
        raise AttributeError(f"{path}: defines no compose(scenario) function")
    return module.compose


@lru_cache(maxsize=8)
def seed_tables(schema_sql: str, seed_sql: str) -> dict[str, list[dict[str, Any]]]:
    """Every table of a pack's seeded database, as rows (read once a pack)."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript(schema_sql)
    db.executescript(seed_sql)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    out = {t: [dict(r) for r in db.execute(f'SELECT * FROM "{t}"')] for t in tables}
    db.close()
    return out


def seed_rows(pack: Pack, table: str) -> list[dict[str, Any]]:
    """The rows of one table of the pack's seed (a pack composes from its own data)."""
    return [dict(r) for r in seed_tables(pack.schema_sql, pack.seed_sql).get(table, [])]

