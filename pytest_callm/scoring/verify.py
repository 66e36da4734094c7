"""The deterministic verifier (DESIGN §7): three gates over one trajectory, no model call.

1. tools    every expected call matches a distinct executed call of the same name, with equal
            constrained arguments (each normalized as the kind of value the pack declares) and the
            expected result status. Extra calls are allowed (the paper's rule), except of a tool the
            pack declares required-or-forbidden that the task forbids.
2. handoff  the expected agents appear, in order, as a subsequence of the actual handoffs.
3. database the compared tables at hang-up equal the expected state (excluded columns dropped,
            rows as multisets).

A call passes only when all three pass. A task may list other routes (whole answer keys equally
right, each with its own expected state): the call passes when it passes every gate of one of them,
and an expected call may name other calls that satisfy it (`either`). Every rule about which parameter is free text, which kind of
value it holds and which tables and columns count comes from the pack, never from here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pytest_callm.normalize import ValueKinds
from pytest_callm.scoring.attempts import attempts_on_record
from pytest_callm.scoring.free_text import DESCRIBED, forbidden_in
from pytest_callm.scoring.heard import CallerWords, Heard
from pytest_callm.scoring.words import find as find_in_words
from pytest_callm.task.pack import ComparedTable, Pack
from pytest_callm.task.task_file import ExpectedCall, Task
from pytest_callm.call.trajectory import ToolCallRecord, Trajectory

GATES = ("tools", "handoff", "database")  # the paper's three
WORDS = "words"  # ours, beside them (scoring/words.py)
ALL_GATES = (*GATES, WORDS)


@dataclass
class GateResult:
    gate: str
    passed: bool
    problems: list[str] = field(default_factory=list)  # plain-text lines for people
    details: dict[str, Any] = field(default_factory=dict)  # structured, for reports


@dataclass
class Verdict:
    tools: GateResult
    handoff: GateResult
    database: GateResult
    route: str | None = None  # the task's other route this call followed (None: the main answer key)
    words: GateResult | None = None  # what the agent said and wrote (None: a verdict that read no words)

    @property
    def paper_passed(self) -> bool:
        """The paper's verdict: its three gates, no words read."""
        return self.tools.passed and self.handoff.passed and self.database.passed

    @property
    def passed(self) -> bool:
        return self.paper_passed and (self.words is None or self.words.passed)

    def _results(self) -> list[GateResult]:
        return [self.tools, self.handoff, self.database, *([self.words] if self.words is not None else [])]

    @property
    def gates(self) -> dict[str, bool]:
        return {g.gate: g.passed for g in self._results()}

    def to_json(self) -> dict[str, Any]:
        # Shallow: the details are plain values, and asdict's deep copy was half the cost of a save.
        out = {"passed": self.passed, "paper_passed": self.paper_passed,
               **{g.gate: dict(vars(g)) for g in self._results()}}
        if self.route is not None:
            out["route"] = self.route
        return out

    def explain(self) -> str:
        marks = ", ".join(f"{g} {'pass' if ok else 'FAIL'}" for g, ok in self.gates.items())
        lines = [f"gates: {marks}" + (f" (route {self.route})" if self.route else "")]
        for result in self._results():
            g = result.gate
            if not result.passed:
                lines.append(f"[{g}]")
                lines.extend(f"  {p}" for p in result.problems)
        return "\n".join(lines)


def verify(task: Task, pack: Pack, traj: Trajectory, *, words: bool = True) -> Verdict:
    """The verdict of the main answer key; when it fails, the first route the call passes instead.
    The words gate reads the call once, whichever key it is judged against (`words=False`: the paper's
    three gates alone)."""
    verdict = verify_key(task, pack, traj)
    if not verdict.paper_passed:
        for route in task.keys()[1:]:
            other = verify_key(route, pack, traj)
            if other.paper_passed:
                verdict = other
                break
    if words:
        verdict.words = check_words(task, pack, traj)
    return verdict


def verify_key(task: Task, pack: Pack, traj: Trajectory) -> Verdict:
    """The three gates against one answer key (the task's own, or one of its routes)."""
    return Verdict(check_tools(task, pack, traj), check_handoff(task, traj), check_database(task, pack, traj),
                   route=task.route_id)


# --- words (ours, beside the paper's three) -----------------------------------------------------

