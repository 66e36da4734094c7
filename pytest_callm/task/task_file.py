"""Task files: loading, schema validation and checks against the task's industry pack (DESIGN §9).

Every problem is reported as `<file>: <JSON path>: <what is wrong>` so a bad task names itself.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from pytest_callm import user_cache
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.toolkit import result_status


# The ids `callm generate` gives its tasks start so (gen-<seed>-<number>-<category>): never a
# locked id, and `-k gen` picks them.
GENERATED_PREFIX = "gen"


def is_task_file(name: str) -> bool:
    return name == "task.json" or name.endswith(".task.json")


class TaskError(Exception):
    def __init__(self, path: Path, problems: list[str]):
        self.path = path
        self.problems = problems
        super().__init__("\n".join(f"{path}: {p}" for p in problems))


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    parameters: dict[str, Any]  # constrained arguments (free-text ones are listed but never compared)
    status: str | None  # expected result status, None when the key records none
    alternatives: dict[str, list[Any]] = field(default_factory=dict)
    either: tuple[ExpectedCall, ...] = ()  # other calls that satisfy this one equally

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        one = f"{self.name}({args})"
        return " or ".join([one, *(c.describe() for c in self.either)])

    @property
    def options(self) -> tuple[ExpectedCall, ...]:
        """The call as written, then each call it may be replaced by."""
        return (self, *self.either)


@dataclass(frozen=True)
class Route:
    """Another whole answer key, equally right: its own calls, path and expected state."""

    route_id: str
    exp_tool_calls: list[ExpectedCall]
    exp_handoff_path: list[str]
    exp_db_state: dict[str, list[dict[str, Any]]] | None


@dataclass
class Task:
    path: Path
    raw: dict[str, Any]
    task_id: str
    title: str
    industry: str
    category: str
    category_slug: str
    difficulty: str
    exp_handoff_path: list[str]
    exp_tool_calls: list[ExpectedCall]
    forbidden_tools: list[str]
    exp_db_state: dict[str, list[dict[str, Any]]] | None
    traps: list[dict[str, Any]] = field(default_factory=list)  # as written; `authoring/prove.py` replays them
    routes: list[Route] = field(default_factory=list)  # other answer keys, each as right as the main one
    route_id: str | None = None  # set on the task view of a route (`keys`)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # the task's own rows on the seed

    def keys(self) -> list[Task]:
        """The main answer key, then each route's, as tasks of their own (what the verifier scores)."""
        return [self, *(replace(self, exp_tool_calls=r.exp_tool_calls, exp_handoff_path=r.exp_handoff_path,
                                exp_db_state=r.exp_db_state, routes=[], route_id=r.route_id) for r in self.routes)]

    @property
    def name(self) -> str:
        """`industry/task_id`: task ids repeat across industries, this does not."""
        return f"{self.industry}/{self.task_id}"

    @property
    def customer_name(self) -> str:
        return self.raw["customer_name"]


