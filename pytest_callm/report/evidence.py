"""How much evidence separates neighbours in a ranking, in plain words.

For each pair of models next to each other in a ranking, from the 95% bootstrap intervals the ranking
already uses (scoring/stats.py): whether the intervals separate (the upper model's lower bound above the
lower model's upper bound), and if not, roughly how many more tasks would separate them.

The estimate: a percentile bootstrap interval over tasks narrows about as one over the square root of
the number of tasks. Two intervals of half-widths h1 and h2 around estimates d apart separate once
h1 + h2 < d; with n tasks now, that takes about n * ((h1 + h2) / d)^2 tasks, if the gap d held and the
tasks were like those played. More attempts of the same tasks narrow a bootstrap over tasks little, so
the answer is in tasks, and in attempts at the runs' attempts a task. Equal estimates give no number:
no amount of evidence separates two models whose results are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any


@dataclass(frozen=True)
class Pair:
    upper: str
    lower: str
    separated: bool
    more_tasks: int | None  # about how many more tasks would separate them; None: separated, or no number
    more_attempts: int | None
    sentence: str


def _pct(v: float) -> str:
    return f"{v * 100:.1f}%"


def _ci(f: Any) -> str:
    return f"[{f.low * 100:.1f}, {f.high * 100:.1f}]"


def tasks_to_separate(upper: Any, lower: Any, tasks: int) -> int | None:
    """About how many tasks in all would separate two overlapping pass^k intervals (Figures with estimate,
    low, high) measured over `tasks` tasks; None when the estimates are equal (no number would)."""
    gap = upper.estimate - lower.estimate
    if gap <= 0:
        return None
    spread = (upper.high - upper.low) / 2 + (lower.high - lower.low) / 2
    return max(tasks + 1, ceil(round(tasks * (spread / gap) ** 2, 6)))  # rounded: no task for a float's last bit


def pair(upper: Any, lower: Any, passk: str) -> Pair | None:
    """The evidence between two neighbours (leaderboard.Placed, upper ranked above); None when either has
    no pass^k interval."""
    a, b = upper.figures, lower.figures
    if a is None or b is None or not a.pass_k.has_interval or not b.pass_k.has_interval:
        return None
    ua, lb = upper.row.name, lower.row.name
    shown = f"{ua} {_pct(a.pass_k.estimate)} {_ci(a.pass_k)}, {lb} {_pct(b.pass_k.estimate)} {_ci(b.pass_k)}"
    if a.pass_k.low > b.pass_k.high:
        return Pair(ua, lb, True, None, None,
                    f"{ua} is ahead of {lb} beyond the noise: their 95% intervals of {passk} separate ({shown}).")
    tasks = min(a.tasks, b.tasks)
    total = tasks_to_separate(a.pass_k, b.pass_k, tasks)
    if total is None:
        return Pair(ua, lb, False, None, None,
                    f"{ua} and {lb} cannot be told apart: the same {passk} ({shown}); more tasks separate them "
                    "only if their results come to differ.")
    more = total - tasks
    per_task = _per_task(a, b)
    attempts = round(more * per_task) if per_task else None
    at = f" ({attempts:,} more attempts at {per_task:g} a task)" if attempts else ""
    times = total / tasks if tasks else 0
    return Pair(ua, lb, False, more, attempts,
                f"{ua} and {lb} overlap ({shown}): the order between them may be noise. If the gap of "
                f"{(a.pass_k.estimate - b.pass_k.estimate) * 100:.1f} points held, about {more:,} more tasks{at} "
                f"would separate them, {times:.1f} times the {tasks} played each. More attempts of the same tasks "
                "would not: the interval is a bootstrap over tasks.")


def _per_task(a: Any, b: Any) -> float:
    """Attempts scored a task, the smaller of the two (a Scope or a scopes.Measure)."""
    rates = [f.attempts / f.tasks for f in (a, b) if getattr(f, "tasks", 0)]
    return round(min(rates), 1) if rates else 0.0


def pairs(placed: list[Any], passk: str) -> list[Pair]:
    """The evidence between each pair of ranked neighbours, in ranking order (rows listed apart and rows
    without an interval are left out)."""
    ranked = [p for p in placed if p.rank is not None]
    return [found for upper, lower in zip(ranked, ranked[1:]) if (found := pair(upper, lower, passk)) is not None]
