"""What a leaderboard ranks by: all industries, one industry, one category, one difficulty, or one
category of one industry (`callm leaderboard --scope healthcare`, `--scope C1`, `--scope healthcare/C1`).

A scope is a filter on the tasks: its parts, joined by "/", each name an industry (a pack), a category
code (C1..C5, R) or a difficulty (easy, medium, hard), as the runs' attempts name them. A scope's
figures are computed exactly as the run's own (scoring/stats.py) over the tasks it holds: pass^k and
pass@1 per industry, the unweighted mean across the industries the scope holds, and the 95% percentile
bootstrap over tasks, resampled within each industry. "all industries" is the run's own figure.

Category names come from the packs (pack.json's `suite.categories`, the one place they are written), found
as the run's report finds them: the `industries/` folders above its task files, then the installed
suite's packs. A category code means something of its own in each industry (C1 is reception in legal,
appointments in healthcare), so a category scope across industries names them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.scoring.stats import bootstrap_counts, task_counts

ALL = "all"
ALL_LABEL = "all industries"
DIFFICULTIES = ("easy", "medium", "hard")  # the order they are listed in; any other the runs name follows


class ScopeError(ValueError):
    """A scope that names nothing the runs played; the message lists what they did."""


@dataclass(frozen=True)
class Scope:
    industry: str | None = None
    category: str | None = None
    difficulty: str | None = None

    @property
    def key(self) -> str:
        """How the scope is written: `all`, `healthcare`, `C1`, `healthcare/C1`, `hard`, ..."""
        return "/".join(p for p in (self.industry, self.category, self.difficulty) if p) or ALL

    @property
    def is_all(self) -> bool:
        return self.key == ALL

    @property
    def file_name(self) -> str:
        """The leaderboard page ranking by this scope, beside index.html."""
        return "index.html" if self.is_all else f"rank-{self.key.replace('/', '-')}.html"

    def holds(self, attempt: dict[str, Any]) -> bool:
        return all(want is None or attempt.get(field) == want for field, want in
                   (("industry", self.industry), ("category", self.category), ("difficulty", self.difficulty)))


@dataclass(frozen=True)
class Known:
    """What the runs played: their industries, category codes and difficulties, and the categories' names
    (industry -> code -> name; a pack that was not found names none)."""

    industries: tuple[str, ...]
    categories: tuple[str, ...]
    difficulties: tuple[str, ...]
    names: dict[str, dict[str, str]]
    packs: Any = field(default=None, compare=False, repr=False)  # sources.Packs the names came from (or None)

    def category_name(self, code: str, industry: str | None = None) -> str | None:
        """The name of a category in one industry; across industries, the one name they share, or None."""
        if industry is not None:
            return self.names.get(industry, {}).get(code)
        named = {self.names[i][code] for i in self.names if code in self.names[i]}
        return named.pop() if len(named) == 1 else None

    def category_label(self, code: str, industry: str | None = None) -> str:
        """`C1 Appointments: booking, ...`; a code without a known name stands alone."""
        name = self.category_name(code, industry)
        return f"{code} {name}" if name else code

    def category_names(self, code: str) -> list[tuple[str, str]]:
        """(industry, name) of a category code in every industry that names it."""
        return [(i, self.names[i][code]) for i in self.industries if code in self.names.get(i, {})]

    def label(self, scope: Scope) -> str:
        """A scope in words, with its category's name: `healthcare, C1 Appointments: ...`, `C1 in every industry`."""
        if scope.is_all:
            return ALL_LABEL
        parts = []
        if scope.industry:
            parts.append(scope.industry)
        if scope.category:
            one = scope.industry or (self.industries[0] if len(self.industries) == 1 else None)
            shared = one is not None or self.category_name(scope.category) is not None
            parts.append(self.category_label(scope.category, one) if shared
                         else f"{scope.category} in every industry")
        if scope.difficulty:
            parts.append(f"{scope.difficulty} tasks")
        return ", ".join(parts)

    def scopes(self) -> list[Scope]:
        """The scopes the leaderboard's pages and the choice page offer: all industries, each industry, each
        category, each difficulty (--scope takes any other, such as one industry's category)."""
        return [Scope(), *(Scope(industry=i) for i in self.industries), *(Scope(category=c) for c in self.categories),
                *(Scope(difficulty=d) for d in self.difficulties)]


def _category_order(code: str) -> tuple:
    return (code == "R", code)  # C1..C5 in order, the rules category (R) last


def known(runs: list[Any], packs: Any = None) -> Known:
    """What these runs (saved/reader.SavedRun) played, and the names of its categories from their packs
    (`packs`: sources.Packs; found by packs_of when not given)."""
    packs = packs if packs is not None else packs_of(runs)
    industries, categories, difficulties = set(), set(), set()
    for run in runs:
        for a in run.report.get("attempts") or []:
            industries.add(a.get("industry"))
            categories.add(a.get("category"))
            difficulties.add(a.get("difficulty"))
    industries.discard(None), categories.discard(None), difficulties.discard(None)
    order = sorted(difficulties, key=lambda d: (DIFFICULTIES.index(d) if d in DIFFICULTIES else len(DIFFICULTIES), d))
    return Known(tuple(sorted(industries)), tuple(sorted(categories, key=_category_order)), tuple(order),
                 category_names(runs, sorted(industries), packs), packs)


