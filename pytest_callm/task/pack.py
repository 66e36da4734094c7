"""Industry packs: loading a pack folder and checking it against the pack contract (DESIGN §3).

A pack folder holds `agent_blueprint.json`, `tools.json`, `pack.json`, `prompts/<agent>.md`,
`db/schema.sql`, `db/seed.sql` and `tools.py`. Everything the engine, the tool server and the
verifier know about an industry comes from here; `load_pack` either returns a fully checked `Pack`
or raises `PackError` listing every problem it found, so a broken pack is one readable error.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import json
import re
import sqlite3
import threading
import tomllib
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from decimal import Decimal, InvalidOperation

from pytest_callm.normalize import KINDS, ValueKinds
from pytest_callm.normalize import date as date_kind
from pytest_callm.normalize import money as money_kind
from pytest_callm.task.pack_code import PackCodeExited, import_pack_file, inside_pack  # noqa: F401  (importable from here)
from pytest_callm.toolkit import ToolRegistry
from pytest_callm.task.refusals import Refusal, load_refusals
from pytest_callm.task.tool_schemas import schema_errors
from pytest_callm.task.words_spec import WordsSpec, load_words

BLUEPRINT = "agent_blueprint.json"
# The limits every tool argument meets before a tool runs, where its schema sets none of its own
# (DESIGN §3: a bad argument is an `invalid_arguments` envelope the model reads, never a crash).
# Far above anything a phone call needs; a value past them is a model gone astray, refused to it.
MAX_STRING_CHARS = 4_000  # the longest free text of any locked answer key is 118 characters
MAX_ITEMS = 100  # items of an array argument
MAX_MAGNITUDE = 10**15  # any number, and any amount of a `money` parameter: in cents still far below SQLite's 2**63
MAX_MESSAGE_CHARS = 300  # a schema message quotes the value: a 100,000-character one is not sent back whole
CHECKED_KEPT = 4_096  # checked arguments a pack remembers (then it starts again)
CHECKED_CHARS = 2_000  # arguments longer than this as JSON are not remembered
HANDOFF_PREFIX = "transfer_to_"
END_CALL = "end_call"


class PackError(Exception):
    """A pack that breaks the contract. The message lists every problem, one per line."""

    def __init__(self, pack_dir: Path, problems: list[str]):
        self.pack_dir = pack_dir
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"industry pack {pack_dir} is broken:\n{lines}")


@dataclass(frozen=True)
class ToolSpec:
    """One tool of `tools.json`: its OpenAI schema plus how the verifier compares its arguments."""

    name: str
    kind: str  # "industry" (tool server), "handoff" (switch agent) or "session" (end_call)
    schema: dict[str, Any]  # the OpenAI function tool, exactly as sent to the model
    free_text: frozenset[str]  # parameters never compared
    kinds: dict[str, str]  # parameter -> kind of value (normalize.KINDS or an alias table of pack.json)
    handoff_target: str | None = None
    ends_call: bool = False

    @property
    def parameters(self) -> dict[str, Any]:
        return self.schema["function"].get("parameters") or {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Agent:
    name: str
    prompt: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class ComparedTable:
    name: str
    exclude_columns: frozenset[str]
    key: str | None  # column used to pair rows when reporting a changed row
    kinds: dict[str, str] = field(default_factory=dict)  # column -> kind of value
    # Outcomes of extra rows forgiven when every value they tried was heard from the caller (a retry
    # after the phone line misheard a digit); rows of any other outcome are compared as they are.
    forgive_if_heard: frozenset[str] = frozenset()
    # column -> {"forbid": [what may not be written there], "rule": house rule id}: free text read for
    # what a rule forbids in it (scoring/free_text.py).
    free_text: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Columns that record, at the act, an order a house rule states (the facts taken before a
    # conflict check): `callm prove` does not count a reordering of the key that changes one as
    # another right answer.
    order_columns: frozenset[str] = frozenset()
    # Outcomes of extra rows that are harmless on the caller's own record (their identity verified
    # again, at any desk), when every value they tried was heard: the state a right agent leaves.
    harmless_if_own: frozenset[str] = frozenset()


@dataclass(frozen=True)
class People:
    """Where a pack keeps people's records (`pack.json` "people")."""

    tables: frozenset[str]  # a look at a row of these must leave an access row (front_desk.record_access)
    access_table: str = "record_access"
    identity_tools: tuple[str, ...] = ()  # tools that check who the caller is (the guessed-identity exploit)


