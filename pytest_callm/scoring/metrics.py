"""pass@1 and pass^k (DESIGN §8), from per-attempt results that arrive as plain dicts.

For a task with n scored attempts of which c pass: pass@1 = c/n pooled over attempts, and
pass^k = C(c, k) / C(n, k). A group's pass^k is the mean over its tasks; the cross-industry figure
is the unweighted mean of industries. A task with fewer than k scored attempts has no pass^k, and
every figure that would need it says so instead of printing a wrong number. Attempts that ended in
an infrastructure error are not scored: they are counted, never put in a denominator. The 95%
bootstrap intervals over tasks of the industry and cross-industry figures come from stats.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from math import comb
from typing import Any

from pytest_callm.scoring.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Intervals, bootstrap_counts

GATES = ("tools", "handoff", "database")


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    if n < k or k <= 0:
        return None
    return comb(c, k) / comb(n, k)


@dataclass
class TaskScore:
    task_id: str
    industry: str
    category: str
    difficulty: str
    n: int = 0  # scored attempts
    c: int = 0  # passing attempts
    errors: int = 0  # attempts not scored (infrastructure errors, unplayable answer keys)

    def pass_at_1(self) -> float | None:
        return self.c / self.n if self.n else None


@dataclass
class GroupScore:
    label: str
    tasks: int
    attempts: int
    passes: int
    pass_at_1: float | None
    pass_k: float | None  # None when some task has fewer than k scored attempts
    short_tasks: int  # tasks with fewer than k scored attempts

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Summary:
    k: int
    tasks: dict[tuple[str, str], TaskScore]
    industries: dict[str, GroupScore]
    categories: dict[tuple[str, str], GroupScore]
    difficulties: dict[tuple[str, str], GroupScore]
    overall: GroupScore | None
    gate_failures: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)  # kind -> attempts not scored
    rerun: int = 0  # scored attempts played again after a fault of the harness or the model server
    cut: int = 0  # scored attempts in which the model asked past a bound (refused: its failure)
    intervals: Intervals | None = None  # bootstrap intervals of industries and overall (stats.py)
    # The same attempts judged by the paper's three gates alone (no words read): comparable to the paper.
    paper: Summary | None = None

    @property
    def unscored(self) -> int:
        return sum(self.errors.values())

    @property
    def partial(self) -> bool:
        return any(t.n < self.k for t in self.tasks.values())

    def most_failed_gate(self) -> str | None:
        if not self.gate_failures:
            return None
        gate, count = self.gate_failures.most_common(1)[0]
        return gate if count else None

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "partial": self.partial,
            "errors": dict(self.errors),
            **({"rerun": self.rerun} if self.rerun else {}),
            **({"cut": self.cut} if self.cut else {}),
            "gate_failures": dict(self.gate_failures),
            "intervals": self.intervals.to_json() if self.intervals else None,
            **({"paper": {"overall": self.paper.overall.to_json() if self.paper.overall else None,
                          "industries": {k: v.to_json() for k, v in self.paper.industries.items()}}}
               if self.paper else {}),
            "overall": self.overall.to_json() if self.overall else None,
            "industries": {k: v.to_json() for k, v in self.industries.items()},
            "categories": {"/".join(k): v.to_json() for k, v in self.categories.items()},
            "difficulties": {"/".join(k): v.to_json() for k, v in self.difficulties.items()},
            "tasks": {f"{t.industry}/{t.task_id}": {**t.__dict__, "pass_at_1": t.pass_at_1(),
                                                    "pass_k": pass_hat_k(t.n, t.c, self.k)}
                      for t in self.tasks.values()},
        }


def group(label: str, tasks: list[TaskScore], k: int) -> GroupScore:
    attempts = sum(t.n for t in tasks)
    passes = sum(t.c for t in tasks)
    scored = [t for t in tasks if t.n]
    hats = [pass_hat_k(t.n, t.c, k) for t in scored]
    short = sum(1 for t in tasks if t.n < k)
    return GroupScore(label, len(tasks), attempts, passes, passes / attempts if attempts else None,
                      sum(hats) / len(hats) if scored and None not in hats else None, short)


def _paper_row(r: dict[str, Any]) -> dict[str, Any]:
    """An attempt as the paper scores it: its three gates, no words read."""
    row = {k: v for k, v in r.items() if k != "paper_passed"}
    if r.get("passed") is not None:
        row["passed"] = r["paper_passed"]
        row["gates"] = {g: ok for g, ok in (r.get("gates") or {}).items() if g in GATES}
    return row


def summarize(results: list[dict[str, Any]], k: int, *, resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED) -> Summary:
    """`results`: one dict per attempt with task_id, industry, category, difficulty, passed
    (True, False, or None when the attempt could not be scored, with `error_kind`) and gates
    (gate -> bool), and `paper_passed` where the words gate was read (the paper's three gates).
    `resamples` and `seed` are the bootstrap's (stats.py); 0 resamples, no intervals."""
    tasks: dict[tuple[str, str], TaskScore] = {}
    failures: Counter = Counter({g: 0 for g in GATES})
    errors: Counter = Counter()
    rerun = cut = 0
    for r in results:
        key = (r["industry"], r["task_id"])
        t = tasks.setdefault(key, TaskScore(r["task_id"], r["industry"], r["category"], r["difficulty"]))
        if r.get("passed") is None:
            t.errors += 1
            errors[r.get("error_kind") or "infrastructure"] += 1
            continue
        t.n += 1
        t.c += bool(r["passed"])
        rerun += bool(r.get("rerun_because"))
        cut += bool(r.get("cuts"))
        for gate, ok in (r.get("gates") or {}).items():
            failures[gate] += not ok

    def by(keyfn) -> dict:
        buckets: dict[Any, list[TaskScore]] = defaultdict(list)
        for t in tasks.values():
            buckets[keyfn(t)].append(t)
        return {key: group(key if isinstance(key, str) else key[-1], ts, k)
                for key, ts in sorted(buckets.items())}

    industries = by(lambda t: t.industry)
    overall = None
    if industries:
        p1 = [g.pass_at_1 for g in industries.values() if g.pass_at_1 is not None]
        pk = [g.pass_k for g in industries.values()]
        overall = GroupScore(
            "all industries", len(tasks), sum(g.attempts for g in industries.values()),
            sum(g.passes for g in industries.values()), sum(p1) / len(p1) if p1 else None,
            sum(pk) / len(pk) if pk and None not in pk else None,
            sum(g.short_tasks for g in industries.values()))
    intervals = None
    if resamples:
        counts: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
        for t in tasks.values():
            counts[t.industry][t.task_id] = (t.n, t.c)
        intervals = bootstrap_counts(counts, k, resamples=resamples, seed=seed)
    paper = None
    if any("paper_passed" in r for r in results):
        paper = summarize([_paper_row(r) for r in results if "paper_passed" in r or r.get("passed") is None], k,
                          resamples=0)
    return Summary(k, tasks, industries, by(lambda t: (t.industry, t.category)),
                   by(lambda t: (t.industry, t.difficulty)), overall, failures, errors, rerun, cut, intervals, paper)
