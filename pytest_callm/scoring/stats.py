"""95% bootstrap intervals over tasks for pass@1 and pass^k (DESIGN §8).

Tasks, not attempts, are the unit of resampling: the attempts of one task share a prompt, a caller
and an answer key, so they are not independent draws. Each industry's tasks are resampled with
replacement, independently of the other industries; a resample's figures are computed exactly as the
point estimates are (metrics.py):

- pass@1 of a resample = sum c / sum n over the resampled tasks (pooled over attempts);
- pass^k of a resample = mean over the resampled tasks of C(c, k) / C(n, k);
- the cross-industry value of a resample is the unweighted mean of its industries' values.

The interval is the percentile interval of the resampled values (linear interpolation between order
statistics, numpy's default), 2.5th and 97.5th for 95%.

Unscored attempts (`passed` None: infrastructure errors, unplayable answer keys) are left out exactly as
`metrics.summarize` leaves them out: a task's n counts scored attempts only, and a task with none has
no data and is not resampled. pass^k and its interval are None for an industry where some task has
fewer than k (but at least one) scored attempts, and across industries when any industry's is None.

Deterministic: each industry draws from its own `random.Random` seeded with a string made of the seed
and the industry's name (string seeds go through SHA-512, not the per-process `hash`), over its tasks
sorted by id, so the same results give the same intervals in any process, whatever their order, and
an industry's interval does not move when another industry is added.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from math import comb, floor, fsum
from typing import Any

DEFAULT_SEED = 20_240_917
DEFAULT_RESAMPLES = 2_000
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float  # the point estimate, from all tasks
    low: float  # e.g. the 2.5th percentile of the resampled values
    high: float  # e.g. the 97.5th percentile

    def to_json(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class GroupIntervals:
    label: str
    tasks: int  # tasks resampled (those with at least one scored attempt)
    pass_at_1: Interval | None
    pass_k: Interval | None  # None when some task has fewer than k scored attempts

    def to_json(self) -> dict[str, Any]:
        return {"tasks": self.tasks,
                "pass_at_1": self.pass_at_1.to_json() if self.pass_at_1 else None,
                "pass_k": self.pass_k.to_json() if self.pass_k else None}


@dataclass(frozen=True)
class Intervals:
    k: int
    confidence: float
    resamples: int
    seed: int
    industries: dict[str, GroupIntervals]
    overall: GroupIntervals | None  # the unweighted mean of industries; None without industries

    def to_json(self) -> dict[str, Any]:
        return {"method": "percentile bootstrap over tasks, resampled within each industry",
                "confidence": self.confidence, "resamples": self.resamples, "seed": self.seed,
                "overall": self.overall.to_json() if self.overall else None,
                "industries": {name: g.to_json() for name, g in self.industries.items()}}


def task_counts(results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, tuple[int, int]]]:
    """industry -> task id -> (n scored attempts, c passing), from per-attempt result dicts;
    attempts with `passed` None are not counted, as in `metrics.summarize`."""
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for r in results:
        tasks = counts.setdefault(r["industry"], {})
        n, c = tasks.get(r["task_id"], (0, 0))
        if r.get("passed") is not None:
            n, c = n + 1, c + bool(r["passed"])
        tasks[r["task_id"]] = (n, c)
    return counts


def bootstrap(results: Iterable[Mapping[str, Any]], k: int, *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> Intervals:
    """Intervals for pass@1 and pass^k per industry and across industries, from the per-attempt result
    dicts that `metrics.summarize` takes (task_id, industry, passed True/False/None, ...)."""
    return bootstrap_counts(task_counts(results), k, resamples=resamples, seed=seed, confidence=confidence)


def bootstrap_counts(counts: Mapping[str, Mapping[str, tuple[int, int]]], k: int, *,
                     resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = DEFAULT_CONFIDENCE) -> Intervals:
    """The same from industry -> task id -> (n, c) with n scored attempts of which c passed."""
    if resamples < 1:
        raise ValueError(f"resamples must be positive, not {resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    tail = (1 - confidence) / 2
    industries: dict[str, GroupIntervals] = {}
    draws_1: list[list[float]] = []  # per industry with a pass@1: its resampled values
    draws_k: list[list[float] | None] = []  # per industry: its resampled pass^k values, or None
    for name in sorted(counts):
        tasks = [counts[name][t] for t in sorted(counts[name]) if counts[name][t][0] > 0]
        if not tasks:
            industries[name] = GroupIntervals(name, 0, None, None)
            draws_k.append(None)
            continue
        hats = [comb(c, k) / comb(n, k) for n, c in tasks] if k > 0 and all(n >= k for n, _ in tasks) else None
        values_1, values_k = _resample(tasks, hats, random.Random(f"callm-bootstrap:{seed}:{name}"), resamples)
        draws_1.append(values_1)
        draws_k.append(values_k)
        industries[name] = GroupIntervals(
            name, len(tasks), _interval(_pooled(tasks), values_1, tail),
            _interval(fsum(hats) / len(hats), values_k, tail) if hats is not None else None)
    overall = None
    if industries:
        p1 = [g.pass_at_1.estimate for g in industries.values() if g.pass_at_1 is not None]
        overall_1 = (_interval(fsum(p1) / len(p1), _mean_across(draws_1), tail) if draws_1 else None)
        overall_k = None
        if all(d is not None for d in draws_k):
            pk = [g.pass_k.estimate for g in industries.values()]
            overall_k = _interval(fsum(pk) / len(pk), _mean_across(draws_k), tail)
        overall = GroupIntervals("all industries", sum(g.tasks for g in industries.values()), overall_1, overall_k)
    return Intervals(k, confidence, resamples, seed, industries, overall)


def _pooled(tasks: list[tuple[int, int]]) -> float:
    return sum(c for _, c in tasks) / sum(n for n, _ in tasks)


def _resample(tasks: list[tuple[int, int]], hats: list[float] | None, rng: random.Random,
              resamples: int) -> tuple[list[float], list[float] | None]:
    m = len(tasks)
    ns = [n for n, _ in tasks]
    cs = [c for _, c in tasks]
    index = range(m)
    values_1: list[float] = []
    values_k: list[float] | None = [] if hats is not None else None
    for _ in range(resamples):
        picks = rng.choices(index, k=m)
        values_1.append(sum(cs[i] for i in picks) / sum(ns[i] for i in picks))
        if values_k is not None:
            values_k.append(fsum(hats[i] for i in picks) / m)
    return values_1, values_k


def _mean_across(draws: list[list[float]]) -> list[float]:
    """Resample b of the cross-industry figure: the mean of resample b of every industry (the
    industries' resamples are independent, so pairing them by index is a joint resample)."""
    return [fsum(values) / len(values) for values in zip(*draws)]


def _interval(estimate: float, values: list[float], tail: float) -> Interval:
    ordered = sorted(values)
    return Interval(estimate, percentile(ordered, tail), percentile(ordered, 1 - tail))


def percentile(ordered: list[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of sorted values, interpolating linearly between order statistics
    (numpy's default, Hyndman and Fan's type 7)."""
    h = q * (len(ordered) - 1)
    lo = floor(h)
    if lo + 1 >= len(ordered):
        return ordered[-1]
    return ordered[lo] + (h - lo) * (ordered[lo + 1] - ordered[lo])
