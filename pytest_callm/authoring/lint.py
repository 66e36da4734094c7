"""The task linter: checks that an answer key is fair and a suite is well formed, for any pack.

For every task:
- it is finished: no `TODO:` placeholder of `callm new-task` left, a non-empty answer key, a locked
  expected state;
- it loads (schema, pack references) and its answer key replays: every expected call is owned by
  an agent on the expected path and returns the status the key records;
- every constrained argument value of the key can be known by the agent when it makes the call:
  the caller says it (customer name, traits, the script in `intent`, scripted responses), an
  earlier expected call returned it, the active agent's prompt fixes it, or the parameter's schema
  does (an enum value, a boolean);
- its id says its category and difficulty (`C4-H3`: category C4, hard);
- its `alternatives` are other values, not spellings its parameter's kind of value already accepts.
For every industry whose `pack.json` declares a `suite`: task ids are unique and the category and
difficulty composition is exactly the declared one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_callm.authoring.lock import find_task_files
from pytest_callm.normalize import ValueKinds
from pytest_callm.call.oracle import AnswerKeyError, plan_answer_key
from pytest_callm.task.pack import Pack, PackError, PackRegistry
from pytest_callm.runs.runtime import Runtime
from pytest_callm.scoring.heard import Heard
from pytest_callm.task.task_file import GENERATED_PREFIX, Task, TaskError, load_task

DIFFICULTY_LETTER = {"easy": "E", "medium": "M", "hard": "H"}


@dataclass
class Problem:
    path: Path
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.where}: {self.message}"


def scalars(value: Any) -> Iterable[Any]:
    """Every value inside nested dicts and lists, None left out."""
    if isinstance(value, dict):
        for v in value.values():
            yield from scalars(v)
    elif isinstance(value, list):
        for v in value:
            yield from scalars(v)
    elif value is not None:
        yield value


def _spoken(text: str) -> str:
    # A period that ends a word ends a sentence ("the card ends in 8564."); one inside stays (an email).
    return " ".join(re.sub(r"[^\w@.\-]|\.(?=\s|$)", " ", text.casefold()).split())


def caller_knowledge(task: Task) -> tuple[list[Any], str]:
    """What the caller can say: discrete values (traits, name) and free text (script, responses)."""
    raw = task.raw
    values = [raw["customer_name"], *(t["value"] for t in raw.get("traits", []))]
    return values, _spoken(" ".join(_caller_texts(task)))


def _caller_texts(task: Task) -> list[str]:
    return [task.raw["intent"], *(r["response_value"] for r in task.raw.get("scripted_responses", []))]


def _heard_in_script(value: Any, kind: str | None, heard: Heard, today: dt.date) -> bool:
    """Whether the script says `value` of a declared kind as the verifier hears a caller
    (`scoring/heard.py`): a code spelled out ("K E dash 1 0 4 5 4 9"), a name in any order; a date
    said without its year ("Saturday, November fourteenth", its month by name) is the next one after
    today, which the agent's prompt gives. A value of no kind is matched word for word (`_in_text`):
    "3317" is no part of "33173"."""
    if kind is None:
        return False
    if heard.has(kind, value):
        return True
    if kind == "date":
        try:
            day = dt.date.fromisoformat(str(value)[:10])
        except ValueError:
            return False
        return today <= day <= today + dt.timedelta(days=366) and day.month in heard.months and \
            day.day in heard.numbers
    return False


def _in_text(value: Any, text: str, values: ValueKinds, kind: str | None) -> bool:
    """Whether `text` says `value`, or (for an alias table) any variant of its canonical value."""
    forms = {str(value)}
    table = values.tables.get(kind)
    if table:
        canonical = values.canonical(kind, value)  # as the table reads it (ignored words and all)
        forms |= {variant for variant, canon in table.items() if canon == canonical}
    return any(f" {_spoken(f)} " in f" {text} " for f in forms if _spoken(f))


def check_obtainable(task: Task, pack: Pack, results_before: list[list[Any]]) -> list[Problem]:
    """`results_before[i]`: scalar values returned by expected calls 0..i-1 in the replay."""
    values, said = caller_knowledge(task)
    heard, today = Heard(_caller_texts(task)), pack.now.date()
    problems = []
    plan = plan_answer_key(task, pack)
    agent_of = {c.key_index: c.agent for c in plan if c.key_index is not None}
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        props = spec.parameters.get("properties", {})
        prompt = _spoken(pack.agents[agent_of[i]].prompt)
        for param, expected in call.parameters.items():
            if param in spec.free_text:
                continue
            schema = props.get(param, {})
            kind = spec.kinds.get(param)
            # A list of a declared kind (a set of offices) is obtainable when each of its items is.
            items = expected if isinstance(expected, list) and kind is not None else [expected]
            item_schema = schema.get("items", {}) if items is expected else schema
            for j, item in enumerate(items):
                if _obtainable(item, kind, item_schema, pack, values, said, results_before[i], prompt) or \
                        _heard_in_script(item, kind, heard, today):
                    continue
                where = f"$.exp_tool_calls[{i}].parameters.{param}" + (f"[{j}]" if items is expected else "")
                problems.append(Problem(task.path, where,
                                        f"{item!r} is not said by the caller, returned by an earlier expected call, "
                                        f"fixed by the {agent_of[i]} prompt, or an enum value"))
    return problems


def _obtainable(value: Any, kind: str | None, schema: dict[str, Any], pack: Pack, values: list[Any], said: str,
                returned: list[Any], prompt: str) -> bool:
    """Whether the agent can know `value` when it makes the call (`prompt`: the agent's, as spoken)."""
    if isinstance(value, bool) or schema.get("type") == "boolean" or value in schema.get("enum", []):
        return True
    norm = pack.values.key(kind, value)
    if any(pack.values.key(kind, v) == norm for v in values) or _in_text(value, said, pack.values, kind):
        return True
    if any(pack.values.key(kind, v) == norm for v in returned):
        return True
    return _in_text(value, prompt, pack.values, kind)


def check_alternatives(task: Task, pack: Pack) -> list[Problem]:
    """Alternatives are other acceptable values (another slot), never spellings of the expected one:
    an alternative that the parameter's kind of value already equates with it is flagged."""
    problems = []
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        for param, alternatives in call.alternatives.items():
            kind = spec.kinds.get(param)
            expected = call.parameters.get(param)
            for j, alt in enumerate(alternatives):
                if expected is not None and pack.values.same(kind, expected, alt):
                    how = f"as a {kind} value" if kind else "once normalized"
                    problems.append(Problem(
                        task.path, f"$.exp_tool_calls[{i}].alternatives.{param}[{j}]",
                        f"{alt!r} already equals {expected!r} {how}; drop it (alternatives are for other values)"))
    return problems


def check_id(task: Task) -> list[Problem]:
    if "generated" in task.raw:  # `callm generate`'s own form: gen-<seed>-<number>-<category>
        m = re.fullmatch(rf"{GENERATED_PREFIX}-\d+-\d+-([A-Za-z0-9]+)", task.task_id)
        if not m:
            return [Problem(task.path, "$.task_name", f"id {task.task_id!r} of a generated task should look like "
                                                      f"{GENERATED_PREFIX}-1-00017-C2")]
        if m.group(1) != task.category_slug:
            return [Problem(task.path, "$.metadata.category_slug",
                            f"{task.category_slug!r} does not match the id {task.task_id!r}")]
        return []
    m = re.fullmatch(r"([A-Za-z0-9]+)-([EMH])(\d+)", task.task_id)
    if not m:
        return [Problem(task.path, "$.task_name", f"id {task.task_id!r} should look like C4-H3 or R-E1")]
    out = []
    if m.group(1) != task.category_slug:
        out.append(Problem(task.path, "$.metadata.category_slug",
                           f"{task.category_slug!r} does not match the id {task.task_id!r}"))
    if m.group(2) != DIFFICULTY_LETTER[task.difficulty]:
        out.append(Problem(task.path, "$.metadata.difficulty",
                           f"{task.difficulty!r} does not match the id {task.task_id!r}"))
    return out


PLACEHOLDER = "TODO:"  # how `callm new-task` marks what only the task's author can write


def _strings(value: Any, where: str = "$") -> Iterable[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, str):
        yield where, value


def check_unfinished(task: Task) -> list[Problem]:
    """What a task still lacks, in plain words: placeholders left, an empty answer key, no locked state."""
    problems = [Problem(task.path, where, f"not written yet: {text.split(PLACEHOLDER, 1)[1].strip()}")
                for where, text in _strings(task.raw) if PLACEHOLDER in text]
    if not task.exp_tool_calls:
        problems.append(Problem(task.path, "$.exp_tool_calls",
                                "the answer key is empty: list the tool calls the agent must make (name, the "
                                "parameters that must have a given value, status); a model that did nothing "
                                "would pass this task"))
    if task.exp_db_state is None:
        problems.append(Problem(task.path, "$.exp_db_state",
                                f"not locked: once the answer key is written, run `callm lock {task.path}` to "
                                "fill it by replaying the key"))
    return problems


def check_suite(pack: Pack, tasks: list[Task]) -> list[Problem]:
    suite = pack.suite
    if not suite:
        return []
    where = pack.root / "pack.json"
    problems = []
    for task_id, n in Counter(t.task_id for t in tasks).items():
        if n > 1:
            problems.append(Problem(where, "suite", f"task id {task_id} is used by {n} files"))
    counts = Counter((t.category_slug, t.difficulty) for t in tasks)
    for t in tasks:
        if t.category_slug not in suite["categories"]:
            problems.append(Problem(t.path, "$.metadata.category_slug",
                                    f"{t.category_slug!r} is not a category of the {pack.name} suite"))
    for slug in suite["categories"]:
        for level, wanted in suite["per_category"].items():
            if counts[(slug, level)] != wanted:
                problems.append(Problem(where, f"suite.{slug}.{level}",
                                        f"{counts[(slug, level)]} {level} task(s) in category {slug}, expected {wanted}"))
    return problems


def lint(paths: Iterable[Path], industries: Iterable[Path], suite: bool = True,
         notes: list[str] | None = None) -> tuple[list[Problem], int]:
    """All problems found, and the number of task files looked at; facts worth a look (not problems)
    are added to `notes`."""
    packs = PackRegistry(industries)
    problems: list[Problem] = []
    loaded: list[tuple[Task, Pack]] = []
    files = find_task_files(paths)
    for path in files:
        try:
            _, task, pack = load_task(path, packs)
        except TaskError as e:
            problems.extend(Problem(path, *p.split(": ", 1)) if ": " in p else Problem(path, "$", p)
                            for p in e.problems)
            continue
        except PackError as e:
            problems.append(Problem(path, "pack", str(e)))
            continue
        loaded.append((task, pack))
    if loaded:
        runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)  # the same tools; no server to start
        try:
            for task, pack in loaded:
                problems.extend(check_unfinished(task))
                problems.extend(check_id(task))
                problems.extend(check_alternatives(task, pack))
                try:
                    trajectory = runtime.play(task, pack, attempt=1)
                except AnswerKeyError as e:
                    problems.append(Problem(task.path, "$.exp_tool_calls", str(e)))
                    continue
                problems.extend(check_obtainable(task, pack, _results_before(task, pack, trajectory)))
                for r, route in enumerate(task.keys()[1:]):
                    try:
                        runtime.play(route, pack, attempt=1)
                    except AnswerKeyError as e:
                        problems.append(Problem(task.path, f"$.routes[{r}].exp_tool_calls", str(e)))
        finally:
            runtime.close()
    by_pack: dict[str, list[Task]] = defaultdict(list)
    for task, pack in loaded:
        by_pack[pack.name].append(task)
    for name, tasks in by_pack.items() if suite else ():
        problems.extend(check_suite(packs.get(name), tasks))
    if notes is not None and by_pack:
        # The paper's suite has 34 tasks (of 180) whose caller never needs a handoff.
        free = {name: sum(1 for t in tasks if not t.exp_handoff_path) for name, tasks in sorted(by_pack.items())}
        notes.append(f"tasks with no expected handoff: {sum(free.values())} "
                     f"({', '.join(f'{n} {c}' for n, c in free.items())})")
    return problems, len(files)


def _results_before(task: Task, pack: Pack, trajectory) -> list[list[Any]]:
    """For each expected call, the scalars every earlier expected call returned in the replay."""
    plan = plan_answer_key(task, pack)
    by_key: dict[int, Any] = {}
    for planned, record in zip(plan, trajectory.tool_calls):
        if planned.key_index is not None:
            by_key[planned.key_index] = record.result.get("data")
    seen: list[Any] = []
    out = []
    for i in range(len(task.exp_tool_calls)):
        out.append(list(seen))
        seen.extend(scalars(by_key.get(i)))
    return out

