"""Comparing saved runs: `callm compare DIR DIR... [--force]`.

The first run directory is the baseline; every other run is set against it:

- pass@1 and pass^k per industry and across industries, one row per run, with the 95% bootstrap
  intervals of each report (or, for a report that has none, computed here from its attempts with
  stats.py when that module is present), and the difference from the baseline in percentage points;
- paired per-task differences: the tasks whose pass@1 or pass^k changed, with c/n of both runs, and
  the tasks that flipped from passing every attempt to not, and back;
- median time to first token and cost (per call, per hour) side by side, for runs that recorded usage.

Runs scored on another task set or by another verifier measure different things: comparing them is
refused (exit code 2) unless `--force`, which compares anyway under a warning line. Other differences
(model, configs, packs and prompts, line, attempts) are what one compares runs for: they are noted.
Everything is printed in a fixed order (industries and tasks sorted, runs as given), so the same
runs give the same text.
"""

from __future__ import annotations

import argparse
import importlib
import io
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from pytest_callm.saved.reader import RunReadError, SavedRun, read_run
from pytest_callm.saved.rundir import result_differences

OVERALL = "all industries"
REFUSED_HASHES = (("tasks", "task-set hash"), ("verifier", "verifier hash"))
EXIT_REFUSED = 2


class CompareError(Exception):
    """A run directory that cannot be compared; the message names it."""


@dataclass
class Run(SavedRun):
    """A saved run as compared: a label, and its intervals (from the report, or computed here)."""

    label: str = ""
    intervals: dict[str, Any] | None = None  # Intervals.to_json() shape (stats.py)
    intervals_source: str | None = None  # "report", "computed" or None

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        return self.summary.get("tasks") or {}

    def industries(self) -> list[str]:
        return sorted(self.summary.get("industries") or {})

    def group(self, scope: str) -> dict[str, Any] | None:
        if scope == OVERALL:
            return self.summary.get("overall")
        return (self.summary.get("industries") or {}).get(scope)

    def interval(self, scope: str, figure: str) -> dict[str, float] | None:
        if not self.intervals:
            return None
        g = self.intervals.get("overall") if scope == OVERALL else (self.intervals.get("industries") or {}).get(scope)
        return (g or {}).get(figure)

    def usage(self, scope: str) -> dict[str, Any] | None:
        usage = self.report.get("usage")
        if not usage:
            return None
        return usage.get("total") if scope == OVERALL else (usage.get("industries") or {}).get(scope)


# Loading --------------------------------------------------------------------------------------


def load_run(path: Path | str, label: str | None = None) -> Run:
    """A run directory's manifest and report, read by the one run reader (saved/reader.py);
    CompareError, worded as that reader words it, when the folder is not a finished run."""
    path = Path(path)
    try:
        saved = read_run(path)
    except RunReadError as e:
        raise CompareError(str(e)) from None
    run = Run(path, saved.manifest, saved.report, saved.shard, label=label or path.name or str(path))
    run.intervals, run.intervals_source = _intervals(run)
    return run


def _intervals(run: Run) -> tuple[dict[str, Any] | None, str | None]:
    """The report's bootstrap intervals; else computed from its attempts with stats.py, if present."""
    stored = run.summary.get("intervals")
    if isinstance(stored, dict):
        return stored, "report"
    try:  # another engineer's module: absent in older checkouts
        stats = importlib.import_module("pytest_callm.scoring.stats")
    except ImportError:
        return None, None
    bootstrap = getattr(stats, "bootstrap", None)
    attempts = run.report.get("attempts")
    if bootstrap is None or not attempts or not run.k:
        return None, None
    return bootstrap(attempts, run.k).to_json(), "computed"


def _labels(paths: list[Path]) -> list[str]:
    """Short names: the folder's name, with as many parent folders as it takes to tell runs apart."""
    parts = [p.resolve().parts for p in paths]
    depth = 1
    while depth < max(len(p) for p in parts):
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
        depth += 1
    labels = ["/".join(p[-depth:]) for p in parts]
    seen: dict[str, int] = {}
    out = []
    for label in labels:  # the same folder given twice
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def load_runs(paths: list[Path | str]) -> list[Run]:
    paths = [Path(p) for p in paths]
    return [load_run(p, label) for p, label in zip(paths, _labels(paths))]


# Comparability --------------------------------------------------------------------------------


def _short(value: Any) -> str:
    return "none recorded" if value is None else str(value)[:12]