def check_words(task: Task, pack: Pack, traj: Trajectory) -> GateResult:
    """What the agent said and wrote, read against what the call established (scoring/words.py)."""
    findings = find_in_words(task, pack, traj)
    return GateResult(WORDS, not findings, [f.line() for f in findings],
                      {"findings": [dict(vars(f)) for f in findings]})


# --- tools -------------------------------------------------------------------------------------

def _fmt_args(args: Any) -> str:
    if not isinstance(args, dict):
        return repr(args)
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def _arg_mismatches(exp: ExpectedCall, actual: ToolCallRecord, pack: Pack) -> list[str]:
    """Why `actual` does not satisfy `exp`, one line per difference; empty when it does."""
    spec = pack.tools[exp.name]
    args = actual.arguments if isinstance(actual.arguments, dict) else {}
    out = []
    for param, expected in exp.parameters.items():
        if param in spec.free_text:
            continue
        kind = spec.kinds.get(param)
        accepted = [expected, *exp.alternatives.get(param, [])]
        if param not in args:
            out.append(f"{param}: expected {expected!r}, argument missing")
        elif not any(pack.values.same(kind, a, args[param]) for a in accepted):
            alt = f" (or {', '.join(map(repr, accepted[1:]))})" if len(accepted) > 1 else ""
            out.append(f"{param}: expected {expected!r}{alt}, got {args[param]!r}")
    if exp.status is not None and actual.status != exp.status:
        out.append(f"result status: expected {exp.status!r}, got {actual.status!r}")
    return out


def _fits(exp: ExpectedCall, actual: ToolCallRecord, pack: Pack) -> bool:
    return any(o.name == actual.name and not _arg_mismatches(o, actual, pack) for o in exp.options)


def _match(expected: list[ExpectedCall], actual: list[ToolCallRecord], pack: Pack) -> list[int | None]:
    """Assign each expected call a distinct actual call (bipartite matching, augmenting paths)."""
    fits = [[j for j, a in enumerate(actual) if _fits(e, a, pack)] for e in expected]
    owner: dict[int, int] = {}  # actual index -> expected index

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        place(i, set())
    assignment: list[int | None] = [None] * len(expected)
    for j, i in owner.items():
        assignment[i] = j
    return assignment


def check_tools(task: Task, pack: Pack, traj: Trajectory) -> GateResult:
    executed = [c for c in traj.tool_calls if not c.refused]
    assignment = _match(task.exp_tool_calls, executed, pack)
    used = {j for j in assignment if j is not None}
    problems: list[str] = []
    calls: list[dict[str, Any]] = []
    for exp, j in zip(task.exp_tool_calls, assignment):
        entry = {"expected": exp.name, "parameters": exp.parameters, "status": exp.status,
                 "matched": None if j is None else executed[j].index, "differences": []}
        calls.append(entry)
        if j is not None:
            continue
        names = {o.name for o in exp.options}
        same_name = [a for a in executed if a.name in names]
        if not same_name:
            refused = [c for c in traj.tool_calls if c.refused and c.name in names]
            why = f" (tried by {refused[0].agent}, which does not own it)" if refused else ""
            problems.append(f"missing call: {exp.describe()}{why}")
            continue
        # Explain against the closest unused call of that name.
        position = {id(a): j for j, a in enumerate(executed)}
        candidates = [a for a in same_name if position[id(a)] not in used] or same_name
        option, closest = min(((o, a) for a in candidates for o in exp.options if o.name == a.name),
                              key=lambda pair: len(_arg_mismatches(pair[0], pair[1], pack)))
        diffs = _arg_mismatches(option, closest, pack)
        entry["differences"] = diffs
        entry["closest"] = closest.index
        problems.append(f"mismatched call: {exp.describe()}")
        problems.append(f"  actual #{closest.index}: {closest.name}({_fmt_args(closest.arguments)}) -> {closest.status}")
        problems.extend(f"    {d}" for d in diffs)
    # The paper's one exception to "extra calls are allowed": a tool the pack declares
    # required-or-forbidden (healthcare's text messages) does only what the task requires. Trying a
    # forbidden one fails even when the tool refuses; beside a required one, a failed try is fine
    # (a retry after a bad number), a second successful call is not.
    unrequested = [c for j, c in enumerate(executed)
                   if c.name in pack.required_or_forbidden and j not in used
                   and (c.name in task.forbidden_tools or c.status == "ok")]
    for c in unrequested:
        what = "forbidden call" if c.name in task.forbidden_tools else "unrequested call"
        problems.append(f"{what}: #{c.index} {c.name}({_fmt_args(c.arguments)}) -> {c.status} "
                        f"({c.name} is required or forbidden by every task of the {pack.name} pack)")
    # The tool-call log is a record: refused attempts the pack keeps as violations (scoring/attempts.py).
    on_record = attempts_on_record(pack, traj, executed, used)
    problems.extend(on_record)
    return GateResult("tools", not problems, problems,
                      {"calls": calls, "forbidden": [c.index for c in unrequested], "attempts": on_record})