@dataclass
class Pack:
    name: str
    root: Path
    company: str
    persona: str
    greeting: str
    entry_agent: str
    agents: dict[str, Agent]
    tools: dict[str, ToolSpec]
    compared_tables: dict[str, ComparedTable]
    values: ValueKinds  # the kinds of value and alias tables, shared by the verifier and tools.py
    now: dt.datetime
    schema_sql: str
    seed_sql: str
    registry: ToolRegistry
    suite: dict[str, Any] | None = None  # the locked suite's composition, for the linter
    # Tools every task must require or forbid, never leave optional (healthcare's text messages).
    required_or_forbidden: frozenset[str] = frozenset()
    validators: dict[str, jsonschema.protocols.Validator] = field(repr=False, default_factory=dict)
    people: People | None = None
    words: WordsSpec = field(default_factory=WordsSpec)  # what the words gate reads for (words.json, rules.json)
    refusals: dict[str, Refusal] = field(default_factory=dict)  # code -> what an attempt meeting it is (rules.json)
    # Arguments already checked (validation_errors): the schema check is a fifth of playing a call, and
    # a run sends the same arguments again and again (every attempt of a task, every mutant of a proof).
    _checked: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict, init=False, repr=False,
                                                             compare=False)

    def published_texts(self) -> list[str]:
        """What the business tells every caller's agent: its greeting, prompts and tool descriptions (the
        words gate grounds facts in them and reads their vocabulary)."""
        return [self.greeting, *(a.prompt for a in self.agents.values()),
                *(json.dumps(t.schema, ensure_ascii=False) for t in self.tools.values())]

    def owner_agents(self, tool: str) -> list[str]:
        return [a.name for a in self.agents.values() if tool in a.tools]

    def handoff_tool(self, agent: str) -> str:
        return HANDOFF_PREFIX + agent

    def agent_of_path_entry(self, entry: str) -> str | None:
        """Expected paths may name agents (`intake`) or their handoff tools (`transfer_to_intake`)."""
        if entry in self.agents:
            return entry
        spec = self.tools.get(entry)
        return spec.handoff_target if spec and spec.kind == "handoff" else None

    def tool_schemas(self, agent: str) -> list[dict[str, Any]]:
        return [self.tools[t].schema for t in self.agents[agent].tools]

    def prepared_arguments(self, tool: str, arguments: Any) -> Any:
        """`arguments` as the tool gets them: an ISO date-time where the schema asks a date is that
        date, and a whole number written as a float (30.0) where it asks an integer is that integer.

        The verifier's `date` kind reads a date-time by its day; so does the tool server, through the
        same function, so that such a value is accepted by both or refused by both. A float with a
        fraction stays a float, and the schema refuses it.
        """
        if not isinstance(arguments, dict) or tool not in self.tools:
            return arguments
        props = self.tools[tool].parameters.get("properties", {})

        def prepared(value: Any, schema: Any) -> Any:
            if not isinstance(schema, dict):
                return value
            if isinstance(value, list) and isinstance(schema.get("items"), dict):
                return [prepared(v, schema["items"]) for v in value]
            if schema.get("format") == "date" and isinstance(value, str):
                normal = date_kind(value)  # an ISO date only for a date or date-time; other text stays
                return normal if re.fullmatch(r"\d{4}-\d{2}-\d{2}", normal) else value
            if (schema.get("type") == "integer" and isinstance(value, float) and math.isfinite(value)
                    and value.is_integer() and abs(value) <= MAX_MAGNITUDE):
                return int(value)
            return value

        return {k: prepared(v, props.get(k)) for k, v in arguments.items()}

    def validation_errors(self, tool: str, arguments: Any) -> list[str]:
        """Problems of `arguments` for `tool`, each as `path: message`: the engine's limits where the
        schema sets none (`MAX_STRING_CHARS`, `MAX_ITEMS`, `MAX_MAGNITUDE`, finite numbers, amounts of
        a `money` parameter), then the schema's own."""
        if not isinstance(arguments, dict):
            return [f"(arguments): expected a JSON object, got {type(arguments).__name__}"]
        key = _checked_key(tool, arguments)
        found = self._checked.get(key) if key is not None else None
        if found is not None:
            return list(found)
        out = self._problems(tool, arguments)
        if key is not None:
            if len(self._checked) >= CHECKED_KEPT:
                self._checked.clear()
            self._checked[key] = tuple(out)
        return out

    def _problems(self, tool: str, arguments: dict[str, Any]) -> list[str]:
        validator = self.validators[tool]
        spec = self.tools[tool]
        known = spec.parameters.get("properties", {})
        out = [f"{_clipped(k)}: unexpected argument" for k in arguments if k not in known]
        for k, v in arguments.items():
            if k in known:
                out.extend(_limit_problems(v, known[k], k, spec.kinds.get(k)))
        if out:  # past a limit: the schema's messages would quote the value at length
            return out
        for err in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in err.absolute_path) or "(arguments)"
            out.append(f"{_clipped(where)}: {_clipped(err.message)}")
        return out


