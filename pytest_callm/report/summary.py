"""The end-of-run table, rendered with rich into pytest's terminal output."""

from __future__ import annotations

import io

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from pytest_callm.scoring.cost import UsageGroup
from pytest_callm.scoring.metrics import GroupScore, Summary
from pytest_callm.scoring.stats import GroupIntervals, Interval


def pct(value: float | None, partial_mark: str = "") -> str:
    return f"{value * 100:.1f}%" if value is not None else f"n/a{partial_mark}"


def ci(interval: Interval | None) -> str:
    """`[63.3, 76.7]`: an interval's bounds in percent."""
    return f"[{interval.low * 100:.1f}, {interval.high * 100:.1f}]" if interval is not None else "n/a"


def _row(table: Table, g: GroupScore, k_mark: str, indent: str = "", style: str | None = None,
         intervals: GroupIntervals | None = None, with_ci: bool = False) -> None:
    cells = [indent + g.label, str(g.tasks), str(g.attempts), str(g.passes), pct(g.pass_at_1),
             pct(g.pass_k, k_mark if g.short_tasks else "")]
    if with_ci:  # industry and all-industries rows have intervals; category and difficulty rows do not
        cells[5:5] = [ci(intervals.pass_at_1) if intervals else ""]
        cells.append(ci(intervals.pass_k) if intervals else "")
    table.add_row(*cells, style=style)


def _results_table(summary: Summary, model: str, mark: str, with_ci: bool, partial: str | None = None) -> Table:
    k = summary.k
    iv = summary.intervals
    title = f"CALLM results{' (PARTIAL)' if partial else ''}: model {model}, k = {k}"  # short: never wrapped
    table = Table(title=title, title_justify="left", expand=False)
    columns = [("scope", "left"), ("tasks", "right"), ("attempts", "right"), ("passed", "right"),
               ("pass@1", "right"), (f"pass^{k}", "right")]
    if with_ci:
        columns[5:5] = [("95% CI", "right")]
        columns.append(("95% CI", "right"))
    for col, justify in columns:
        table.add_column(col, justify=justify, no_wrap=col == "95% CI")
    for industry, g in summary.industries.items():
        _row(table, g, mark, style="bold", intervals=iv.industries.get(industry) if iv else None, with_ci=with_ci)
        for (ind, _), cg in summary.categories.items():
            if ind == industry:
                _row(table, cg, mark, indent="  category ", with_ci=with_ci)
        for (ind, _), dg in summary.difficulties.items():
            if ind == industry:
                _row(table, dg, mark, indent="  difficulty ", with_ci=with_ci)
        table.add_section()
    if summary.overall and len(summary.industries) > 1:
        _row(table, summary.overall, mark, style="bold", intervals=iv.overall if iv else None, with_ci=with_ci)
    return table


def _interval_table(summary: Summary, mark: str) -> Table:
    """The intervals on their own, for a terminal too narrow to add them to the results table."""
    iv = summary.intervals
    table = Table(expand=False)
    for col, justify in (("scope", "left"), ("pass@1", "right"), ("95% CI", "right"),
                         (f"pass^{summary.k}", "right"), ("95% CI", "right")):
        table.add_column(col, justify=justify)
    rows = [(g, iv.industries.get(name)) for name, g in summary.industries.items()]
    if summary.overall and len(summary.industries) > 1:
        rows.append((summary.overall, iv.overall))
    for g, gi in rows:
        table.add_row(g.label, pct(g.pass_at_1), ci(gi.pass_at_1 if gi else None),
                      pct(g.pass_k, mark if g.short_tasks else ""), ci(gi.pass_k if gi else None))
    return table


def render(summary: Summary, model: str, width: int = 100, color: bool = False, partial: str | None = None) -> str:
    """The results table and its footnotes; `partial` (why the run stopped early) marks every figure
    as covering only the attempts played so far."""
    mark = "*"
    iv = summary.intervals
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="auto" if color else None)
    table = _results_table(summary, model, mark, with_ci=iv is not None, partial=partial)
    if iv is not None and Measurement.get(console, console.options.update_width(10_000), table).maximum > width:
        console.print(_results_table(summary, model, mark, with_ci=False, partial=partial))
        console.print(_interval_table(summary, mark))
    else:
        console.print(table)
    for line in footnotes(summary, mark):
        console.print(line)
    if partial:  # lines under 80 columns, as the footnotes
        console.print(f"PARTIAL figures: {partial}.")
        console.print("  They count only the attempts played before the run stopped; tasks and")
        console.print("  industries not reached are missing. Resume the run to finish them.")
    return out.getvalue()