def conflicts(runs: list[Run]) -> list[str]:
    """One sentence per refused hash (task set, verifier) that is not the same in every run."""
    out = []
    for key, name in REFUSED_HASHES:
        by_value: dict[Any, list[str]] = {}
        for run in runs:
            by_value.setdefault(run.hashes.get(key), []).append(str(run.path))
        if len(by_value) > 1:
            sides = "; ".join(f"{', '.join(dirs)} {'has' if len(dirs) == 1 else 'have'} {_short(value)}"
                              for value, dirs in by_value.items())
            out.append(f"the {name} (hashes.{key}) differs between the runs: {sides}")
    return out


def notes(runs: list[Run]) -> list[str]:
    """Other differences from the baseline's manifest: expected when comparing models, but named."""
    base = runs[0]
    refused = {f"hashes.{key}" for key, _ in REFUSED_HASHES}
    out = []
    for run in runs[1:]:
        changed = [d for d in result_differences(base.comparable, run.comparable) if d not in refused]
        if run.k != base.k:
            changed.append(f"k ({run.k} vs {base.k})")
        if changed:
            out.append(f"{run.label} differs from {base.label} in: {', '.join(changed)}")
    return out


# Rendering ------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return f"{value * 100:.1f}%" if value is not None else "n/a"


def _ci(interval: dict[str, float] | None) -> str:
    return f"[{interval['low'] * 100:.1f}, {interval['high'] * 100:.1f}]" if interval else "n/a"


def _delta_pp(value: float | None, base: float | None) -> str:
    if value is None or base is None:
        return "n/a"
    d = round((value - base) * 100, 1)
    return "0.0" if d == 0 else f"{d:+.1f}"


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _ms(value: float | None) -> str:
    return f"{value:.0f} ms" if value is not None else "n/a"


def _k_label(runs: list[Run]) -> str:
    ks = {run.k for run in runs}
    return f"pass^{ks.pop()}" if len(ks) == 1 else "pass^k"


def _scopes(runs: list[Run]) -> list[str]:
    return sorted({i for run in runs for i in run.industries()}) + [OVERALL]


def _fits(console: Console, table: Table, width: int) -> bool:
    return Measurement.get(console, console.options.update_width(10_000), table).maximum <= width