_JSON_LEAVES = frozenset({str, int, float, bool, type(None)})


def _checked_key(tool: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """How validation_errors remembers these arguments: their JSON text, in key order, where they are
    plain JSON values whose text says all the schema check sees (a tuple writes the text of a list, a
    subclass of str that of a str, and the check's messages tell them apart); None for what is not
    remembered (that, a NaN, and a flood past CHECKED_CHARS)."""
    stack: list[Any] = [arguments]
    while stack:  # exact classes only, walked without recursion
        value = stack.pop()
        cls = value.__class__
        if cls is dict:
            if any(k.__class__ is not str for k in value):
                return None
            stack.extend(value.values())
        elif cls is list:
            stack.extend(value)
        elif cls not in _JSON_LEAVES or (cls is float and value != value):
            return None
        if len(stack) > CHECKED_CHARS:
            return None
    try:
        text = json.dumps(arguments)
    except (TypeError, ValueError, RecursionError):
        return None
    return (tool, text) if len(text) <= CHECKED_CHARS else None


def _clipped(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit:,} more characters)"


def _limit_problems(value: Any, schema: Any, where: str, kind: str | None) -> list[str]:
    """The engine's limits on one argument (and its items), walked without recursion."""
    out = []
    stack = [(value, schema if isinstance(schema, dict) else {}, where)]
    while stack:
        item, sch, at = stack.pop()
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, (int, float)):
            if isinstance(item, float) and not math.isfinite(item):
                out.append(f"{at}: {item} is not a number")
            elif "maximum" not in sch and "minimum" not in sch and abs(item) > MAX_MAGNITUDE:
                out.append(f"{at}: {_clipped(str(item), 40)} is out of range (at most {MAX_MAGNITUDE:.0e} either way)")
            elif kind == "money":
                out.extend(_amount_problem(item, at))
        elif isinstance(item, str):
            limit = sch.get("maxLength", MAX_STRING_CHARS)
            if len(item) > limit:
                out.append(f"{at}: {len(item):,} characters, longer than {limit:,}")
            elif (hidden := _invisible(item)) is not None:
                out.append(f"{at}: holds an invisible character (U+{ord(hidden):04X}); write the value "
                           "with visible characters only")
            elif kind == "money":
                out.extend(_amount_problem(item, at))
        elif isinstance(item, list):
            limit = sch.get("maxItems", MAX_ITEMS)
            if len(item) > limit:
                out.append(f"{at}: {len(item):,} items, more than {limit:,}")
                continue
            items = sch.get("items") if isinstance(sch.get("items"), dict) else {}
            stack.extend((v, items, f"{at}/{i}") for i, v in enumerate(item))
        elif isinstance(item, dict):
            props = sch.get("properties") if isinstance(sch.get("properties"), dict) else {}
            if len(item) > MAX_ITEMS:
                out.append(f"{at}: {len(item):,} keys, more than {MAX_ITEMS:,}")
                continue
            stack.extend((v, props.get(k, {}), f"{at}/{_clipped(str(k), 40)}") for k, v in item.items())
    return out