# --- handoff -----------------------------------------------------------------------------------

def check_handoff(task: Task, traj: Trajectory) -> GateResult:
    expected, actual = task.exp_handoff_path, traj.handoff_path()
    position = 0
    for agent in actual:
        if position < len(expected) and agent == expected[position]:
            position += 1
    passed = position == len(expected)
    details = {"expected": expected, "actual": actual}
    if passed:
        return GateResult("handoff", True, [], details)
    return GateResult("handoff", False, [
        f"expected path: {' -> '.join(expected) or '(no handoff)'}",
        f"actual path:   {' -> '.join(actual) or '(no handoff)'}",
        f"first expected handoff not found in order: {expected[position]}",
    ], details)


# --- database ----------------------------------------------------------------------------------

def visible_row(row: dict[str, Any], excluded) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in excluded}


def _row_key(row: dict[str, Any], values: ValueKinds, kinds: dict[str, str]) -> tuple:
    return tuple(sorted((k, values.key(kinds.get(k), v)) for k, v in row.items()))


def check_database(task: Task, pack: Pack, traj: Trajectory) -> GateResult:
    problems: list[str] = []
    tables: dict[str, Any] = {}
    expected_state = task.exp_db_state or {}
    words: CallerWords | None = None
    own: set[Any] | None = None
    for name, table in pack.compared_tables.items():
        act_full = traj.final_state.get(name, [])
        problems.extend(_free_text_problems(task, name, table, act_full))
        if table.forgive_if_heard or table.harmless_if_own:
            words = words or CallerWords(traj.transcript)
            problems.extend(_unsaid_in_matching(name, table, act_full, expected_state.get(name, []), pack, words))
        exp_rows = [visible_row(r, table.exclude_columns) for r in expected_state.get(name, [])]
        act_rows = [visible_row(r, table.exclude_columns) for r in act_full]
        if exp_rows == act_rows:  # the common case: same rows, same order, no normalizing needed
            continue
        def row_key(row: dict[str, Any]) -> tuple:
            return _row_key(row, pack.values, table.kinds)

        def cell(column: str, value: Any) -> Any:
            return pack.values.key(table.kinds.get(column), value)

        exp_count, act_count = Counter(map(row_key, exp_rows)), Counter(map(row_key, act_rows))
        missing_keys, extra_keys = exp_count - act_count, act_count - exp_count
        if not missing_keys and not extra_keys:
            continue
        missing = _take(exp_rows, missing_keys, row_key)
        extra_full = _take(act_full, extra_keys, lambda r: row_key(visible_row(r, table.exclude_columns)))
        forgiven = []
        if table.forgive_if_heard or table.harmless_if_own:
            known = {_subject(r) for r in expected_state.get(name, [])}
            if own is None:
                own = _own_records(task, pack, traj.final_state)
            forgiven = [r for r in extra_full if _forgiven(r, table, words, known, own, act_full, traj, pack)]
        extra = [visible_row(r, table.exclude_columns) for r in extra_full if not any(r is f for f in forgiven)]
        changed = []
        by_key = {cell(table.key, r.get(table.key)): r for r in extra if table.key and table.key in r}
        for row in list(missing):
            other = by_key.pop(cell(table.key, row.get(table.key)), None) if table.key in row else None
            key = {table.key: row.get(table.key)} if other is not None else None
            if other is None:  # no key to pair by (a generated id is not compared): the closest extra row
                other, key = _closest(row, extra, cell)
            if other is None:
                continue
            missing.remove(row)
            extra.remove(other)
            cols = {c: [row.get(c), other.get(c)] for c in sorted(set(row) | set(other))
                    if cell(c, row.get(c)) != cell(c, other.get(c))}
            changed.append({"key": key, "columns": cols})
        if not (missing or extra or changed):
            continue
        tables[name] = {"missing": missing, "extra": extra, "changed": changed}
        for row in missing:
            problems.append(f"{name}: missing row {row}")
        for row in extra:
            why = _unheard(row, extra_full, table, words.heard if words else None)
            problems.append(f"{name}: extra row {row}{why}")
        for ch in changed:
            cols = "; ".join(f"{c}: expected {e!r}, got {a!r}" for c, (e, a) in ch["columns"].items())
            (k, v), = ch["key"].items()
            problems.append(f"{name}: row {k}={v!r} differs: {cols}")
    return GateResult("database", not problems, problems, {"tables": tables})