def _columns(table: Table, columns: list[tuple[str, str, bool]]) -> None:
    """(header, justify, wraps): names and labels may wrap on a narrow terminal; single figures never
    do (a figure cut short would read as another number), so their headers are kept short."""
    for col, justify, wraps in columns:
        table.add_column(col, justify=justify, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis")


def _results_table(runs: list[Run], figures: tuple[str, ...] = ("pass_at_1", "pass_k")) -> Table:
    """One section per scope, one row per run; `figures` picks pass@1, pass^k or both."""
    base = runs[0]
    passk = _k_label(runs)
    names = {"pass_at_1": "pass@1", "pass_k": passk}
    table = Table(title=f"{' and '.join(names[f] for f in figures)} (Δ: percentage points against "
                        f"{escape(base.label)})",
                  title_justify="left", expand=False)
    columns = [("scope", "left", True), ("run", "left", True), ("passed", "right", False)]
    for f in figures:
        columns += [(names[f], "right", False), ("95% CI", "right", False), ("Δ", "right", False)]
    _columns(table, columns)
    for scope in _scopes(runs):
        b = base.group(scope) or {}
        for i, run in enumerate(runs):
            g = run.group(scope)
            name = escape(scope) if i == 0 else ""
            style = "bold" if scope == OVERALL else None
            if g is None:
                table.add_row(name, escape(run.label), "not in run", *[""] * (3 * len(figures)), style=style)
                continue
            cells = [name, escape(run.label), f"{g.get('passes', 0)}/{g.get('attempts', 0)}"]
            for f in figures:
                cells += [_pct(g.get(f)), _ci(run.interval(scope, f)), "" if i == 0 else _delta_pp(g.get(f), b.get(f))]
            table.add_row(*cells, style=style)
        table.add_section()
    return table


@dataclass
class TaskChange:
    task: str
    base: dict[str, Any]
    other: dict[str, Any]
    flip: str  # "lost all-pass", "gained all-pass" or ""


def _all_pass(t: dict[str, Any]) -> bool | None:
    return None if not t.get("n") else t.get("c") == t.get("n")


def task_changes(base: Run, other: Run) -> tuple[list[TaskChange], list[str], list[str]]:
    """Tasks in both runs whose pass@1 or pass^k changed (sorted), and the tasks only in one run."""
    changes = []
    for key in sorted(set(base.tasks) & set(other.tasks)):
        a, b = base.tasks[key], other.tasks[key]
        if (a.get("pass_at_1"), a.get("pass_k")) == (b.get("pass_at_1"), b.get("pass_k")):
            continue
        before, after = _all_pass(a), _all_pass(b)
        flip = ("lost all-pass" if before and after is False else
                "gained all-pass" if before is False and after else "")
        changes.append(TaskChange(key, a, b, flip))
    return changes, sorted(set(base.tasks) - set(other.tasks)), sorted(set(other.tasks) - set(base.tasks))


def _cn(t: dict[str, Any]) -> str:
    errors = t.get("errors") or 0
    return f"{t.get('c', 0)}/{t.get('n', 0)}" + (f" ({errors} unscored)" if errors else "")


def _names(keys: list[str]) -> str:
    return ", ".join(keys) if keys else "none"


def _task_table(title: str, base: Run, other: Run, changes: list[TaskChange], passk: str, kind: bool) -> Table:
    table = Table(title=escape(title), title_justify="left", expand=False)
    columns = [("task", "left", True)] + ([("category", "left", True), ("difficulty", "left", True)] if kind else [])
    _columns(table, columns + [(f"c/n {escape(base.label)}", "right", True),
                               (f"c/n {escape(other.label)}", "right", True),
                               ("pass@1", "right", True), (passk, "right", True), ("flip", "left", True)])
    for ch in changes:
        table.add_row(
            escape(ch.task),
            *([escape(str(ch.other.get("category", ""))), escape(str(ch.other.get("difficulty", "")))] if kind else []),
            _cn(ch.base), _cn(ch.other),
            f"{_pct(ch.base.get('pass_at_1'))} → {_pct(ch.other.get('pass_at_1'))}",
            f"{_pct(ch.base.get('pass_k'))} → {_pct(ch.other.get('pass_k'))}",
            ch.flip, style="red" if ch.flip == "lost all-pass" else "green" if ch.flip else None)
    return table


def _task_section(console: Console, base: Run, other: Run, passk: str) -> None:
    changes, only_base, only_other = task_changes(base, other)
    common = len(set(base.tasks) & set(other.tasks))
    title = f"Per-task differences: {other.label} against {base.label}"
    if not changes:
        console.print(f"{title}: no task changed ({common} tasks in both); no flips.", soft_wrap=True, markup=False)
    else:
        table = _task_table(title, base, other, changes, passk, kind=True)
        if not _fits(console, table, console.width):  # a narrow terminal: without category and difficulty
            table = _task_table(title, base, other, changes, passk, kind=False)
        console.print(table)
        down = sum(1 for ch in changes if (ch.other.get("pass_at_1") or 0) < (ch.base.get("pass_at_1") or 0))
        up = sum(1 for ch in changes if (ch.other.get("pass_at_1") or 0) > (ch.base.get("pass_at_1") or 0))
        console.print(f"{len(changes)} of {common} tasks changed: pass@1 up on {up}, down on {down}.",
                      soft_wrap=True, markup=False)
        lost = [ch.task for ch in changes if ch.flip == "lost all-pass"]
        gained = [ch.task for ch in changes if ch.flip == "gained all-pass"]
        console.print(f"flipped from all-pass to not ({len(lost)}): {_names(lost)}", soft_wrap=True, markup=False)
        console.print(f"flipped from not to all-pass ({len(gained)}): {_names(gained)}", soft_wrap=True, markup=False)
    for run, only in ((base, only_base), (other, only_other)):
        if only:
            console.print(f"tasks only in {run.label} ({len(only)}): {_names(only)}", soft_wrap=True, markup=False)


def _usage_table(runs: list[Run]) -> Table:
    base = runs[0]
    table = Table(title=f"Latency and cost (TTFT: median time to first token; Δ against {escape(base.label)})",
                  title_justify="left", expand=False)
    _columns(table, [("scope", "left", True), ("run", "left", True)]
             + [(col, "right", False) for col in ("calls", "TTFT", "Δ TTFT", "cost", "$/call", "$/hour")])
    scopes = sorted({i for run in runs for i in ((run.report.get("usage") or {}).get("industries") or {})})
    for scope in scopes + [OVERALL]:
        b = base.usage(scope) or {}
        for i, run in enumerate(runs):
            u = run.usage(scope)
            name = escape(scope) if i == 0 else ""
            style = "bold" if scope == OVERALL else None
            if u is None:
                table.add_row(name, escape(run.label), "no usage", "", "", "", "", "", style=style)
                continue
            ttft, bt = u.get("ttft_median_ms"), b.get("ttft_median_ms")
            dt = "" if i == 0 else ("n/a" if ttft is None or bt is None else f"{ttft - bt:+.0f} ms")
            table.add_row(name, escape(run.label), str(u.get("calls", 0)), _ms(ttft), dt, _money(u.get("cost_usd")),
                          _money(u.get("cost_per_call")), _money(u.get("cost_per_hour")), style=style)
        table.add_section()
    return table


def _interval_note(runs: list[Run]) -> str:
    by_source: dict[str | None, list[Run]] = {}
    for run in runs:
        by_source.setdefault(run.intervals_source, []).append(run)
    parts = []
    for source, group in by_source.items():
        names = ", ".join(r.label for r in group)
        if source is None:
            parts.append(f"none for {names} (the report has none and pytest_callm.scoring.stats is not available)")
            continue
        settings = sorted({(r.intervals.get("resamples"), r.intervals.get("seed")) for r in group})
        how = "; ".join(f"{n:,} resamples, seed {s}" if isinstance(n, int) else "settings not recorded"
                        for n, s in settings)
        where = "from the report" if source == "report" else "computed here from the report's attempts"
        parts.append(f"{where} for {names} ({how})")
    return "95% CI: percentile bootstrap over tasks; " + "; ".join(parts) + "."


def render(runs: list[Run], width: int = 120, color: bool = False, warnings: list[str] | None = None) -> str:
    if len(runs) < 2:
        raise ValueError("a comparison needs two runs or more")
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="auto" if color else None,
                      highlight=False)
    for w in warnings or []:
        console.print(f"WARNING: {w}", style="bold red", soft_wrap=True, markup=False)
    base = runs[0]
    console.print(f"CALLM comparison of {len(runs)} runs, baseline {base.label}", style="bold", soft_wrap=True,
                  markup=False)
    for run in runs:
        c = run.comparable
        rescored = f", rescored from {run.manifest['rescored_from']}" if run.manifest.get("rescored_from") else ""
        console.print(f"  {run.label}: {run.path} (model {run.model}, k = {run.k}, {c.get('attempts', '?')} "
                      f"attempts per task, line {line_name(c.get('line'))}{rescored})", soft_wrap=True, markup=False)
    for note in notes(runs):
        console.print(f"note: {note}", soft_wrap=True, markup=False)
    table = _results_table(runs)
    if _fits(console, table, width):
        console.print(table)
    else:  # a narrow terminal: pass@1 and pass^k one under the other
        console.print(_results_table(runs, ("pass_at_1",)))
        console.print(_results_table(runs, ("pass_k",)))
    console.print(_interval_note(runs), soft_wrap=True, markup=False)
    passk = _k_label(runs)
    for other in runs[1:]:
        console.print()
        _task_section(console, base, other, passk)
    console.print()
    if any(run.report.get("usage") for run in runs):
        console.print(_usage_table(runs))
        console.print("TTFT as measured during each run (its concurrency included); cost at the model config's "
                      "list prices; $/hour over hours estimated from the words spoken.", soft_wrap=True)
    else:
        console.print("Latency and cost: no run recorded usage (oracle runs make no model requests).",
                      soft_wrap=True)
    # rich pads titles to the table's width: no trailing blanks, so the text diffs cleanly
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