def _invisible(text: str) -> str | None:
    """The first format character (Unicode Cf: zero-width spaces and joiners, bidi controls, the BOM)
    of `text`. Nobody says one; in an argument it makes a value that looks right and is stored wrong,
    so every tool of every pack refuses it as the model's bad input."""
    if text.isascii():  # every format character is outside ASCII (most arguments are ASCII)
        return None
    return next((c for c in text if unicodedata.category(c) == "Cf"), None)


def _amount_problem(value: Any, where: str) -> list[str]:
    """An amount of money that reads as a number must be a finite one in range ("NaN", "1e400" are
    not amounts a tool can add up); words the tool refuses itself, with its own message."""
    try:
        amount = Decimal(money_kind(value))
    except (InvalidOperation, ValueError):
        return []
    if not amount.is_finite() or abs(amount) > MAX_MAGNITUDE:
        return [f"{where}: {_clipped(str(value), 40)} is not an amount of money"]
    return []


# --- prompt placeholders -----------------------------------------------------------------------

def _spoken_date(day: dt.date) -> str:
    return f"{day:%A}, {day:%B} {day.day}, {day.year}"


def _clock(now: dt.datetime) -> str:
    hour = now.hour % 12 or 12
    return f"{hour}:{now.minute:02d} {'AM' if now.hour < 12 else 'PM'}"


def _calendar(today: dt.date) -> str:
    """Mondays from four weeks back to two weeks ahead: enough to name any nearby weekday."""
    monday = today - dt.timedelta(days=today.weekday())
    parts = []
    for week in range(-4, 3):
        day = monday + dt.timedelta(weeks=week)
        label = f"{day:%B} {day.day}" + (" (this week)" if week == 0 else "")
        parts.append(label)
    return "Mondays: " + ", ".join(parts) + "."


PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def render_prompt(text: str, now: dt.datetime) -> tuple[str, list[str]]:
    """Fill `{{today}}`, `{{time}}` and `{{calendar}}` from the pack clock (its one source of truth).

    Returns the text and the names of unknown placeholders.
    """
    values = {"today": _spoken_date(now.date()), "time": _clock(now), "calendar": _calendar(now.date())}
    unknown = [m.group(1) for m in PLACEHOLDER.finditer(text) if m.group(1) not in values]
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text), unknown


# --- discovery ---------------------------------------------------------------------------------

def discover_packs(dirs: Iterable[Path]) -> dict[str, Path]:
    """Pack name -> folder, for every folder under `dirs` holding an agent blueprint.

    A folder passed directly that is itself a pack counts too. The first folder to define a name
    wins, so a project's `industries/` shadows nothing silently: a duplicate name is an error.
    """
    found: dict[str, Path] = {}
    for d in dirs:
        d = Path(d)
        candidates = [d] if (d / BLUEPRINT).is_file() else sorted(p for p in d.glob("*") if (p / BLUEPRINT).is_file())
        for pack_dir in candidates:
            name = pack_dir.name
            if name in found and found[name].resolve() != pack_dir.resolve():
                raise PackError(pack_dir, [f"two packs are named {name!r}: {found[name]} and {pack_dir}"])
            found[name] = pack_dir
    return found


# --- loading -----------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _shape_schemas() -> dict[str, jsonschema.protocols.Validator]:
    raw = json.loads(resources.files("pytest_callm.task").joinpath("schemas/pack.schema.json").read_text())
    return {name: jsonschema.Draft202012Validator({**raw, "$ref": f"#/$defs/{name}"}) for name in raw["$defs"]}