def packs_of(runs: list[Any]) -> Any:
    """The packs of these runs (sources.Packs), found as their reports find them: the `industries/` folders
    above their task files and run directories, then the installed suite's."""
    from pytest_callm.report.sources import Packs, pack_folders

    paths = [p for run in runs for p in task_paths(run)]
    dirs: list[Path] = []
    for run in runs:
        dirs += [d for d in pack_folders(run.path, paths) if d not in dirs]
    return Packs(dirs)


def category_names(runs: list[Any], industries: list[str], packs: Any) -> dict[str, dict[str, str]]:
    """industry -> category code -> name: from each industry's pack (pack.json `suite.categories`), or, for
    a pack that lists no suite, from the task files beside the run's (their `metadata.category`)."""
    paths = [p for run in runs for p in task_paths(run)]
    out: dict[str, dict[str, str]] = {}
    for industry in industries:
        pack = packs.get(industry)
        names = ((pack.suite or {}).get("categories") if pack is not None else None) or {}
        out[industry] = {str(code): str(name) for code, name in names.items()} or _names_in_task_files(
            [p for p in paths if _industry_of(p) == industry])
    return out


def _industry_of(task_path: Path) -> str:
    return task_path.parent.parent.name  # tasks/<industry>/<task>/task.json


def _names_in_task_files(paths: list[Path]) -> dict[str, str]:
    """Category code -> name from the task files in the folders of these tasks (their metadata)."""
    import json

    out: dict[str, str] = {}
    for folder in {p.parent.parent for p in paths}:
        for task in sorted(folder.glob("*/task.json")):
            try:
                meta = json.loads(task.read_text()).get("metadata") or {}
            except (OSError, ValueError):
                continue
            code = meta.get("category_slug") or task.parent.name.split("-")[0]
            if isinstance(meta.get("category"), str):
                out.setdefault(code, meta["category"])
    return out


def task_paths(run: Any) -> list[Path]:
    """The task file of one saved attempt per industry (a trajectory names its task's path): where to look
    for the run's packs (pack_folders), as its report looks."""
    import json

    run_dir = run.path
    out: list[Path] = []
    for industry in sorted(p for p in (run_dir / "trajectories").glob("*") if p.is_dir()):
        first = next(iter(sorted(industry.glob("*/attempt-*.json"))), None)
        if first is None:
            continue
        try:
            path = (json.loads(first.read_text()).get("task") or {}).get("path")
        except (OSError, ValueError):
            continue
        if isinstance(path, str):
            out.append(Path(path))
    return out


def parse(text: str, where: Known) -> Scope:
    """The scope written as `text` (parts joined by "/"); ScopeError naming what the runs played."""
    text = (text or "").strip()
    if text.lower() in (ALL, ALL_LABEL, ""):
        return Scope()
    found: dict[str, str] = {}
    for part in text.split("/"):
        part = part.strip()
        for field, choices in (("industry", where.industries), ("category", where.categories),
                               ("difficulty", where.difficulties)):
            match = next((c for c in choices if c.lower() == part.lower()), None)
            if match is not None:
                if field in found:
                    raise ScopeError(f"scope {text!r}: names two {field} values ({found[field]}, {match})")
                found[field] = match
                break
        else:
            raise ScopeError(f"scope {text!r}: {part!r} is not an industry, category or difficulty of these runs "
                             f"(industries: {', '.join(where.industries) or 'none'}; categories: "
                             f"{', '.join(where.categories) or 'none'}; difficulties: "
                             f"{', '.join(where.difficulties) or 'none'}; or 'all')")
    return Scope(**found)


@dataclass(frozen=True)
class Measure:
    """A model's figures over one scope."""

    tasks: int
    attempts: int  # scored
    passes: int
    pass_at_1: Any  # leaderboard.Figure
    pass_k: Any


def measure(attempts: list[dict[str, Any]], k: int, scope: Scope, figure) -> Measure | None:
    """pass@1 and pass^k with their 95% intervals over the attempts the scope holds (None: it holds none of
    this run's tasks); `figure(estimate, interval)` builds the leaderboard's Figure."""
    counts = task_counts(a for a in attempts if scope.holds(a))
    counts = {i: {t: nc for t, nc in tasks.items() if nc[0] > 0} for i, tasks in counts.items()}
    counts = {i: tasks for i, tasks in counts.items() if tasks}
    if not counts:
        return None
    overall = bootstrap_counts(counts, k).overall
    n = sum(nc[0] for tasks in counts.values() for nc in tasks.values())
    c = sum(nc[1] for tasks in counts.values() for nc in tasks.values())

    def fig(interval):
        return figure(None, None) if interval is None else figure(interval.estimate, interval.to_json())

    return Measure(overall.tasks, n, c, fig(overall.pass_at_1), fig(overall.pass_k))
