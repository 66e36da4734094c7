"""The leaderboard of many runs: `callm leaderboard RUN_DIR... [--out DIR] [--force] [--title T] [--scope S]`.

One row per model (one run directory each, read by saved/reader.py), written as

    DIR/index.html            the ranking, the rows listed apart, the evidence between neighbours
                              (evidence.py), its legend and four plots (inline SVG: no script, nothing
                              fetched, so the page opens from file:// offline)
    DIR/rank-<scope>.html     the same ranking by one industry, category or difficulty (scopes.py)
    DIR/failures.html         where models fail: pass^k per category, failed attempts by gate, desk, tool
                              and house rule, each cell listing its attempts (failures.py)
    DIR/leaderboard.md        the same as Markdown tables, for a README or a PR comment
    DIR/models/<name>.html    a page per model: settings as run, results per industry and category,
                              latency and cost, and a link to its run's report
    DIR/choose.html           the models within a scope, a latency and a cost budget (choose.py)
    DIR/runs/<name>/          a copy of the run's report.html and task pages: every link stays inside
                              DIR, so the board opens wherever it is copied

Only CALLM results are ranked: runs whose caller was the simulated caller on a model other than the
one under test (the manifest's `caller`), on one task set, scored by one verifier with one k (the set
with the most tasks). The others are listed apart, unranked, each saying why (`arrange`).

A row shows pass^k and pass@1 with their 95% bootstrap intervals (from the report, or computed from
its attempts with stats.py when the report has none), per industry and as the unweighted mean across
industries; the median time to first token (TTFT), marked when it is over 1,000 ms (not conversational
by the paper's definition); cost per call and per hour; and the attempts not scored (infrastructure
failures, in no denominator). A cost is never shown as 0 when it is not known: "no prices" when the
model config has none, "usage not reported" when the server reported no usage for some request (a run
scored before scoring/cost.py withheld such costs shows its cost over the reported requests as a lower
bound, with ">="), "no model requests" for a run that made none (the oracle).

Ranking and ties (`place`: one rule for every scope; described here across industries). Models are
sorted by the cross-industry pass^k (then pass@1, then name; a model with
no pass^k, because some task has fewer than k scored attempts, is listed last and not ranked). Going
down the list, a model shares the rank of the group just above it when its 95% pass^k interval
overlaps the interval of that group's first model (closed intervals: the lower model's upper bound is at
least the first model's lower bound), or when the two estimates are equal; the page and the table then
show the rank as "=N" on every model of the group. Otherwise the model's rank is its position in the list
(1-based). Comparing with the group's first model, not with the model just above, keeps a tie from
chaining down a whole table of close neighbours.

Refused (exit code 2, the reason on stderr): a folder that is not a finished run; two runs of one model
(shards of one run: "join them first: callm merge ..."; otherwise both are named); runs scored on
another task set or by another verifier (the hashes `callm compare` refuses on), or with another k,
unless `--force`, which shows them under a warning line, those that differ from the ranked ones
listed apart.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from pytest_callm.report import choose as choice
from pytest_callm.report import evidence, failures, scopes
from pytest_callm.report.compare import conflicts, line_name
from pytest_callm.report.links import REPORT_PAGE
from pytest_callm.report.formatting import flat_settings
from pytest_callm.report.redaction import redact, secret_variables, strike_secrets
from pytest_callm.report.report_html import environment, write_page
from pytest_callm.saved.reader import RunReadError, SavedRun, read_run

OVERALL = "all industries"
TTFT_LINE_MS = 1000.0  # above it a model is not conversational (the paper's definition)
EXIT_REFUSED = 2
DEFAULT_OUT = Path("leaderboard")
TIE_RULE = ("Ties: models are sorted by {over} pass^{k}; a model whose 95% pass^{k} interval overlaps "
            "that of the first model of the rank just above it (or whose estimate equals it) shares that rank, "
            "shown as \"=N\"; otherwise its rank is its position in the list. Models without a pass^{k} (some "
            "task has fewer than {k} scored attempts) are listed last, unranked.")
TTFT_RULE = ("TTFT: the median time to first token over every request of the run. Over 1,000 ms (marked) a "
             "model is not conversational by the paper's definition.")


def tie_rule(k: Any, scope: scopes.Scope | None = None, known: scopes.Known | None = None) -> str:
    """The tie rule in words, for the ranking across industries or by one scope."""
    over = "cross-industry" if scope is None or scope.is_all or known is None else f"the {known.label(scope)}"
    return TIE_RULE.format(k=k, over=over)


class LeaderboardError(Exception):
    """Runs that cannot be ranked together; the message says why."""


# Rows -----------------------------------------------------------------------------------------


@dataclass
class Figure:
    """A point estimate with its 95% interval (either may be missing)."""

    estimate: float | None
    low: float | None = None
    high: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclass
class Scope:
    name: str
    tasks: int
    attempts: int  # scored
    passes: int
    pass_at_1: Figure
    pass_k: Figure


@dataclass
class Row:
    run: SavedRun
    name: str
    page: str  # relative to the index: models/<name>.html
    k: int
    scopes: dict[str, Scope]  # industries, then OVERALL
    unscored: int
    requests: int
    requests_without_usage: int
    ttft_ms: float | None
    cost_per_call: float | None
    cost_per_hour: float | None
    cost_note: str | None  # why no cost is shown, or None
    cost_partial: bool = False  # some requests reported no usage: the cost is a lower bound
    rank: int | None = None
    shared: bool = False  # the rank is shared with another model (a tie)
    intervals_source: str | None = None
    caller: dict[str, Any] | None = None  # caller_of(run): kind, name, and whether the run recorded it
    attempts_per_task: int | None = None
    ttft_p90_ms: float | None = None
    apart: str | None = None  # why the row is listed apart from the ranking, or None (ranked)
    report_copy: str | None = None  # the copy of the run's report.html in the board, relative to the index
    paper: dict[str, Any] | None = None  # the paper's three gates alone (no words read): pass_k, pass_at_1
    _measures: dict[str, Any] = field(default_factory=dict, repr=False)  # scope key -> its figures (measure)

    @property
    def overall(self) -> Scope:
        return self.scopes[OVERALL]

    @property
    def industries(self) -> list[str]:
        return [s for s in self.scopes if s != OVERALL]

    @property
    def rank_label(self) -> str:
        if self.rank is None:
            return "–"
        return f"={self.rank}" if self.shared else str(self.rank)

    @property
    def caller_label(self) -> str:
        c = self.caller or {}
        label = {"none": "none", "offline": "offline (the task's script)", "plugin": f"scripted: {c.get('name')}", "self": "the model itself",
                 "model": str(c.get("name"))}.get(c.get("kind"), "?")
        return label if c.get("recorded", True) else label + " (as configured; not recorded)"

    def measure(self, scope: scopes.Scope) -> Scope | scopes.Measure | None:
        """The row's figures over a scope (None: the scope holds none of its tasks); computed once."""
        if scope.is_all:
            return self.overall
        if scope.industry and not scope.category and not scope.difficulty:
            return self.scopes.get(scope.industry)  # the run's own figure for its industry
        if scope.key not in self._measures:
            self._measures[scope.key] = scopes.measure(self.run.report.get("attempts") or [], self.k, scope,
                                                       _figure)
        return self._measures[scope.key]

    @property
    def gap(self) -> float | None:
        """pass@1 minus pass^k across industries: the paper's measure of inconsistency."""
        a, b = self.overall.pass_at_1.estimate, self.overall.pass_k.estimate
        return None if a is None or b is None else a - b


