"""The end-of-run table, rendered with rich into pytest's terminal output."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from .cost import UsageGroup
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


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _tokens(n: int) -> str:
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
        ("cost", lambda g: _money(g.cost_usd)),
        ("cost per call", lambda g: _money(g.cost_per_call)),
        ("estimated hours", lambda g: f"{g.est_hours:.2f}"),
        ("cost per hour", lambda g: _money(g.cost_per_hour)),
    ]
    for label, cell in rows:
        table.add_row(label, *(cell(g) for g in columns))
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=color, color_system="auto" if color else None)
    console.print(f"CALLM latency, tokens and cost: model {model}", soft_wrap=True)
    console.print(table)
    if total is not None:
        priced = "the model config's list prices" if total.cost_usd is not None else \
            "none: the model config has no prices"
        console.print(f"TTFT: median time to first token during the run, concurrency included (--callm-latency "
                      f"replays requests one at a time). Cost: {priced}. Hours: estimated at 0.605 s per word "
                      "spoken by either side.", soft_wrap=True)
    return out.getvalue()