# Command --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="callm compare", description="Compare two or more run directories; the first is the baseline.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="DIR", help="run directories (--callm-out)")
    parser.add_argument("--force", action="store_true",
                        help="compare runs whose task-set or verifier hashes differ (with a warning)")
    return parser


def main(argv: list[str] | None = None, *, width: int | None = None, color: bool | None = None) -> int:
    """`callm compare DIR DIR... [--force]`: 0 when compared, 2 on an error or a refusal."""
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:  # --help, or a usage error (argparse has printed it)
        return e.code if isinstance(e.code, int) else 2
    if len(args.runs) < 2:
        print("callm compare: give two run directories or more (the first is the baseline)", file=sys.stderr)
        return 2
    try:
        runs = load_runs(args.runs)
    except CompareError as e:
        print(f"callm compare: {e}", file=sys.stderr)
        return 2
    problems = conflicts(runs)
    if problems and not args.force:
        print("callm compare: refused: " + "; ".join(problems)
              + ". Runs over other tasks or scored by another verifier are not comparable; "
              "pass --force to compare them anyway.", file=sys.stderr)
        return EXIT_REFUSED
    warnings = [f"{p}; compared anyway (--force), the figures may not be comparable" for p in problems]
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns
    if color is None:
        color = sys.stdout.isatty()
    sys.stdout.write(render(runs, width=width, color=color, warnings=warnings))
    return 0


if __name__ == "__main__":
    sys.exit(main())


def line_name(line) -> str:
    """The phone line of a run, from its manifest (a spec, or `{spec, profile_sha256, seed}`)."""
    if isinstance(line, dict):
        return str(line.get("spec", "?"))
    return str(line) if line else "?"