def _read_json(path: Path, problems: list[str], shape: str) -> Any:
    """Parse one pack file and check its shape; problems are named by file and JSON path."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path.name} is missing")
        return None
    except json.JSONDecodeError as e:
        problems.append(f"{path.name} is not valid JSON: {e}")
        return None
    for err in sorted(_shape_schemas()[shape].iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        problems.append(f"{path.name}: {where}: {err.message}")
    return data


def _import_tools(pack_dir: Path, name: str, problems: list[str]) -> ToolRegistry:
    path = pack_dir / "tools.py"
    if not path.is_file():
        problems.append("tools.py is missing")
        return ToolRegistry()
    try:
        module = import_pack_file(pack_dir, name, "tools.py")
    except Exception as e:  # a pack bug: report it as a pack problem, not a deep traceback
        problems.append(f"tools.py failed to import: {type(e).__name__}: {e}")
        return ToolRegistry()
    registry = getattr(module, "tools", None)
    if not isinstance(registry, ToolRegistry):
        problems.append("tools.py must define `tools = ToolRegistry()` (from pytest_callm.toolkit)")
        return ToolRegistry()
    return registry


def _tool_entries(raw: list[dict], problems: list[str]) -> dict[str, tuple[dict, dict]]:
    """name -> (OpenAI schema, scoring metadata)."""
    out: dict[str, tuple[dict, dict]] = {}
    parameters: list[tuple[str, Any]] = []
    for entry in raw:
        fn = entry["function"]
        name = fn["name"]
        if name in out:
            problems.append(f"tools.json declares {name!r} twice")
        parameters.append((name, fn.get("parameters", {"type": "object", "properties": {}})))
        out[name] = ({"type": "function", "function": dict(fn)}, entry.get("scoring") or {})
    for name, error in schema_errors(parameters):
        problems.append(f"tools.json: parameters of {name!r} are not valid JSON Schema: {error}")
    return out


def _parse_clock(raw: Any, problems: list[str]) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(str(raw))
    except ValueError:
        problems.append(f"pack.json: clock {raw!r} is not an ISO date-time such as 2026-05-12T09:00:00")
        return dt.datetime(2026, 1, 1)


# Packs loaded by this process, by folder and by what its files hold. Loading a pack (compiling its
# words' patterns, checking its tool schemas, importing tools.py) took a third of a second, and the
# test suite loaded the same pack thousands of times (a registry per test, a stand-in agent per case):
# a tenth of its CPU. A pack whose files changed is read again; a pack with problems is never kept, so
# its error is reported every time.
_LOADED: dict[tuple, Pack] = {}  # (folder as named, resolved, fingerprint[, "tools only"])
_LOADED_LOCK = threading.Lock()
_KEEP = 16  # folders; a test run makes many packs of its own, each loaded a few times


def _fingerprint(pack_dir: Path) -> bytes:
    """A digest of every file in the pack's folder (bytecode caches aside), with its path."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(pack_dir.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        digest.update(str(path.relative_to(pack_dir)).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.digest()


def load_pack(pack_dir: Path, *, scoring: bool = True) -> Pack:
    """The pack in `pack_dir`, checked (raises PackError listing every problem); loaded once per
    process for as long as its files stay the same.

    `scoring=False`: without what only the verifier reads (words.json and rules.json's refusals, left
    empty and unchecked), for the tool server, which serves tools and never scores. Compiling the
    words' patterns was half of loading the shipped packs, 0.17 to 0.29 s of CPU at every tool server's
    start; the run that scores loads the whole pack and reports its problems."""
    pack_dir = Path(pack_dir)
    try:
        key = (pack_dir, pack_dir.resolve(), _fingerprint(pack_dir))  # as named too: a pack keeps its root
    except OSError:  # unreadable: the full load says which file and why
        return _load_pack(pack_dir, scoring)
    pack = _LOADED.get(key)
    if pack is None and not scoring:
        key = (*key, "tools only")
        pack = _LOADED.get(key)
    if pack is None:
        pack = _load_pack(pack_dir, scoring)
        with _LOADED_LOCK:  # a run's threads may load packs at once
            for older in [k for k in _LOADED if k[:2] == key[:2]]:  # this folder's earlier contents
                del _LOADED[older]
            while len(_LOADED) >= _KEEP:  # the oldest folder first
                del _LOADED[next(iter(_LOADED))]
            _LOADED[key] = pack
    return pack