def _intervals(run: SavedRun) -> tuple[dict[str, Any], str | None]:
    stored = run.summary.get("intervals")
    if isinstance(stored, dict):
        return stored, "report"
    attempts = run.report.get("attempts")
    if not attempts or not run.k:
        return {}, None
    from pytest_callm.scoring.stats import bootstrap

    return bootstrap(attempts, run.k).to_json(), "computed"


def _figure(value: float | None, interval: dict[str, Any] | None) -> Figure:
    interval = interval or {}
    return Figure(value, interval.get("low"), interval.get("high"))


def _scope(name: str, group: dict[str, Any] | None, intervals: dict[str, Any] | None) -> Scope:
    group, intervals = group or {}, intervals or {}
    return Scope(name, group.get("tasks", 0), group.get("attempts", 0), group.get("passes", 0),
                 _figure(group.get("pass_at_1"), intervals.get("pass_at_1")),
                 _figure(group.get("pass_k"), intervals.get("pass_k")))


def page_names(names: list[str]) -> dict[str, str]:
    """A file name per model, safe on every file system and unique among the models."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "model"
        page, n = base, 1
        while page.lower() in taken:
            n += 1
            page = f"{base}-{n}"
        taken.add(page.lower())
        out[name] = f"models/{page}.html"
    return out


def caller_of(run: SavedRun) -> dict[str, Any]:
    """Who played the caller: the manifest's record (saved/rundir.caller_record). A run saved before
    the record read from what it kept: the release check's caller (it named a plugged-in caller), else
    its configs, marked not recorded (a caller of the project's own left no trace there)."""
    recorded = run.manifest.get("caller")
    if isinstance(recorded, dict) and recorded.get("kind"):
        return {"kind": recorded["kind"], "name": recorded.get("name"), "recorded": True}
    model, caller = run.comparable.get("model_config"), run.comparable.get("caller_config")
    if not model or not caller:
        return {"kind": "none", "name": "none", "recorded": True}
    release = run.manifest.get("release") or {}
    named = next((re.match(r"caller '([^']*)'", d) for d in release.get("differs") or []
                  if d.startswith("caller '")), None)
    if named and named[1] in ("pytest_callm_make_caller", "callm_caller fixture"):
        return {"kind": "plugin", "name": named[1], "recorded": True}
    if caller.get("name") == model.get("name") or caller.get("model") == model.get("model"):
        return {"kind": "self", "name": caller.get("name"), "recorded": True}
    return {"kind": "model", "name": caller.get("name"), "recorded": bool(release)}


def ttft_p90(run: SavedRun) -> float | None:
    """The 90th percentile of time to first token over every request of the run (its attempts' own)."""
    from pytest_callm.model.latency import p90

    values = [t for a in run.report.get("attempts") or [] for t in (a.get("usage") or {}).get("ttft_ms") or []]
    return p90(values) if values else None


def make_row(run: SavedRun, page: str) -> Row:
    summary = run.summary
    intervals, source = _intervals(run)
    scopes = {name: _scope(name, group, (intervals.get("industries") or {}).get(name))
              for name, group in sorted((summary.get("industries") or {}).items())}
    scopes[OVERALL] = _scope(OVERALL, summary.get("overall"), intervals.get("overall"))
    total = (run.report.get("usage") or {}).get("total") or {}
    requests = int(total.get("requests") or 0)
    if "requests_without_usage" in total:
        without = int(total["requests_without_usage"] or 0)
    else:  # reports written before the total counted them: from the attempts' own usage records
        without = sum(int((a.get("usage") or {}).get("requests_without_usage") or 0)
                      for a in run.report.get("attempts") or [])
    per_call, per_hour, note = total.get("cost_per_call"), total.get("cost_per_hour"), None
    if not requests:
        per_call = per_hour = None
        note = "no model requests"
    elif without >= requests:
        per_call = per_hour = None
        note = "usage not reported"
    elif without and total.get("cost_usd") is None:  # scoring/cost.py gives no cost over part of the tokens
        per_call = per_hour = None
        note = f"usage not reported for {without} of {requests} requests"
    elif total.get("cost_usd") is None:
        per_call = per_hour = None
        note = "no prices"
    return Row(run=run, name=run.model, page=page, k=int(run.k or 0), scopes=scopes,
               unscored=sum((summary.get("errors") or {}).values()), requests=requests,
               requests_without_usage=without, ttft_ms=total.get("ttft_median_ms"),
               cost_per_call=per_call, cost_per_hour=per_hour, cost_note=note,
               cost_partial=note is None and without > 0, intervals_source=source, caller=caller_of(run),
               attempts_per_task=run.comparable.get("attempts"), ttft_p90_ms=ttft_p90(run),
               paper=((summary.get("paper") or {}).get("overall") or None))


def _sort_key(row: Row) -> tuple:
    return _figures_key(row.overall, row.name)


def _figures_key(f: Any, name: str) -> tuple:
    pk = f.pass_k.estimate if f is not None else None
    p1 = f.pass_at_1.estimate if f is not None else None
    return (pk is None, -(pk or 0.0), p1 is None, -(p1 or 0.0), name)


def _tied(first: Figure, lower: Figure) -> bool:
    """Whether `lower` (sorted below) ties with `first`, the first model of the group above it."""
    if lower.estimate == first.estimate:
        return True
    return first.has_interval and lower.has_interval and lower.high >= first.low


@dataclass
class Placed:
    """A row's place in the ranking by one scope: its figures there, its rank and whether it is shared."""

    row: Row
    figures: Any  # Scope or scopes.Measure (pass_k, pass_at_1, tasks, attempts); None: the scope holds none of its tasks
    rank: int | None = None
    shared: bool = False

    @property
    def rank_label(self) -> str:
        if self.rank is None:
            return "–"
        return f"={self.rank}" if self.shared else str(self.rank)


def place(rows: list[Row], figures_of) -> list[Placed]:
    """The rows in ranking order by `figures_of(row)`, with ranks and ties (the rule is in the module's
    docstring): the one rule for every scope."""
    ordered = sorted((Placed(r, figures_of(r)) for r in rows), key=lambda p: _figures_key(p.figures, p.row.name))
    leader: Placed | None = None
    for position, p in enumerate(ordered, 1):
        if p.figures is None or p.figures.pass_k.estimate is None:
            continue
        if leader is not None and _tied(leader.figures.pass_k, p.figures.pass_k):
            p.rank = leader.rank
            p.shared = leader.shared = True
        else:
            p.rank, leader = position, p
    return ordered


def rank(rows: list[Row]) -> list[Row]:
    """The rows in ranking order across industries, with their ranks and ties set on the rows."""
    placed = place(rows, lambda r: r.overall)
    for p in placed:
        p.row.rank, p.row.shared = p.rank, p.shared
    return [p.row for p in placed]


def ranking(rows: list[Row], scope: scopes.Scope) -> list[Placed]:
    """The ranked rows (those not listed apart) by one scope, then the rows listed apart, unranked."""
    ranked = place([r for r in rows if r.apart is None], lambda r: r.measure(scope))
    apart = sorted((Placed(r, r.measure(scope)) for r in rows if r.apart is not None),
                   key=lambda p: _figures_key(p.figures, p.row.name))
    return ranked + apart


CALLER_APART = {
    "none": "not a CALLM result: no caller (the oracle replays the answer keys: a check of the tasks)",
    "offline": "not a CALLM result: the offline caller answers from the task's script (the oracle replays "
               "the answer keys: a check of the tasks)",
    "plugin": "not a CALLM result: a scripted caller of the project's own ({name}), not the simulated caller",
    "self": "not a CALLM result: the model plays its own caller",
}


def arrange(rows: list[Row]) -> list[Row]:
    """The ranked rows in ranking order, then the rows listed apart (each with why), in the same order.

    Ranked: CALLM results (a simulated caller on a model other than the one under test) played on one
    task set, scored by one verifier with one k: the set of the CALLM results with the most tasks (then
    the most runs). Every other row is listed apart, unranked, saying why."""
    for row in rows:
        caller = row.caller or {}
        row.apart = CALLER_APART[caller["kind"]].format(name=caller.get("name")) \
            if caller.get("kind") in CALLER_APART else None
    candidates = [r for r in rows if r.apart is None]
    groups: dict[tuple, list[Row]] = {}
    for row in candidates:
        groups.setdefault((row.run.hashes.get("tasks"), row.run.hashes.get("verifier"), row.k), []).append(row)
    if groups:
        key, ranked = max(groups.items(), key=lambda g: (g[1][0].overall.tasks, len(g[1]), str(g[0])))
        tasks = ranked[0].overall.tasks
        for row in candidates:
            if row in ranked:
                continue
            if row.run.hashes.get("tasks") != key[0]:
                row.apart = (f"not comparable: another task set ({row.overall.tasks} tasks; the ranked runs "
                             f"played {tasks})")
            elif row.run.hashes.get("verifier") != key[1]:
                row.apart = "not comparable: scored by another verifier than the ranked runs"
            else:
                row.apart = f"not comparable: scored with k = {row.k}, the ranked runs with k = {key[2]}"
    ranked = rank([r for r in rows if r.apart is None])
    apart = sorted((r for r in rows if r.apart is not None), key=_sort_key)
    for row in apart:
        row.rank, row.shared = None, False
    return ranked + apart


# Checks ---------------------------------------------------------------------------------------


def same_model_problems(runs: list[SavedRun]) -> list[str]:
    """One sentence per model given more than one run, or given as a shard of a split run."""
    by_model: dict[str, list[SavedRun]] = {}
    for run in runs:
        by_model.setdefault(run.model, []).append(run)
    out = []
    for model, group in by_model.items():
        dirs = " ".join(str(r.path) for r in group)
        shards = [r for r in group if r.shard is not None and (r.shard.get("count") or 1) > 1]
        if shards and len(group) > 1:
            out.append(f"{' and '.join(str(r.path) for r in group)} are shards of one run of model {model}: "
                       f"join them first: callm merge {dirs} --out DIR")
        elif shards:
            s = shards[0].shard
            out.append(f"{shards[0].path} is shard {s.get('index')}/{s.get('count')} of a run of model {model}: "
                       f"join its shards first: callm merge {dirs} ... --out DIR")
        elif len(group) > 1:
            out.append(f"{' and '.join(str(r.path) for r in group)} are all runs of model {model}: give one run "
                       "per model (join shards with callm merge, or choose the run to rank)")
    return out


def incomparable(runs: list[SavedRun]) -> list[str]:
    """What --force overrides: another task set or verifier (as `callm compare` refuses), or another k."""
    out = conflicts(runs)
    ks = sorted({str(r.k) for r in runs})
    if len(ks) > 1:
        out.append(f"the runs were scored with different k ({', '.join(ks)}): their pass^k are not the same measure")
    return out


def load(paths: list[Path], force: bool) -> tuple[list[Row], list[str]]:
    """The ranked rows of these run directories and the warnings to print; LeaderboardError when refused."""
    try:
        runs = [read_run(p) for p in paths]
    except RunReadError as e:
        raise LeaderboardError(str(e)) from None
    problems = same_model_problems(runs)
    if problems:
        raise LeaderboardError("; ".join(problems))
    problems = incomparable(runs)
    if problems and not force:
        raise LeaderboardError("refused: " + "; ".join(problems) + ". Runs over other tasks, scored by another "
                               "verifier or with another k are not ranked together; pass --force to show them, listed apart.")
    warnings = [f"{p}; shown anyway (--force): the runs that differ from the ranked ones are listed apart"
                for p in problems]
    pages = page_names([r.model for r in runs])
    return arrange([make_row(r, pages[r.model]) for r in runs]), warnings


# Formatting -----------------------------------------------------------------------------------


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def ci(figure: Figure) -> str:
    return f"[{figure.low * 100:.1f}, {figure.high * 100:.1f}]" if figure.has_interval else "no interval"


def ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def cost(row: Row, which: str) -> str:
    if row.cost_note:
        return row.cost_note
    value = row.cost_per_call if which == "call" else row.cost_per_hour
    return (">= " if row.cost_partial else "") + money(value)


def slow(row: Row) -> bool:
    return row.ttft_ms is not None and row.ttft_ms > TTFT_LINE_MS


def passk_name(rows: list[Row]) -> str:
    ks = {r.k for r in rows}
    return f"pass^{ks.pop()}" if len(ks) == 1 else "pass^k"


# Markdown -------------------------------------------------------------------------------------


def _md(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def attempts_label(row: Row) -> str:
    """Attempts scored, and how many each task was given."""
    per = f" ({row.attempts_per_task} a task)" if row.attempts_per_task else ""
    return f"{row.overall.attempts}{per}"


RANKED_RULE = ("Ranked: CALLM results (the simulated caller, on a model other than the one under test) on one "
               "task set, scored by one verifier with one k. Every other run is listed apart, unranked, with why.")


def markdown(rows: list[Row], title: str, scope: scopes.Scope | None = None,
             known: scopes.Known | None = None) -> str:
    """The ranking by `scope` (all industries by default) as a Markdown table, then the rows listed apart,
    then the evidence between neighbours; the same rows always give the same text."""
    scope = scope or scopes.Scope()
    known = known or scopes.known([r.run for r in rows])
    passk = passk_name(rows)
    industries = sorted({i for r in rows for i in r.industries})
    placed = ranking(rows, scope)

    def cells(p: Placed) -> list[str]:
        r, f = p.row, p.figures
        head = ([f"{pct(f.pass_k.estimate)} {ci(f.pass_k)}", f"{pct(f.pass_at_1.estimate)} {ci(f.pass_at_1)}"]
                if f is not None else ["not played", "not played"])
        return [*head, *(pct(r.scopes[i].pass_k.estimate) if i in r.scopes else "not run" for i in industries),
                str(f.tasks if f is not None else 0), attempts_label(r) if scope.is_all else str(f.attempts if f else 0),
                _md(r.caller_label),
                ms(r.ttft_ms) + (" (over 1 s)" if slow(r) else ""), cost(r, "call"), cost(r, "hour"), str(r.unscored),
                f"{pct(r.paper.get('pass_k'))} / {pct(r.paper.get('pass_at_1'))}" if r.paper else "not read"]

    where = "" if scope.is_all else f" in {known.label(scope)}"
    tail = [f"{passk}{where} (95% CI)", f"pass@1{where} (95% CI)", *(f"{i} {passk}" for i in industries),
            "tasks", "attempts scored", "caller", "TTFT (median)", "$/call", "$/hour", "not scored",
            f"the paper's three gates: {passk} / pass@1"]

    def table(head: list[str], body: list[list[str]], left: int) -> list[str]:
        return ["| " + " | ".join(head) + " |",
                "|" + "|".join(":---" if i < left else "---:" for i in range(len(head))) + "|",
                *("| " + " | ".join(c) + " |" for c in body)]

    ranked = [p for p in placed if p.row.apart is None]
    apart = [p for p in placed if p.row.apart is not None]
    lines = [f"# {_md(title)}", "", *([] if scope.is_all else [f"Ranked by {passk}{_md(where)}.", ""]), RANKED_RULE, ""]
    if ranked:
        lines += table(["Rank", "Model", *tail], [[p.rank_label, _md(p.row.name), *cells(p)] for p in ranked], 2)
    else:
        lines.append("No run is ranked: none is a CALLM result.")
    if apart:
        lines += ["", "## Listed apart, not ranked", ""]
        lines += table(["Model", "Why", *tail], [[_md(p.row.name), _md(p.row.apart), *cells(p)] for p in apart], 2)
    pairs = evidence.pairs(placed, passk)
    if pairs:
        lines += ["", "## How much evidence separates neighbours", "", *(f"- {_md(e.sentence)}" for e in pairs)]
    k = rows[0].k if rows else "k"
    lines += ["", f"{passk} and pass@1 across industries (or over a scope's industries): the unweighted mean of the "
                  "industries; 95% CI: percentile bootstrap over tasks.", tie_rule(k, scope, known), TTFT_RULE,
              "Cost: list prices over the run's tokens; per hour over hours estimated from the words spoken."]
    if any(known.names.values()):
        lines += ["", "Categories: " + "; ".join(
            f"{code}: " + ", ".join(f"{i} {n}" for i, n in known.category_names(code))
            for code in known.categories if known.category_names(code)) + "."]
    return "\n".join(lines) + "\n"


# Plots (inline SVG) ---------------------------------------------------------------------------

PLOT_W = 760
LABEL_W = 190
PASSK_COLOUR = "#0969da"
PASS1_COLOUR = "#1a7f37"
LINE_COLOUR = "#cf222e"


def _t(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _short(name: str, n: int = 26) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def _svg(plot_id: str, height: float, title: str, body: list[str]) -> Markup:
    return Markup(f'<svg class="plot" id="{plot_id}" xmlns="http://www.w3.org/2000/svg" role="img" '
                  f'viewBox="0 0 {PLOT_W} {height:.0f}" width="{PLOT_W}" height="{height:.0f}">'
                  f"<title>{_t(title)}</title>{''.join(body)}</svg>")


def _x_axis(x0: float, x1: float, y: float, ticks: list[tuple[float, str]]) -> list[str]:
    out = [f'<line class="axis" x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}"/>']
    for x, label in ticks:
        out.append(f'<line class="grid" x1="{x:.1f}" y1="10" x2="{x:.1f}" y2="{y:.1f}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{y + 14:.1f}" text-anchor="middle">{_t(label)}</text>')
    return out


def gap_plot(rows: list[Row], passk: str) -> Markup:
    """pass@1 and pass^k across industries per model, joined: the longer the bar, the less consistent."""
    x0, x1, step = LABEL_W, PLOT_W - 90, 24
    height = 30 + step * len(rows) + 30

    def x(v: float) -> float:
        return x0 + (x1 - x0) * v

    body = _x_axis(x0, x1, 20 + step * len(rows), [(x(v / 100), f"{v}%") for v in range(0, 101, 20)])
    for i, r in enumerate(rows):
        y = 30 + step * i
        p1, pk = r.overall.pass_at_1.estimate, r.overall.pass_k.estimate
        parts = [f'<text class="label" x="{x0 - 8}" y="{y + 4}" text-anchor="end">{_t(_short(r.name))}</text>']
        if p1 is not None and pk is not None:
            parts.append(f'<line class="gap" x1="{x(pk):.1f}" y1="{y}" x2="{x(p1):.1f}" y2="{y}" '
                         f'stroke="#8c959f" stroke-width="4"/>')
        if pk is not None:
            parts.append(f'<circle class="passk" cx="{x(pk):.1f}" cy="{y}" r="5" fill="{PASSK_COLOUR}"/>')
        if p1 is not None:
            parts.append(f'<circle class="pass1" cx="{x(p1):.1f}" cy="{y}" r="5" fill="#fff" '
                         f'stroke="{PASS1_COLOUR}" stroke-width="2"/>')
        gap = r.gap
        parts.append(f'<text class="value" x="{x1 + 10}" y="{y + 4}">'
                     f'{"gap n/a" if gap is None else f"gap {gap * 100:.1f} pp"}</text>')
        body.append(f'<g class="model" data-model="{_t(r.name)}">{"".join(parts)}</g>')
    return _svg("plot-gap", height, f"pass@1 (hollow) and {passk} (filled) per model, across industries", body)


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def scatter(plot_id: str, rows: list[Row], value, x_label: str, fmt, title: str, passk: str,
            line_at: float | None = None) -> tuple[Markup | None, list[str]]:
    """Cross-industry pass^k (y) against `value(row)` (x); returns the plot (None when no model has
    both figures) and the models left out."""
    shown = [r for r in rows if value(r) is not None and r.overall.pass_k.estimate is not None]
    # Each model left out, with why: no figure on this axis, or no pass^k (a task short of k attempts).
    left_out = [f"{r.name} ({'no ' + x_label.split(' (')[0] if value(r) is None else 'no ' + passk})"
                for r in rows if r not in shown]
    if not shown:  # no axis to draw: the page says so instead of an empty frame
        return None, left_out
    x0, x1, y0, y1 = 70, PLOT_W - 30, 20, 300
    top = max([value(r) for r in shown] + ([line_at * 1.25] if line_at else []) + [0.0])
    top = _nice_max(top * 1.05)

    def x(v: float) -> float:
        return x0 + (x1 - x0) * v / top

    def y(v: float) -> float:
        return y1 - (y1 - y0) * v

    body = _x_axis(x0, x1, y1, [(x(top * i / 5), fmt(top * i / 5)) for i in range(6)])
    body.append(f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>')
    for v in range(0, 101, 25):
        body.append(f'<line class="grid" x1="{x0}" y1="{y(v / 100):.1f}" x2="{x1}" y2="{y(v / 100):.1f}"/>'
                    f'<text class="tick" x="{x0 - 6}" y="{y(v / 100) + 4:.1f}" text-anchor="end">{v}%</text>')
    body.append(f'<text class="axis-label" x="{(x0 + x1) / 2:.0f}" y="{y1 + 34}" text-anchor="middle">'
                f'{_t(x_label)}</text>')
    body.append(f'<text class="axis-label" x="14" y="{(y0 + y1) / 2:.0f}" text-anchor="middle" '
                f'transform="rotate(-90 14 {(y0 + y1) / 2:.0f})">{_t(passk)} across industries</text>')
    if line_at is not None:
        body.append(f'<g class="threshold"><line x1="{x(line_at):.1f}" y1="{y0}" x2="{x(line_at):.1f}" y2="{y1}" '
                    f'stroke="{LINE_COLOUR}" stroke-dasharray="6 4" stroke-width="1.5"/>'
                    f'<text x="{x(line_at) + 5:.1f}" y="{y0 + 12}" fill="{LINE_COLOUR}">{fmt(line_at)}: '
                    'not conversational to the right</text></g>')
    placed: list[tuple[float, float, float]] = []  # the labels written so far: x, y, width
    for r in shown:
        cx, cy = x(value(r)), y(r.overall.pass_k.estimate)
        label, width = _short(r.name, 20), 6.5 * len(_short(r.name, 20))
        # A label that would overprint another is left out; the point keeps its name as a tooltip.
        free = all(abs(cy - py) >= 13 or cx + 7 >= px + pw or cx + 7 + width <= px for px, py, pw in placed)
        if free:
            placed.append((cx + 7, cy, width))
        body.append(f'<g class="model" data-model="{_t(r.name)}"><title>{_t(r.name)}: {fmt(value(r))}, '
                    f'{pct(r.overall.pass_k.estimate)}</title><circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" '
                    f'fill="{LINE_COLOUR if line_at is not None and value(r) > line_at else PASSK_COLOUR}"/>'
                    + (f'<text x="{cx + 7:.1f}" y="{cy - 6:.1f}">{_t(label)}</text>' if free else "") + "</g>")
    return _svg(plot_id, y1 + 46, title, body), left_out


def industry_plot(industry: str, rows: list[Row], passk: str) -> Markup:
    """Per model, the industry's pass^k as a bar with its 95% interval as a whisker."""
    x0, x1, step = LABEL_W, PLOT_W - 70, 22
    present = [r for r in rows if industry in r.scopes]
    height = 24 + step * len(present) + 30

    def x(v: float) -> float:
        return x0 + (x1 - x0) * v

    body = _x_axis(x0, x1, 16 + step * len(present), [(x(v / 100), f"{v}%") for v in range(0, 101, 20)])
    for i, r in enumerate(present):
        y, f = 18 + step * i, r.scopes[industry].pass_k
        parts = [f'<text class="label" x="{x0 - 8}" y="{y + 11}" text-anchor="end">{_t(_short(r.name))}</text>']
        if f.estimate is not None:
            parts.append(f'<rect class="bar" x="{x0}" y="{y + 2}" width="{x(f.estimate) - x0:.1f}" height="14" '
                         f'fill="{PASSK_COLOUR}" opacity="0.8"/>')
            if f.has_interval:
                parts.append(f'<line class="whisker" x1="{x(f.low):.1f}" y1="{y + 9}" x2="{x(f.high):.1f}" '
                             f'y2="{y + 9}" stroke="#1f2328" stroke-width="1.5"/>')
        parts.append(f'<text class="value" x="{x1 + 8}" y="{y + 13}">{pct(f.estimate)}</text>')
        body.append(f'<g class="model" data-model="{_t(r.name)}">{"".join(parts)}</g>')
    return _svg(f"plot-industry-{re.sub(r'[^A-Za-z0-9_-]+', '_', industry)}", height,
                f"{passk} in {industry} per model, with its 95% interval", body)


# Pages ----------------------------------------------------------------------------------------


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


RUNS_DIR = "runs"  # beside the index: a copy of each run's report pages
LINKS_RULE = ("Links to a run's report go to a copy of its pages in runs/ beside this page (report.html and "
              "report/, its task pages), so the folder opens anywhere as it is: copy or publish it whole.")


def copy_reports(rows: list[Row], out: Path) -> None:
    """Copy each run's report pages into `out/runs/<name>/` and set the row's link to the copy: links
    into the run directories themselves break once the board is copied elsewhere."""
    for row in rows:
        row.report_copy = None
        source = row.run.path / REPORT_PAGE
        if not source.is_file():
            continue
        target = out / RUNS_DIR / Path(row.page).stem
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copy2(source, target / REPORT_PAGE)
        pages = row.run.path / Path(REPORT_PAGE).stem  # report/: the task pages and their stylesheet
        if pages.is_dir():
            shutil.copytree(pages, target / pages.name)
        row.report_copy = f"{RUNS_DIR}/{target.name}/{REPORT_PAGE}"


def scope_nav(known: scopes.Known, current: scopes.Scope) -> list[dict[str, Any]]:
    """The "rank by" links of a leaderboard page: one group per kind of scope, the current one marked."""
    groups = [("", [scopes.Scope()]), ("industry", [scopes.Scope(industry=i) for i in known.industries]),
              ("category", [scopes.Scope(category=c) for c in known.categories]),
              ("difficulty", [scopes.Scope(difficulty=d) for d in known.difficulties])]
    return [{"kind": kind, "links": [{"key": s.key, "href": s.file_name, "current": s == current,
                                      "text": scopes.ALL_LABEL if s.is_all else s.key,
                                      "title": known.label(s)} for s in group]}
            for kind, group in groups if group]


def index_context(rows: list[Row], title: str, out: Path, warnings: list[str],
                  scope: scopes.Scope | None = None, known: scopes.Known | None = None) -> dict[str, Any]:
    """The leaderboard page ranking by `scope` (all industries by default: that page also draws the plots)."""
    scope = scope or scopes.Scope()
    known = known or scopes.known([r.run for r in rows])
    passk = passk_name(rows)
    industries = sorted({i for r in rows for i in r.industries})
    placed = ranking(rows, scope)
    ranked = [p for p in placed if p.row.apart is None]
    plotted = [p.row for p in ranked]  # the ranked rows: the others are not comparable
    plots: dict[str, Any] = {"gap": None, "cost": None, "ttft": None, "industries": []}
    left_out: dict[str, list[str]] = {"cost": [], "ttft": []}
    if scope.is_all:
        cost_plot, left_out["cost"] = scatter("plot-cost", plotted, lambda r: r.cost_per_hour, "cost per hour (USD)",
                                              lambda v: f"${v:,.2f}" if v >= 0.1 or v == 0 else f"${v:,.4f}",
                                              f"{passk} against cost per hour", passk)
        ttft_plot, left_out["ttft"] = scatter("plot-ttft", plotted, lambda r: r.ttft_ms,
                                              "median time to first token (ms)", lambda v: f"{v:,.0f} ms",
                                              f"{passk} against median time to first token", passk,
                                              line_at=TTFT_LINE_MS)
        plots = {"gap": gap_plot(plotted, passk) if plotted else None, "cost": cost_plot, "ttft": ttft_plot,
                 "industries": [(i, industry_plot(i, plotted, passk)) for i in industries
                                if any(i in r.scopes for r in plotted)]}
    return {
        "title": title, "passk": passk, "industries": industries, "warnings": warnings,
        "scope": scope, "scope_label": known.label(scope), "nav": scope_nav(known, scope),
        "category_names": [(c, known.category_names(c)) for c in known.categories],
        "ranked": ranked, "apart": [p for p in placed if p.row.apart is not None], "ranked_rule": RANKED_RULE,
        "evidence": evidence.pairs(placed, passk),
        "k": rows[0].k if rows else "k", "tie_rule": tie_rule(rows[0].k if rows else "k", scope, known),
        "ttft_rule": TTFT_RULE, "ttft_line": TTFT_LINE_MS, "links_rule": LINKS_RULE,
        "plots": plots, "left_out": left_out,
        "pct": pct, "ci": ci, "ms": ms, "cost": cost, "slow": slow, "attempts": attempts_label,
    }


def _settings(config: dict[str, Any] | None, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    if not config:
        return []
    return flat_settings(redact({k: v for k, v in config.items() if k not in skip}))


def model_context(row: Row, rows: list[Row], title: str, out: Path, known: scopes.Known | None = None) -> dict[str, Any]:
    run, summary = row.run, row.run.summary
    comparable, manifest = run.comparable, run.manifest
    config = comparable.get("model_config") or {}
    usage = run.report.get("usage") or {}
    page_dir = out / Path(row.page).parent
    categories = []
    for key, g in sorted((summary.get("categories") or {}).items()):
        industry, _, category = key.partition("/")
        categories.append({"industry": industry, "category": category,
                           "name": known.category_name(category, industry) if known else None, **g})
    tasks = sorted((summary.get("tasks") or {}).values(), key=lambda t: (t.get("industry"), t.get("task_id")))
    sections = [
        ("model config", _settings(config, ("sampling", "quirks", "prices", "serve")),
         "built in (no config)" if comparable.get("model") == "oracle" else "a bare model id (no config file)"),
        ("sampling", _settings(config.get("sampling")), "the server's defaults"),
        ("quirks", _settings(config.get("quirks")), "none"),
        ("prices", _settings(config.get("prices")), "none known"),
        ("serve", _settings(config.get("serve")), "hosted (no serve command)"),
        ("caller", [("played by", row.caller_label)] + (_settings(comparable.get("caller_config"))
                                                       if (row.caller or {}).get("kind") == "model" else []), ""),
        ("phone line", _settings(comparable.get("line") if isinstance(comparable.get("line"), dict)
                                 else {"spec": line_name(comparable.get("line"))}), "clean"),
        ("release pins checked", _settings(manifest.get("release")), "no release checked"),
        ("run", [(k, str(v)) for k, v in (("attempts per task", comparable.get("attempts")), ("k", row.k),
                                          ("package version", manifest.get("package_version")),
                                          ("created at", manifest.get("created_at")),
                                          ("rescored from", manifest.get("rescored_from")),
                                          ("merged from", ", ".join(manifest.get("merged_from") or []) or None),
                                          ("task-set hash", (comparable.get("hashes") or {}).get("tasks")),
                                          ("verifier hash", (comparable.get("hashes") or {}).get("verifier")))
                 if v not in (None, "")], ""),
    ]
    return {
        "title": title, "row": row, "passk": passk_name(rows), "total": len([r for r in rows if r.rank]),
        "run_path": str(run.path.resolve()), "sections": sections,
        "report": _relative(out / row.report_copy, page_dir) if row.report_copy else None,
        "index": _relative(out / "index.html", page_dir), "categories": categories, "tasks": tasks,
        "usage": sorted((usage.get("industries") or {}).items()) + ([(OVERALL, usage["total"])]
                                                                     if usage.get("total") else []),
        "pct": pct, "ci": ci, "ms": ms, "money": money, "cost": cost, "slow": slow, "ttft_line": TTFT_LINE_MS,
        "category_name": (lambda code, industry: known.category_name(code, industry)) if known else (lambda c, i: None),
    }


def labels(row: Row) -> dict[str, str]:
    """A row's figures as the pages write them, for the choice page's script."""
    return {"passk": pct(row.overall.pass_k.estimate), "passk_ci": ci(row.overall.pass_k),
            "pass1": pct(row.overall.pass_at_1.estimate), "cost_label": cost(row, "hour")}


def scope_labels(rows: list[Row], known: scopes.Known, given: scopes.Scope | None = None) -> list[dict[str, Any]]:
    """Every scope the choice page offers (those of the leaderboard's pages, and `given`, the one --scope
    named), with each ranked model's place and figures in it (ranked here, by the one rule: the page's
    script only reads them)."""
    out = []
    offered = known.scopes()
    for scope in offered + ([given] if given is not None and given not in offered else []):
        placed = place([r for r in rows if r.apart is None], lambda r: r.measure(scope))
        out.append({"key": scope.key, "label": known.label(scope), "order": [p.row.name for p in placed],
                    "models": {p.row.name: {"rank": p.rank_label,
                                            "passk": pct(p.figures.pass_k.estimate) if p.figures else "not played",
                                            "passk_ci": ci(p.figures.pass_k) if p.figures else "",
                                            "pass1": pct(p.figures.pass_at_1.estimate) if p.figures else "n/a"}
                               for p in placed}})
    return out


def write(rows: list[Row], out: Path, title: str, warnings: list[str] | None = None,
          budget: choice.Budget | None = None, scope: scopes.Scope | None = None,
          known: scopes.Known | None = None) -> Path:
    """Write index.html and a page per scope (rank-<scope>.html), failures.html, choose.html (its form set to
    `budget` and `scope`), leaderboard.md (ranked by `scope`), the model pages and the copies of the runs'
    report pages into `out`; returns the index's path. `known`: what the runs played (scopes.known)."""
    out = Path(out)
    scope = scope or scopes.Scope()
    copy_reports(rows, out)
    env = environment()
    known = known or scopes.known([r.run for r in rows])
    secrets = sorted({v for r in rows for v in secret_variables(r.run.manifest)})
    for row in rows:
        page = env.get_template("leaderboard_model.html.j2").render(**model_context(row, rows, title, out, known))
        write_page(out / row.page, strike_secrets(page, secrets))
    for each in known.scopes():
        page = env.get_template("leaderboard.html.j2").render(**index_context(rows, title, out, warnings or [],
                                                                              each, known))
        write_page(out / each.file_name, strike_secrets(page, secrets))
    view = failures.context([p for p in ranking(rows, scopes.Scope()) if p.row.apart is None], known,
                            passk_name(rows), known.packs, lambda code: scopes.Scope(category=code))
    page = env.get_template("leaderboard_failures.html.j2").render(title=title, pct=pct, ci=ci, **view)
    write_page(out / failures.PAGE, strike_secrets(page, secrets))
    page = env.get_template("leaderboard_choose.html.j2").render(
        **choice.context(rows, title, passk_name(rows), budget or choice.Budget(), labels,
                         scope_labels(rows, known, scope), scope.key))
    write_page(out / choice.PAGE, strike_secrets(page, secrets))
    write_page(out / "leaderboard.md", strike_secrets(markdown(rows, title, scope, known), secrets))
    return out / "index.html"


# Command --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="callm leaderboard", description="Rank models from their run directories "
                                     "(one per model): an HTML page, a Markdown table and a page per model.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="run directories (--callm-out)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder for index.html, leaderboard.md and models/ (default: ./{DEFAULT_OUT})")
    parser.add_argument("--force", action="store_true",
                        help="show runs whose task-set or verifier hashes or k differ, listed apart (with a warning)")
    parser.add_argument("--title", default="CALLM leaderboard", help="the page's and the table's title")
    parser.add_argument("--ttft-budget", type=float, metavar="MS",
                        help="latency budget: print the ranked models whose time to first token is at most MS "
                             "(and set choose.html's form to it)")
    parser.add_argument("--ttft-statistic", choices=choice.STATISTICS, default="median",
                        help="which time to first token --ttft-budget bounds (default: median)")
    parser.add_argument("--cost-budget", type=float, metavar="USD",
                        help="cost budget: print the ranked models that cost at most USD per hour of calls")
    parser.add_argument("--scope", default=scopes.ALL, metavar="SCOPE",
                        help="rank by one industry, category or difficulty, or one industry's category: "
                             "healthcare, C1, hard, healthcare/C1 (default: all, the mean across industries); "
                             "prints the ranking, and sets leaderboard.md and choose.html to it")
    return parser


def main(argv: list[str] | None = None) -> int:
    """`callm leaderboard`: 0 when written, 2 on an error or a refusal (the reason on stderr)."""
    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:  # --help, or a usage error (argparse has printed it)
        return e.code if isinstance(e.code, int) else 2
    try:
        rows, warnings = load(args.runs, args.force)
    except LeaderboardError as e:
        print(f"callm leaderboard: {e}", file=sys.stderr)
        return EXIT_REFUSED
    if args.out.exists() and not args.out.is_dir():
        print(f"callm leaderboard: --out {args.out}: a file, not a folder", file=sys.stderr)
        return EXIT_REFUSED
    for w in warnings:
        print(f"callm leaderboard: WARNING: {w}", file=sys.stderr)
    known = scopes.known([r.run for r in rows])
    try:
        scope = scopes.parse(args.scope, known)
    except scopes.ScopeError as e:
        print(f"callm leaderboard: --scope: {e}", file=sys.stderr)
        return EXIT_REFUSED
    budget = choice.Budget(args.ttft_budget, args.ttft_statistic, args.cost_budget)
    index = write(rows, args.out, args.title, warnings, budget, scope, known)
    ranked = sum(1 for r in rows if r.rank is not None)
    print(f"callm leaderboard: {len(rows)} models ({ranked} ranked): page {index}, table {args.out / 'leaderboard.md'}, "
          f"choice {args.out / choice.PAGE}, failures {args.out / failures.PAGE}")
    passk = passk_name(rows)
    placed = [p for p in ranking(rows, scope) if p.row.apart is None]
    if not scope.is_all:
        print(f"ranked by {passk} in {known.label(scope)} (page {args.out / scope.file_name}):")
        for p in placed:
            f = p.figures
            print(f"  {p.rank_label:>4} {p.row.name}: " + (f"{passk} {pct(f.pass_k.estimate)} {ci(f.pass_k)} over "
                                                           f"{f.tasks} tasks" if f is not None else "not played"))
    if args.ttft_budget is not None or args.cost_budget is not None:
        chosen, missed = choice.choose(rows, budget, [p.row for p in placed])
        place_of = {p.row.name: p for p in placed}
        print(f"within budget ({len(chosen)} of {len(chosen) + len(missed)} ranked"
              + ("" if scope.is_all else f", by {known.label(scope)}") + "):")
        for r in chosen:
            p = place_of[r.name]
            figure = f"{pct(p.figures.pass_k.estimate)} {ci(p.figures.pass_k)}" if p.figures else "not played"
            print(f"  {p.rank_label:>4} {r.name}: {passk} {figure}")
        for r, why in missed:
            print(f"  out  {r.name}: {'; '.join(why)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
