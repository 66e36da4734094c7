"""`callm merge DIR... --out DIR`: join shard runs (`runs/merge.py` does the joining), then show the
merged run as a run shows itself: its figures, its report page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_callm.report.links import report_page_line
from pytest_callm.report.summary import ci, pct
from pytest_callm.saved.merge import MergeError, merge_runs
from pytest_callm.scoring.stats import Interval


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callm merge", description="join shard run directories "
                                     "(--callm-shard=I/N) into one run directory")
    parser.add_argument("dirs", nargs="+", type=Path, help="the run directories of every shard")
    parser.add_argument("--out", required=True, type=Path, help="the new run directory (must not exist or be empty)")
    parser.add_argument("--no-html", action="store_true", help="write no report.html")
    parser.add_argument("--industries", action="append", default=[], type=Path,
                        help="extra folder holding industry packs, for the handoff graphs of report.html")
    args = parser.parse_args(argv)
    try:
        report = merge_runs(args.dirs, args.out)
    except MergeError as e:
        print(f"callm merge: {e}", file=sys.stderr)
        return 2
    if not args.no_html:
        from pytest_callm.report.report_html import write_html_report

        write_html_report(args.out, args.industries or None)
    print(f"callm merge: {len(args.dirs)} shards, {len(report['attempts'])} attempts, merged into {args.out}")
    for line in figures(report["summary"]):
        print(line)
    print(f"callm merge: report {args.out / 'report.json'}")
    page = report_page_line(args.out, sys.stdout.isatty())
    if page:
        print(page)
    return 0


def figures(summary: dict[str, Any]) -> list[str]:
    """The merged run's pass@1 and pass^k per industry and across them, in percent with their 95%
    intervals, as the summary table of a run shows them."""
    k, iv = summary["k"], summary.get("intervals") or {}
    rows = [(name, g, (iv.get("industries") or {}).get(name)) for name, g in summary["industries"].items()]
    if summary.get("overall") and len(rows) > 1:
        rows.append(("all industries", summary["overall"], iv.get("overall")))

    def interval(gi: dict[str, Any] | None, key: str) -> str:
        bounds = (gi or {}).get(key)
        return ci(Interval(**bounds) if bounds else None)

    width = max(len(name) for name, *_ in rows) if rows else 0
    lines = [f"  {'scope':<{width}}  {'pass@1':>6}  {'95% CI':>14}  {f'pass^{k}':>6}  {'95% CI':>14}"]
    for name, g, gi in rows:
        lines.append(f"  {name:<{width}}  {pct(g['pass_at_1']):>6}  {interval(gi, 'pass_at_1'):>14}  "
                     f"{pct(g['pass_k']):>6}  {interval(gi, 'pass_k'):>14}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