def _load_pack(pack_dir: Path, for_scoring: bool = True) -> Pack:
    name = pack_dir.name
    problems: list[str] = []

    blueprint = _read_json(pack_dir / BLUEPRINT, problems, "blueprint")
    meta = _read_json(pack_dir / "pack.json", problems, "pack")
    raw_tools = _read_json(pack_dir / "tools.json", problems, "tools")
    if problems:  # the checks below assume the files have the right shapes
        raise PackError(pack_dir, problems)
    tool_entries = _tool_entries(raw_tools, problems)
    registry = _import_tools(pack_dir, name, problems)
    raw_agents = blueprint["agents"]

    agents: dict[str, Agent] = {}
    for agent_name, spec in raw_agents.items():
        prompt_rel = spec.get("prompt", f"prompts/{agent_name}.md")
        prompt_path = inside_pack(pack_dir, prompt_rel)
        prompt = prompt_path.read_text(encoding="utf-8") if prompt_path is not None and prompt_path.is_file() else ""
        if prompt_path is None:
            problems.append(f"{BLUEPRINT}: agents.{agent_name}.prompt: {prompt_rel!r} is outside the pack's folder "
                            "(a pack reads only its own files)")
        elif not prompt.strip():
            problems.append(f"agent {agent_name!r}: prompt {prompt_rel} is missing or empty")
        agents[agent_name] = Agent(agent_name, prompt, tuple(spec.get("tools", [])))
    entry = blueprint.get("entry_agent")
    if entry is not None and entry not in agents:
        problems.append(f"{BLUEPRINT}: entry_agent {entry!r} is not one of the agents {sorted(agents)}")

    values = ValueKinds(meta.get("aliases", {}), meta.get("alias_ignore", {}))
    problems.extend(f"pack.json: {c}" for c in values.collisions)
    for table in sorted(set(meta.get("alias_ignore", {})) - set(values.tables)):
        problems.append(f"pack.json: alias_ignore names {table!r}, which is not an alias table")
    ends_call = set(meta.get("ends_call") or [])

    tools: dict[str, ToolSpec] = {}
    for tool_name, (schema, scoring) in tool_entries.items():
        target = tool_name[len(HANDOFF_PREFIX):] if tool_name.startswith(HANDOFF_PREFIX) else None
        if target in agents and registry.get(tool_name) is None:
            kind = "handoff"
        elif tool_name == END_CALL:
            kind = "session"
        else:
            kind, target = "industry", None
            if registry.get(tool_name) is None:
                what = f"handoff target {tool_name[len(HANDOFF_PREFIX):]!r} is not an agent and the tool" \
                    if tool_name.startswith(HANDOFF_PREFIX) else "it"
                problems.append(f"tool {tool_name!r} is declared in tools.json but {what} is not implemented in tools.py")
        props = (schema["function"].get("parameters") or {}).get("properties") or {}
        free_text = frozenset(scoring.get("free_text", []))
        kinds = dict(scoring.get("kinds", {}))
        for p in [*free_text, *kinds]:
            if p not in props:
                problems.append(f"tools.json: scoring of {tool_name!r} names parameter {p!r}, which the tool does not have")
        for p, value_kind in kinds.items():
            if not values.known(value_kind):
                problems.append(f"tools.json: {tool_name}.{p} has kind {value_kind!r}, neither a kind of value "
                                f"({', '.join(KINDS)}) nor an alias table of pack.json")
        for p, prop in props.items():
            # The schema asks a date: the verifier reads it as one, as the tool server does.
            if isinstance(prop, dict) and prop.get("format") == "date" and p not in kinds and p not in free_text:
                kinds[p] = "date"
        tools[tool_name] = ToolSpec(tool_name, kind, schema, free_text, kinds, target if kind == "handoff" else None,
                                    tool_name in ends_call or kind == "session")
    for t in sorted(ends_call - set(tools)):
        problems.append(f"pack.json: ends_call names {t!r}, which tools.json does not declare")
    for t in sorted(registry.names() - set(tools)):
        problems.append(f"tools.py implements {t!r}, which tools.json does not declare")

    for agent in agents.values():
        for t in agent.tools:
            if t not in tools:
                hint = " (handoff target is not an agent)" if t.startswith(HANDOFF_PREFIX) else ""
                problems.append(f"agent {agent.name!r} owns {t!r}, which tools.json does not declare{hint}")

    if entry in agents:
        seen, todo = {entry}, [entry]
        while todo:
            for t in agents[todo.pop()].tools:
                target = tools[t].handoff_target if t in tools else None
                if target and target not in seen:
                    seen.add(target)
                    todo.append(target)
        for unreachable in sorted(set(agents) - seen):
            problems.append(f"agent {unreachable!r} cannot be reached from the entry agent {entry!r} by handoffs")

    schema_sql = _read_text(pack_dir / "db" / "schema.sql", problems)
    seed_sql = _read_text(pack_dir / "db" / "seed.sql", problems)
    columns = _table_columns(schema_sql, seed_sql, problems)

    compared: dict[str, ComparedTable] = {}
    rowid_columns = _rowid_columns(schema_sql) if columns is not None else {}
    for table, spec in meta["compared_tables"].items():
        if columns is not None and table not in columns:
            problems.append(f"pack.json: compared table {table!r} does not exist in db/schema.sql")
            continue
        excluded = frozenset(spec.get("exclude_columns", []))
        key = spec.get("key", "id" if columns and "id" in columns.get(table, ()) else None)
        column_kinds = dict(spec.get("kinds", {}))
        for col in sorted(excluded | ({key} if key else set()) | set(column_kinds)):
            if columns is not None and col not in columns[table]:
                problems.append(f"pack.json: {table}.{col} is not a column of {table}")
        for col, value_kind in column_kinds.items():
            if not values.known(value_kind):
                problems.append(f"pack.json: {table}.{col} has kind {value_kind!r}, neither a kind of value "
                                f"({', '.join(KINDS)}) nor an alias table of pack.json")
        for declared in ("forgive_if_heard", "harmless_if_own"):
            if columns is not None and spec.get(declared) and not {"outcome", "tried"} <= set(columns[table]):
                problems.append(f"pack.json: {table} declares {declared} but has no `outcome` and `tried` columns")
        for col in spec.get("free_text", {}):
            if columns is not None and col not in columns[table]:
                problems.append(f"pack.json: {table}.{col} (free_text) is not a column of {table}")
        for col in spec.get("order_columns", []):
            if columns is not None and col not in columns[table]:
                problems.append(f"pack.json: {table}.{col} (order_columns) is not a column of {table}")
        # A generated row id carries no meaning: two writes in the other order are the same state.
        excluded |= rowid_columns.get(table, frozenset())
        compared[table] = ComparedTable(table, excluded, key, column_kinds,
                                        frozenset(spec.get("forgive_if_heard", [])), dict(spec.get("free_text", {})),
                                        frozenset(spec.get("order_columns", [])),
                                        frozenset(spec.get("harmless_if_own", [])))

    people = None
    if "people" in meta:
        raw = meta["people"]
        people = People(frozenset(raw["tables"]), raw.get("access_table", "record_access"),
                        tuple(raw.get("identity_tools", [])))
        for t in sorted(people.tables | {people.access_table}):
            if columns is not None and t not in columns:
                problems.append(f"pack.json: people names table {t!r}, which db/schema.sql does not create")
        if people.access_table not in compared:
            problems.append(f"pack.json: people.access_table {people.access_table!r} must be a compared table")
        for t in people.identity_tools:
            if t not in tools:
                problems.append(f"pack.json: people.identity_tools names {t!r}, which tools.json does not declare")
    required_or_forbidden = frozenset(meta.get("required_or_forbidden") or [])
    for t in sorted(required_or_forbidden - set(tools)):
        problems.append(f"pack.json: required_or_forbidden names {t!r}, which tools.json does not declare")

    now = _parse_clock(meta["clock"], problems)
    for agent in list(agents.values()):
        text, unknown = render_prompt(agent.prompt, now)
        for name_ in unknown:
            problems.append(f"agent {agent.name!r}: prompt uses unknown placeholder {{{{{name_}}}}} "
                            "(known: today, time, calendar)")
        agents[agent.name] = Agent(agent.name, text, agent.tools)

    words, refusals = WordsSpec(), {}
    if for_scoring:
        words = load_words(pack_dir, set(tools), set(agents), problems, columns,
                           lambda table, column: _seed_column(schema_sql, seed_sql, table, column))
        refusals = load_refusals(pack_dir, problems)
    if problems:
        raise PackError(pack_dir, problems)

    validators = {
        name_: jsonschema.Draft202012Validator(spec.parameters, format_checker=jsonschema.FormatChecker())
        for name_, spec in tools.items()
    }
    return Pack(
        name=name, root=pack_dir, company=blueprint["company"], persona=blueprint.get("persona", ""),
        greeting=blueprint["greeting"], entry_agent=entry, agents=agents, tools=tools,
        compared_tables=compared, values=values, now=now, schema_sql=schema_sql,
        seed_sql=seed_sql, registry=registry, suite=meta.get("suite"),
        required_or_forbidden=required_or_forbidden, validators=validators, people=people, words=words,
        refusals=refusals,
    )


