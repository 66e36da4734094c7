"""Run-level figures as `<testsuite>` properties of the JUnit XML, for CI dashboards.

`record_testsuite_property` does nothing under xdist (it runs on workers, and only the controller
writes the XML), so the controller hands them to pytest's LogXML directly, before LogXML writes the
file in its own `pytest_sessionfinish`. pytest has no public handle on LogXML: we read it from the
config stash under pytest's key, and write nothing when that key is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_callm.scoring.metrics import GroupScore, Summary
from pytest_callm.scoring.stats import GroupIntervals, Interval

PREFIX = "callm_"


def _fraction(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _figures(name: str, g: GroupScore, iv: GroupIntervals | None, k: int) -> list[tuple[str, str]]:
    """pass@1 and pass^k of one scope (fractions 0..1), each with its 95% interval."""

    def bounds(label: str, interval: Interval | None) -> list[tuple[str, str]]:
        return [(f"{name}{label}_ci_low", _fraction(interval.low if interval else None)),
                (f"{name}{label}_ci_high", _fraction(interval.high if interval else None))]

    return ([(f"{name}tasks", str(g.tasks)), (f"{name}attempts_scored", str(g.attempts)),
             (f"{name}pass_at_1", _fraction(g.pass_at_1))] + bounds("pass_at_1", iv.pass_at_1 if iv else None)
            + [(f"{name}pass_hat_{k}", _fraction(g.pass_k))] + bounds(f"pass_hat_{k}", iv.pass_k if iv else None))


def suite_properties(summary: Summary, *, model: str, caller: str, run_dir: Path,
                     report_page: Path | None) -> list[tuple[str, str]]:
    """The run's model, caller, k, figures across industries and per industry, and where it was saved.

    Names: `callm_pass_at_1`, `callm_pass_hat_5`, `callm_pass_at_1_ci_low`, ... across industries, and
    `callm_<industry>_pass_at_1`, ... per industry; fractions with four decimals, `n/a` when undefined.
    """
    k = summary.k
    iv = summary.intervals
    props = [(f"{PREFIX}model", model), (f"{PREFIX}caller", caller), (f"{PREFIX}k", str(k))]
    if summary.overall is not None:
        props += _figures(PREFIX, summary.overall, iv.overall if iv else None, k)
    props.append((f"{PREFIX}attempts_not_scored", str(summary.unscored)))
    for industry, g in summary.industries.items():
        props += _figures(f"{PREFIX}{industry}_", g, iv.industries.get(industry) if iv else None, k)
    props.append((f"{PREFIX}run_dir", str(run_dir)))
    if report_page is not None:
        props.append((f"{PREFIX}report_html", str(report_page)))
    return props


def log_xml(config: pytest.Config) -> Any | None:
    """pytest's JUnit writer of this run, or None (no --junitxml, an xdist worker, or a pytest without it)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return None
    return config.stash.get(xml_key, None)


def add_suite_properties(config: pytest.Config, props: list[tuple[str, str]]) -> bool:
    xml = log_xml(config)
    if xml is None:
        return False
    for name, value in props:
        xml.add_global_property(name, value)
    return True


class JUnitSuiteProperties:
    """Controller-side plugin: adds the run's figures to the JUnit XML before pytest writes it."""

    def __init__(self, state: Any):
        self.state = state  # the plugin's CallmState: results, settings, run directory

    @pytest.hookimpl(tryfirst=True)  # before LogXML.pytest_sessionfinish writes the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state = self.state
        if not state.writes_report() or log_xml(state.config) is None:
            return
        from pytest_callm.report.links import REPORT_PAGE
        from pytest_callm.scoring.metrics import summarize

        summary = summarize(state.results, state.settings.k)
        add_suite_properties(state.config, suite_properties(
            summary, model=state.settings.model or "?", caller=state.caller_name(),
            run_dir=state.run_dir.path, report_page=state.run_dir.path / REPORT_PAGE))