def _closest(row: dict[str, Any], extra: list[dict[str, Any]], cell) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The extra row that agrees with `row` on the most columns (at least half of them), and the first
    column they share, to name the row by."""
    best, best_same = None, 0
    for other in extra:
        same = [c for c in row if c in other and cell(c, row[c]) == cell(c, other[c])]
        if len(same) * 2 >= len(row) and len(same) > best_same:
            best, best_same = other, len(same)
    if best is None:
        return None, None
    first = next(c for c in row if c in best and cell(c, row[c]) == cell(c, best[c]))
    return best, {first: row[first]}



def _tried(row: dict[str, Any]) -> list[tuple[str, Any]]:
    try:
        pairs = json.loads(row.get("tried") or "[]")
        return [(str(k), v) for k, v in pairs]
    except (ValueError, TypeError):
        return []


def _subject(row: dict[str, Any]) -> Any:
    """Whose record a try touched: `account` (identity checks) or `record` (looks at a record)."""
    return row.get("account", row.get("record"))


# The kinds of value that name a person or their record (a name, a number, an address).
IDENTITY_KINDS = frozenset({"person", "identifier", "phone", "email"})


def _unsaid_in_matching(name: str, table: ComparedTable, rows: list[dict[str, Any]], expected: list[dict[str, Any]],
                        pack: Pack, words: CallerWords) -> list[str]:
    """A try the right answer makes too, on a number or code the caller never said where they said
    one a single edit from it (two digits swapped, a digit dropped or added): the agent changed what
    it heard, and the right value it reached is a guess, though its row equals the right answer's;
    only the kept `tried` shows it. Extra tries are judged by `_forgiven`; a replay with no caller
    (the oracle) has no words to hold a try to."""
    if not words.spoke or not expected:
        return []
    key = lambda r: _row_key(visible_row(r, table.exclude_columns), pack.values, table.kinds)
    wanted = Counter(map(key, expected))
    out = []
    for row in rows:
        k = key(row)
        if wanted[k] <= 0:
            continue  # an extra row: `_forgiven` and `_unheard` speak for it
        wanted[k] -= 1
        # Said or heard: a value the line garbled that the agent still got right was said all the same.
        changed = [v for kind, v in _tried(row) if not (words.heard.has(kind, v) or words.said.has(kind, v))
                   and (words.heard.near(kind, v) or words.said.near(kind, v))]
        if changed:
            out.append(f"{name}: a try on {', '.join(map(repr, changed))}, which the caller never said: one "
                       f"digit or letter off what they said, changed by the agent (a guess, though the row "
                       f"is the right answer's)")
    return out


def _own_records(task: Task, pack: Pack, state: dict[str, Any]) -> set[Any]:
    """The ids of the caller's own records: rows of the pack's people tables whose first column of
    kind `person` names the caller."""
    if pack.people is None or not task.customer_name:
        return set()
    own = set()
    for table in sorted(pack.people.tables):
        spec = pack.compared_tables.get(table)
        column = next((c for c, k in spec.kinds.items() if k == "person"), None) if spec else None
        if column is not None:
            own |= {r.get("id") for r in state.get(table, [])
                    if pack.values.same("person", task.customer_name, r.get(column))}
    return own


def _forgiven(row: dict[str, Any], table: ComparedTable, words: CallerWords, known: set[Any], own: set[Any],
              rows: list[dict[str, Any]], traj: Trajectory, pack: Pack) -> bool:
    """An extra try the verifier forgives.

    A harmless repeat: the caller's own identity verified again, at any desk (an outcome the pack
    names in `harmless_if_own`), on details the caller said. Otherwise a failed try of a forgiven outcome, on
    no record or on one the right answer touches too (the caller's own), every value heard, and
    forgiven only for what the line did: a value the line made of what the caller said (heard, never
    said), or one the caller corrected after the try. Not a value said accurately about someone else,
    nor one from an unrelated remark, nor the same try again under another name of the same thing
    (a generic name, an alias: the kind's normalizer reads them as one). A try on no record is a retry
    only where the right answer makes tries of its own in that table: in a call that needs none (a
    scam report, a general question), a search that found nobody is one too many, heard or not."""
    pairs = _tried(row)
    heard = all(words.heard.has(k, v) for k, v in pairs) or not words.spoke
    if row.get("outcome") in table.harmless_if_own:
        return _subject(row) in own and heard
    subject = _subject(row)
    retry = subject in known if subject is not None else bool(known)
    if not (row.get("outcome") in table.forgive_if_heard and retry and pairs and heard):
        return False
    if _repeats_earlier(row, pairs, rows, pack):
        return False
    return any(words.line_made(k, v) for k, v in pairs) or _corrected_after(pairs, words, traj, pack)


def _repeats_earlier(row: dict[str, Any], pairs: list[tuple[str, Any]], rows: list[dict[str, Any]], pack: Pack) -> bool:
    """Whether an earlier row of the table, with the same outcome, tried the same things."""
    for other in rows:
        if other is row:
            return False
        theirs = _tried(other)
        if (other.get("outcome") == row.get("outcome") and len(theirs) == len(pairs)
                and all(k1 == k2 and pack.values.same(k1, v1, v2) for (k1, v1), (k2, v2) in zip(pairs, theirs))):
            return True
    return False


def _corrected_after(pairs: list[tuple[str, Any]], words: CallerWords, traj: Trajectory, pack: Pack) -> bool:
    """Whether the caller corrected this try: a later call of the same tool changed one of its
    arguments to a value the caller gave only after the try."""
    calls = [c for c in traj.tool_calls if isinstance(c.arguments, dict)]
    at = next((c for c in calls if all(Heard(map(str, c.arguments.values())).has(k, v) for k, v in pairs)), None)
    if at is None or at.name not in pack.tools:
        return False
    done = at.started_ms + at.duration_ms
    before, after = words.heard_between(float("-inf"), at.started_ms), words.heard_between(done, float("inf"))
    kinds = pack.tools[at.name].kinds
    for later in traj.tool_calls:
        if later.name != at.name or later.started_ms <= done or not isinstance(later.arguments, dict):
            continue
        for param, value in later.arguments.items():
            kind = kinds.get(param)
            if (param in at.arguments and not pack.values.same(kind, at.arguments[param], value)
                    and after.has(kind, value) and not before.has(kind, value)):
                return True
    return False


def _unheard(row: dict[str, Any], full_rows: list[dict[str, Any]], table: ComparedTable, heard: Heard | None) -> str:
    """For an extra try, which of its values the caller never said (why it is not forgiven)."""
    if heard is None or row.get("outcome") not in table.forgive_if_heard:
        return ""
    full = next((r for r in full_rows if visible_row(r, table.exclude_columns) == row), None)
    if full is None:
        return ""
    unsaid = [f"{v!r}" for k, v in _tried(full) if not heard.has(k, v)]
    return f" (tried {', '.join(unsaid)}, which the caller never said)" if unsaid else ""


def _free_text_problems(task: Task, name: str, table: ComparedTable, rows: list[dict[str, Any]]) -> list[str]:
    out = []
    caller = {"name": task.customer_name}
    for column, rule in table.free_text.items():
        for row in rows:
            for what, hit in forbidden_in(row.get(column), rule["forbid"], caller):
                out.append(f"{name}.{column} holds {DESCRIBED[what]} ({hit!r}), which house rule "
                           f"{rule['rule']} keeps out of it")
    return out


def _take(rows: list[dict[str, Any]], wanted: Counter, row_key) -> list[dict[str, Any]]:
    wanted = Counter(wanted)
    out = []
    for r in rows:
        k = row_key(r)
        if wanted[k] > 0:
            wanted[k] -= 1
            out.append(r)
    return out