def _rowid_columns(schema_sql: str) -> dict[str, frozenset[str]]:
    """Per table, its `INTEGER PRIMARY KEY` column (SQLite's generated row id), if it has one."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema_sql)
        out = {}
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            info = list(db.execute(f'PRAGMA table_info("{table}")'))
            pk = [r for r in info if r[5]]
            if len(pk) == 1 and pk[0][2].upper() == "INTEGER":
                out[table] = frozenset({pk[0][1]})
        return out
    finally:
        db.close()


def _read_text(path: Path, problems: list[str]) -> str:
    if not path.is_file():
        problems.append(f"{path.parent.name}/{path.name} is missing")
        return ""
    return path.read_text(encoding="utf-8")


def _table_columns(schema_sql: str, seed_sql: str, problems: list[str]) -> dict[str, tuple[str, ...]] | None:
    """Build the seed in memory once: proves schema and seed apply, and lists tables and columns."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema_sql)
    except sqlite3.Error as e:
        problems.append(f"db/schema.sql does not apply: {e}")
        return None
    try:
        db.executescript(seed_sql)
    except sqlite3.Error as e:
        problems.append(f"db/seed.sql does not apply on top of the schema: {e}")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: tuple(r[1] for r in db.execute(f'PRAGMA table_info("{t}")')) for t in tables}