def footnotes(summary: Summary, mark: str) -> list[str]:
    """The lines under the table: one statement per line, each under 80 columns, so that a terminal
    of usual width never breaks a sentence; the mean across industries is explained only when shown."""
    k, iv = summary.k, summary.intervals
    scored = sum(t.n for t in summary.tasks.values())
    lines = [f"scored attempts: {scored}; gate failures: "
             + ", ".join(f"{g} {n}" for g, n in summary.gate_failures.items())]
    gate = summary.most_failed_gate()
    if gate:
        lines.append(f"most failed gate: {gate}")
    paper = summary.paper.overall if summary.paper else None
    if paper is not None:
        figures = f"pass@1 {pct(paper.pass_at_1)}, pass^{k} {pct(paper.pass_k)}"
        lines.append(f"the paper's three gates alone (no words read): {figures}")
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.errors.items()))
    lines.append(f"attempts not scored (in no denominator): {summary.unscored}" + (f" ({kinds})" if kinds else ""))
    if summary.rerun:
        lines.append(f"attempts played again after a harness or model-server fault: {summary.rerun}")
        lines.append("  (each scored on the run that finished; why: rerun_because in report.json)")
    if summary.cut:
        lines.append(f"attempts in which the model asked past a bound: {summary.cut}")
        lines.append("  (refused as the model's failure, scored as they stood; cuts in report.json)")
    if iv is not None:
        lines.append(f"95% CI: bootstrap over tasks ({iv.resamples:,} resamples, seed {iv.seed}).")
    if len(summary.industries) > 1:
        lines.append("all industries: the unweighted mean of the industries.")
    if summary.partial:
        short = sum(1 for t in summary.tasks.values() if t.n < k)
        lines.append(f"{mark} partial run: {short} of {len(summary.tasks)} tasks have fewer than {k} scored attempts,")
        lines.append(f"  so pass^{k} is not computed for them (run all attempts, or set --callm-k).")
    return lines


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _cost(value: float | None, group: UsageGroup) -> str:
    return "not reported" if value is None and group.requests_without_usage else _money(value)


def _tokens(n: int | None) -> str:
    if n is None:
        return "not reported"
    return f"{n / 1e6:.2f}M" if n >= 10_000_000 else f"{n:,}"


def render_usage(groups: dict[str, UsageGroup], total: UsageGroup | None, model: str | None, width: int = 100,
                 color: bool = False) -> str:
    """Latency (as measured during the run), tokens and cost: one column per industry, one row per figure."""
    columns = list(groups.values()) + ([total] if total is not None and len(groups) > 1 else [])
    table = Table(expand=False)
    table.add_column("per industry", justify="left")
    for g in columns:
        table.add_column(g.label, justify="right", style="bold" if g is total else None)
    rows = [
        ("calls", lambda g: str(g.calls)),
        ("requests", lambda g: str(g.requests)),
        ("median TTFT", lambda g: f"{g.ttft_median_ms:.0f} ms" if g.ttft_median_ms is not None else "n/a"),
        ("input tokens", lambda g: _tokens(g.input_tokens)),
        ("cached input tokens", lambda g: _tokens(g.cached_input_tokens)),
        ("output tokens", lambda g: _tokens(g.output_tokens)),
        ("  of which reasoning", lambda g: _tokens(g.reasoning_tokens)),
        ("cost", lambda g: _cost(g.cost_usd, g)),
        ("cost per call", lambda g: _cost(g.cost_per_call, g)),
        ("estimated hours", lambda g: f"{g.est_hours:.2f}"),
        ("cost per hour", lambda g: _cost(g.cost_per_hour, g)),
    ]
    for label, cell in rows:
        table.add_row(label, *(cell(g) for g in columns))
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="auto" if color else None)
    console.print(f"CALLM latency, tokens and cost: model {model}", soft_wrap=True)
    console.print(table)
    if total is not None:
        if total.requests_without_usage:
            console.print(f"Usage not reported by the server for {total.requests_without_usage:,} of "
                          f"{total.requests:,} requests: their tokens are not counted, and no cost is given.",
                          soft_wrap=True)
        priced = "the model config's list prices" if total.cost_usd is not None else \
            "not computed: usage not reported" if total.requests_without_usage else \
            "none: the model config has no prices"
        console.print(f"TTFT: median time to first token during the run, concurrency included (--callm-latency "
                      f"replays requests one at a time). Cost: {priced}. Hours: estimated at 0.605 s per word "
                      "spoken by either side.", soft_wrap=True)
    return out.getvalue()
