"""The end-of-run table, rendered with rich into pytest's terminal output."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from .metrics import GroupScore, Summary


def pct(value: float | None, partial_mark: str = "") -> str:
    return f"{value * 100:.1f}%" if value is not None else f"n/a{partial_mark}"


def _row(table: Table, g: GroupScore, k_mark: str, indent: str = "", style: str | None = None) -> None:
    table.add_row(indent + g.label, str(g.tasks), str(g.attempts), str(g.passes), pct(g.pass_at_1),
                  pct(g.pass_k, k_mark if g.short_tasks else ""), style=style)


def render(summary: Summary, model: str, width: int = 100, color: bool = False) -> str:
    k = summary.k
    mark = "*"
    table = Table(title=f"CALLM results: model {model}, k = {k}", title_justify="left", expand=False)
    for col, justify in (("scope", "left"), ("tasks", "right"), ("attempts", "right"), ("passed", "right"),
                         ("pass@1", "right"), (f"pass^{k}", "right")):
        table.add_column(col, justify=justify)
    for industry, g in summary.industries.items():
        _row(table, g, mark, style="bold")
        for (ind, _), cg in summary.categories.items():
            if ind == industry:
                _row(table, cg, mark, indent="  category ")
        for (ind, _), dg in summary.difficulties.items():
            if ind == industry:
                _row(table, dg, mark, indent="  difficulty ")
        table.add_section()
    if summary.overall and len(summary.industries) > 1:
        _row(table, summary.overall, mark, style="bold")

    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="auto" if color else None)
    console.print(table)
    failed = summary.gate_failures
    gate = summary.most_failed_gate()
    scored = sum(t.n for t in summary.tasks.values())
    console.print(f"scored attempts: {scored}; gate failures: "
                  + ", ".join(f"{g} {n}" for g, n in failed.items())
                  + (f"; most failed gate: {gate}" if gate else ""))
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.errors.items()))
    console.print(f"attempts not scored (in no denominator): {summary.unscored}" + (f" ({kinds})" if kinds else ""))
    if summary.partial:
        short = sum(1 for t in summary.tasks.values() if t.n < k)
        console.print(f"{mark} partial run: {short} of {len(summary.tasks)} tasks have fewer than {k} scored "
                      f"attempts, so pass^{k} is not computed for them (run all attempts, or set --callm-k).")
    return out.getvalue()
