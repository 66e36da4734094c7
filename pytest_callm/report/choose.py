"""Choosing a model within budgets: `DIR/choose.html`, written beside the leaderboard's index.

The leaderboard's purpose is a choice. Given a scope (all industries, one industry, one category, one
difficulty or one industry's category: scopes.py, ranked as the leaderboard ranks it), a latency budget (the median or the 90th percentile of the
time to first token over every request of the run) and a cost budget (per estimated hour of calls),
the page lists the ranked models that meet both, in the scope's ranking order with its pass^k and 95% interval,
and the others with what they miss. A model whose figure is unknown (no timed request, no prices, no
usage reported, a cost that is only a lower bound) does not meet a budget set on that figure; an
empty budget is no limit. Only ranked rows are offered: the rows listed apart are not comparable.

The same task's attempt from two models opens side by side, each in a frame holding that run's task
page, from the copies of the runs' report pages in `runs/` beside the page (leaderboard.copy_reports).

The page is a small form and one inline script, nothing loaded from elsewhere. The form is a GET form:
submitting it opens `choose.html?scope=healthcare&stat=p90&ttft=800&cost=2&task=...&attempt=1&a=...&b=...`, and the
script reads those values on load, so a choice is a link that can be shared; typing in the form filters
at once and puts the form's values in the address (history.replaceState). `choose` below is the rule the script applies (the browser test checks that they agree), and
what `callm leaderboard --ttft-budget/--cost-budget` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A row is the leaderboard's (leaderboard.Row); named here without importing it: the leaderboard imports this.
Row = Any

STATISTICS = ("median", "p90")
PAGE = "choose.html"


@dataclass(frozen=True)
class Budget:
    ttft_ms: float | None = None  # None: no latency budget
    statistic: str = "median"  # which TTFT the latency budget bounds: "median" or "p90"
    cost_per_hour: float | None = None  # USD per estimated hour of calls; None: no cost budget

    def __post_init__(self):
        if self.statistic not in STATISTICS:
            raise ValueError(f"TTFT statistic {self.statistic!r}: one of {', '.join(STATISTICS)}")


def ttft(row: Row, statistic: str) -> float | None:
    return row.ttft_ms if statistic == "median" else row.ttft_p90_ms


def known_cost(row: Row) -> float | None:
    """The cost per hour a budget can be held against: none when unknown or only a lower bound."""
    return None if row.cost_note or row.cost_partial else row.cost_per_hour


def misses(row: Row, budget: Budget) -> list[str]:
    """What `row` misses of `budget`, in words; empty when it meets both (a figure equal to a budget meets it)."""
    out = []
    if budget.ttft_ms is not None:
        value = ttft(row, budget.statistic)
        if value is None:
            out.append(f"no {budget.statistic} TTFT recorded")
        elif value > budget.ttft_ms:
            out.append(f"{budget.statistic} TTFT {value:,.0f} ms, over {budget.ttft_ms:,.0f} ms")
    if budget.cost_per_hour is not None:
        value = known_cost(row)
        if value is None:
            out.append("cost per hour unknown (" + (row.cost_note or "a lower bound only") + ")")
        elif value > budget.cost_per_hour:
            out.append(f"${value:,.2f} per hour, over ${budget.cost_per_hour:,.2f}")
    return out


def choose(rows: list[Row], budget: Budget, order: list[Row] | None = None) -> tuple[list[Row], list[tuple[Row, list[str]]]]:
    """The ranked rows that meet the budget, in ranking order (`order`: the rows as a scope ranks them;
    by default across industries), and the ranked rows that do not, with why."""
    chosen, missed = [], []
    for row in (rows if order is None else order):
        if row.apart is not None:
            continue
        why = misses(row, budget)
        if why:
            missed.append((row, why))
        else:
            chosen.append(row)
    return chosen, missed


def attempt_pages(row: Row) -> dict[str, dict[str, Any]]:
    """Each task of the row's run, `industry/task`: its page in the board's copy of the run's report and
    the attempt numbers it holds (each attempt is `page#id` there)."""
    from pytest_callm.report.formatting import slug, task_page

    if not row.report_copy:
        return {}
    base = row.report_copy.rsplit("/", 1)[0]
    out: dict[str, dict[str, Any]] = {}
    for a in row.run.report.get("attempts") or []:
        industry, task_id, number = a.get("industry"), a.get("task_id"), a.get("attempt")
        if not industry or not task_id or number is None:
            continue
        entry = out.setdefault(f"{industry}/{task_id}", {"page": f"{base}/{task_page('report.html', industry, task_id)}",
                                                         "anchors": {}})
        entry["anchors"][str(number)] = slug(industry, task_id, f"attempt-{number}")
    return dict(sorted(out.items()))


def page_data(rows: list[Row], labels: Callable[[Row], dict[str, str]]) -> list[dict[str, Any]]:
    """What the page's script reads: the ranked rows, in ranking order; `labels(row)` gives the figures
    as the leaderboard writes them (passk, passk_ci, pass1, cost_label)."""
    return [{"name": r.name, "rank": r.rank_label, "page": r.page, "report": r.report_copy, **labels(r),
             "tasks": r.overall.tasks, "ttft": {"median": r.ttft_ms, "p90": r.ttft_p90_ms}, "cost": known_cost(r),
             "cost_unknown": r.cost_note or ("a lower bound only" if r.cost_partial else None),
             "pages": attempt_pages(r)}
            for r in rows if r.apart is None]


def context(rows: list[Row], title: str, passk: str, budget: Budget,
            labels: Callable[[Row], dict[str, str]], scopes: list[dict[str, Any]], scope: str) -> dict[str, Any]:
    """`scopes`: every scope offered, each with its key, label, the ranked models in its order and their
    place and figures there (leaderboard.scope_labels); `scope`: the one the form starts at."""
    models = page_data(rows, labels)
    return {"title": title, "passk": passk, "models": models, "budget": budget, "statistics": STATISTICS,
            "scopes": scopes, "scope": scope,
            "apart": [r for r in rows if r.apart is not None],
            "tasks": sorted({key for m in models for key in m["pages"]}),
            "attempt_numbers": sorted({int(n) for m in models for p in m["pages"].values() for n in p["anchors"]})}
