"""The `callm` section at the end of pytest's output: the run's figures, and what a stopped run says.

The lines come from the run (`session/run_session.py`); this writes them with pytest's terminal reporter,
on the process that gathered the results (the xdist controller, or the only process).
"""

from __future__ import annotations

import shutil

from pytest_callm.phone.error_profile import format_rates
from pytest_callm.report.links import report_page_line
from pytest_callm.report.summary import render, render_usage
from pytest_callm.session.run_session import RunSession
from pytest_callm.scoring.cost import usage_by_industry


def write_summary(run: RunSession, reporter, *, interrupted: bool, loops: list[str],
                  not_collected: list[str]) -> None:
    """`loops`: symbolic links not followed; `not_collected`: task files that failed collection."""
    for line in loops:
        reporter.write_line(f"callm: {line}", yellow=True)
    if not_collected:  # their tasks are in no figure: say so where the figures are
        reporter.write_line(f"callm: {len(not_collected)} task file(s) could not be collected and "
                            "are in no figure: " + ", ".join(not_collected), red=True, bold=True)
    stopped = run.interrupted_line() if interrupted else None
    if not run.results:
        if run.write_failure is not None:
            reporter.write_line(f"callm: {run.write_failure_line()}", red=True, bold=True)
        elif stopped:
            reporter.write_line(f"callm: {stopped}", red=True, bold=True)
        return
    reporter.section("callm")
    width = shutil.get_terminal_size().columns
    partial = f"interrupted after {len(run.results)} of {run.total} items" if stopped else None
    reporter.write(render(run.summary(), run.settings.model or "?", width=width, color=reporter.hasmarkup,
                          partial=partial))
    groups, total = usage_by_industry(run.results)
    if groups:
        reporter.write(render_usage(groups, total, run.settings.model, width=width, color=reporter.hasmarkup))
    rates = run.line_rates(run.results)
    if rates is not None:
        reporter.write(format_rates(rates) + "\n")
    if run.latency_report is not None:
        reporter.write(run.latency_report.describe())
    if run.models.same_model_warning:
        reporter.write_line(f"WARNING: {run.models.same_model_warning}", red=True, bold=True)
    if run.release_check is not None:
        reporter.write_line(run.release_check.describe(), green=run.release_check.comparable,
                            yellow=not run.release_check.comparable)
    if run.started and run.write_failure is None:  # else the line below says what is saved, and how to go on
        reporter.write_line(run.saved_line())
        page = report_page_line(run.run_dir.path, reporter.hasmarkup)
        if page:
            reporter.write_line(page)
    if run.page_failure:
        reporter.write_line(f"callm: {run.page_failure}", red=True)
    if run.write_failure is not None:  # one line: the folder, what is saved, how to go on
        reporter.write_line(f"callm: {run.write_failure_line()}", red=True, bold=True)
    elif stopped:  # last, right above pytest's KeyboardInterrupt banner
        reporter.write_line(f"callm: {stopped}", red=True, bold=True)