@lru_cache(maxsize=1)
def task_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(resources.files("pytest_callm.task").joinpath("schemas/task.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def _json_path(parts) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _checker() -> bytes:
    """What a task text's check depends on: the schema (its references are all inside it), the code
    that checks (this module), the checker's release and Python's (the schema's patterns use `re`)."""
    schema = resources.files("pytest_callm.task").joinpath("schemas/task.schema.json").read_bytes()
    return b"\0".join([schema, Path(__file__).read_bytes(),
                        f"{user_cache.releases('jsonschema', 'referencing')} {sys.version}".encode()])


# The task texts found valid, on this machine. A run reads each task file several times (collection,
# the attempt, its task page, the report), every xdist worker collects the whole suite, and the schema
# check was nine tenths of a read (about 0.4 s of CPU for the 180 tasks): a text checked once is not
# checked again, by this process or a later one. A changed file is a new text, so it is checked; a
# failure is never remembered, so it is reported every time.
VALID_TEXTS = user_cache.Passed("task-texts", _checker())  # at import: the code that runs, not a later edit


def read_task_json(path: Path) -> dict[str, Any]:
    try:
        raw = Path(path).read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise TaskError(path, [f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}"]) from None
    except (OSError, UnicodeDecodeError) as e:
        raise TaskError(path, [f"cannot be read: {e}"]) from None
    except RecursionError:
        raise TaskError(path, ["nested too deeply to read (a task file is a few levels deep)"]) from None
    digest = hashlib.blake2b(raw, digest_size=16).digest()
    if digest in VALID_TEXTS:
        return data
    try:
        data = validate_task_data(path, data)
    except RecursionError:
        raise TaskError(path, ["nested too deeply to check (a task file is a few levels deep)"]) from None
    VALID_TEXTS.add([digest])
    return data


def validate_task_data(where: Path, data: Any) -> dict[str, Any]:
    """The task as a task file holds it (also one written in Python), checked against the schema."""
    errors = sorted(task_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise TaskError(where, [f"{_json_path(e.absolute_path)}: {e.message}" for e in errors])
    surrogates = list(_lone_surrogates(data, ()))
    if surrogates:  # JSON's \ud800 escapes read, but no text holding one can be written or sent
        raise TaskError(where, [f"{_json_path(at)}: holds a lone surrogate (an escaped \\ud800 to \\udfff "
                                "that is half a character): no text can hold it" for at in surrogates[:5]])
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogates(node: Any, at: tuple) -> Iterable[tuple]:
    if isinstance(node, str):
        if _SURROGATE.search(node):
            yield at
    elif isinstance(node, dict):
        for key, value in node.items():
            if _SURROGATE.search(key):
                yield (*at, key)
            yield from _lone_surrogates(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _lone_surrogates(value, (*at, i))


def industry_of(path: Path, data: dict[str, Any], known: list[str]) -> str | None:
    """From `metadata.industry`, else the nearest enclosing folder named like a known pack."""
    if data["metadata"].get("industry"):
        return data["metadata"]["industry"]
    for parent in Path(path).resolve().parents:
        if parent.name in known:
            return parent.name
    return None


def expected_status(call: dict[str, Any]) -> str | None:
    if "status" in call:
        return call["status"]
    return result_status(call.get("output"))


def build_task(path: Path, data: dict[str, Any], pack: Pack) -> Task:
    """Check the task against its pack and build the typed record. Raises TaskError."""
    problems = check_against_pack(data, pack)
    if problems:
        raise TaskError(path, problems)
    task_id, title = (s.strip() for s in data["task_name"].split(":", 1))
    meta = data["metadata"]
    slug = meta.get("category_slug") or task_id.split("-")[0]
    return Task(
        path=Path(path), raw=data, task_id=task_id, title=title, industry=pack.name,
        category=meta["category"], category_slug=slug, difficulty=meta["difficulty"],
        exp_handoff_path=[pack.agent_of_path_entry(e) for e in data["exp_handoff_path"]],
        exp_tool_calls=_expected_calls(data["exp_tool_calls"]),
        forbidden_tools=list(data.get("forbidden_tools", [])),
        exp_db_state=data.get("exp_db_state"),
        traps=list(data.get("traps", [])),
        records={t: [dict(r) for r in rows] for t, rows in data.get("records", {}).items()},
        routes=[Route(r["id"], _expected_calls(r["exp_tool_calls"]),
                      [pack.agent_of_path_entry(e) for e in r.get("exp_handoff_path", data["exp_handoff_path"])],
                      r.get("exp_db_state")) for r in data.get("routes", [])],
    )


def _expected_calls(raw: list[dict[str, Any]]) -> list[ExpectedCall]:
    def one(c: dict[str, Any]) -> ExpectedCall:
        return ExpectedCall(c["name"], dict(c.get("parameters") or {}), expected_status(c),
                            dict(c.get("alternatives") or {}), tuple(one(o) for o in c.get("either", [])))

    return [one(c) for c in raw]


def check_against_pack(data: dict[str, Any], pack: Pack) -> list[str]:
    from pytest_callm.task.task_records import records_problems

    problems = records_problems(data.get("records"), pack.schema_sql, pack.seed_sql)
    for i, entry in enumerate(data["exp_handoff_path"]):
        if pack.agent_of_path_entry(entry) is None:
            problems.append(f"$.exp_handoff_path[{i}]: {entry!r} is neither an agent nor a handoff tool of pack "
                            f"{pack.name!r} (agents: {', '.join(pack.agents)})")
    for i, call in enumerate(data["exp_tool_calls"]):
        problems.extend(_call_problems(f"$.exp_tool_calls[{i}]", call, pack))
    ids = set()
    for r, route in enumerate(data.get("routes", [])):
        if route["id"] in ids:
            problems.append(f"$.routes[{r}].id: {route['id']!r} is used by an earlier route")
        ids.add(route["id"])
        for i, call in enumerate(route["exp_tool_calls"]):
            problems.extend(_call_problems(f"$.routes[{r}].exp_tool_calls[{i}]", call, pack))
        for i, entry in enumerate(route.get("exp_handoff_path", [])):
            if pack.agent_of_path_entry(entry) is None:
                problems.append(f"$.routes[{r}].exp_handoff_path[{i}]: {entry!r} is neither an agent nor a handoff "
                                f"tool of pack {pack.name!r}")
    forbidden = data.get("forbidden_tools", [])
    for i, name in enumerate(forbidden):
        if name not in pack.tools:
            problems.append(f"$.forbidden_tools[{i}]: unknown tool {name!r} of pack {pack.name!r}")
        elif name not in pack.required_or_forbidden:
            declared = ", ".join(sorted(pack.required_or_forbidden)) or "none"
            problems.append(f"$.forbidden_tools[{i}]: {name!r} may not be forbidden: extra calls are allowed, except "
                            f"of the tools pack {pack.name!r} declares required_or_forbidden ({declared})")
    required = {c["name"] for c in data["exp_tool_calls"]}
    for name in sorted(pack.required_or_forbidden):
        if name in required and name in forbidden:
            problems.append(f"$.forbidden_tools: {name!r} is both required by exp_tool_calls and forbidden")
        elif name not in required and name not in forbidden:
            problems.append(f"$.forbidden_tools: pack {pack.name!r} declares {name!r} required_or_forbidden: "
                            "require it in exp_tool_calls or list it here")
    problems.extend(_trap_problems(data, pack))
    state = data.get("exp_db_state")
    if state is not None:
        for table in state:
            if table not in pack.compared_tables:
                problems.append(f"$.exp_db_state.{table}: not a compared table of pack {pack.name!r} "
                                f"({', '.join(pack.compared_tables)})")
        for table in pack.compared_tables:
            if table not in state:
                problems.append(f"$.exp_db_state: missing compared table {table!r} (refresh with `callm lock`)")
    for r, route in enumerate(data.get("routes", [])):
        if state is not None and "exp_db_state" not in route:
            problems.append(f"$.routes[{r}].exp_db_state: missing (fill it with `callm lock`)")
    return problems


def _call_problems(where: str, call: dict[str, Any], pack: Pack) -> list[str]:
    """An expected call (and each call it may be replaced by) against the pack's tools."""
    spec = pack.tools.get(call["name"])
    if spec is None:
        return [f"{where}.name: unknown tool {call['name']!r} of pack {pack.name!r}"]
    problems = []
    props = spec.parameters.get("properties", {})
    for key, value in (call.get("parameters") or {}).items():
        if key not in props:
            problems.append(f"{where}.parameters.{key}: {spec.name} has no parameter {key!r} "
                            f"(it has: {', '.join(props) or 'none'})")
            continue
        for err in jsonschema.Draft202012Validator(props[key]).iter_errors(value):
            problems.append(f"{where}.parameters.{key}: {err.message}")
    for key in call.get("alternatives") or {}:
        if key not in props:
            problems.append(f"{where}.alternatives.{key}: {spec.name} has no parameter {key!r}")
    for i, other in enumerate(call.get("either", [])):
        problems.extend(_call_problems(f"{where}.either[{i}]", other, pack))
    return problems


def _trap_problems(data: dict[str, Any], pack: Pack) -> list[str]:
    """Trap edits that point outside the key or name what the pack does not have."""
    problems = []
    size = len(data["exp_tool_calls"])
    seen: set[str] = set()
    for t, trap in enumerate(data.get("traps", [])):
        where = f"$.traps[{t}]"
        if trap["id"] in seen:
            problems.append(f"{where}.id: {trap['id']!r} is used by an earlier trap of this task")
        seen.add(trap["id"])
        edit = trap.get("edit")
        if trap["caught_by"] == "speech-only":
            if edit or "refused_with" in trap:
                problems.append(f"{where}: a speech-only trap has no edit and no refused_with: nothing is replayed")
            continue
        if not edit or not (edit.get("calls") or "handoff_path" in edit):
            problems.append(f"{where}.edit: a scored or tool-refused trap needs the wrong answer as an edit of the key")
            continue
        if not trap["caught_by"] and "refused_with" not in trap:
            problems.append(f"{where}.caught_by: empty, and no refused_with: a wrong move that nothing catches "
                            "is not a trap (say \"speech-only\", or name the gate)")
        for i, change in enumerate(edit.get("calls", [])):
            op = next(k for k in ("drop", "set", "replace", "insert") if k in change)
            limit = size if op == "insert" else size - 1
            if change[op] > limit:
                problems.append(f"{where}.edit.calls[{i}].{op}: {change[op]} is outside the answer key "
                                f"({size} calls)")
            call = change.get("call")
            if call is not None:
                spec = pack.tools.get(call["name"])
                if spec is None:
                    problems.append(f"{where}.edit.calls[{i}].call.name: unknown tool {call['name']!r} of pack "
                                    f"{pack.name!r}")
                    continue
                props = spec.parameters.get("properties", {})
                for key in call.get("parameters") or {}:
                    if key not in props:
                        problems.append(f"{where}.edit.calls[{i}].call.parameters.{key}: {spec.name} has no "
                                        f"parameter {key!r}")
        for i, entry in enumerate(edit.get("handoff_path", [])):
            if pack.agent_of_path_entry(entry) is None:
                problems.append(f"{where}.edit.handoff_path[{i}]: {entry!r} is neither an agent nor a handoff tool "
                                f"of pack {pack.name!r}")
    return problems


def load_task(path: Path, packs: PackRegistry, *, unlocked: bool = False) -> tuple[dict[str, Any], Task, Pack]:
    """Read, validate and build a task file: (raw JSON, task, pack). Raises TaskError or PackError.

    `unlocked` ignores the stored exp_db_state (used when replaying a key to produce it).
    """
    data = read_task_json(path)
    known = packs.names()
    industry = industry_of(path, data, known)
    if industry is None:
        raise TaskError(path, [
            "$.metadata.industry: cannot tell the industry; set metadata.industry or keep the file under "
            f"a folder named after its pack (packs found: {', '.join(known) or 'none'}; add folders with "
            "--callm-industries)"])
    try:
        pack = packs.get(industry)
    except KeyError as e:
        raise TaskError(path, [f"$.metadata.industry: {e.args[0]}"]) from None
    source = {k: v for k, v in data.items() if k != "exp_db_state"} if unlocked else data
    return data, build_task(path, source, pack), pack