def _seed_column(schema_sql: str, seed_sql: str, table: str, column: str) -> list[str]:
    """One column of the seed, as text (the names words.json reads from the records)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema_sql)
        db.executescript(seed_sql)
        return [str(v) for (v,) in db.execute(f'SELECT "{column}" FROM "{table}"') if v is not None]
    finally:
        db.close()


class PackRegistry:
    """Packs of one session: discovered once, each loaded and checked on first use.

    After `dirs`, the installed benchmark's packs answer for the names none of them holds, wherever the
    tasks are (generated tasks written outside the repository name `legal`): pytest and every `callm`
    command find the suite's packs alike, and a project's own pack of the same name wins."""

    def __init__(self, dirs: Iterable[Path], suite: bool = True):
        from pytest_callm.task.benchmark import suite_pack_folder

        self.dirs = [Path(d) for d in dirs]
        self.paths = discover_packs(self.dirs)
        folder = suite_pack_folder() if suite else None
        if folder is not None and folder.is_dir():
            for name, path in discover_packs([folder]).items():
                self.paths.setdefault(name, path)
            if all(folder.resolve() != d.resolve() for d in self.dirs):
                self.dirs.append(folder)
        self._loaded: dict[str, Pack | PackError] = {}

    def names(self) -> list[str]:
        return sorted(self.paths)

    def loaded(self) -> dict[str, Pack]:
        """The packs loaded (and checked) so far: those of the collected tasks."""
        return {n: p for n, p in self._loaded.items() if isinstance(p, Pack)}

    def get(self, name: str) -> Pack:
        if name not in self.paths:
            where = ", ".join(str(d) for d in self.dirs) or "(no folders)"
            raise KeyError(f"no industry pack named {name!r} in {where}; known: {', '.join(self.names()) or 'none'}")
        if name not in self._loaded:
            try:
                self._loaded[name] = load_pack(self.paths[name])
            except PackError as e:
                self._loaded[name] = e
        got = self._loaded[name]
        if isinstance(got, PackError):
            raise got
        return got


def default_industries(root: Path) -> list[Path]:
    """`industries/` plus the `callm_industries` of the project's pyproject.toml, as pytest sees them."""
    dirs = [root / "industries"]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        ini = tomllib.loads(pyproject.read_text()).get("tool", {}).get("pytest", {}).get("ini_options", {})
        extra = ini.get("callm_industries", [])
        dirs += [root / p for p in ([extra] if isinstance(extra, str) else extra)]
    return [d for d in dirs if d.is_dir()]
