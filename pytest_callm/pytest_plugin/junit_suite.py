"""Run-level figures as `<testsuite>` properties of the JUnit XML, for CI dashboards, and each
attempt's as its `<testcase>` properties.

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


USAGE_PROPERTIES = ("requests", "ttft_median_ms", "input_tokens", "cached_input_tokens", "output_tokens",
                    "reasoning_tokens", "cost_usd", "spoken_words", "est_duration_s", "reruns")


def usage_properties(usage: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """JUnit properties of one attempt's timing, tokens and cost (none for the oracle)."""
    if not usage:
        return []
    return [(f"callm_{key}", usage[key]) for key in USAGE_PROPERTIES if usage.get(key) is not None]


def attempt_properties(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """JUnit properties of one attempt (`collect.result_payload`): where, verdict, gates, error, usage."""
    return ([("callm_industry", payload["industry"]), ("callm_task", payload["task_id"]),
             ("callm_category", payload["category"]), ("callm_difficulty", payload["difficulty"]),
             ("callm_attempt", payload["attempt"]), ("callm_passed", payload["passed"])]
            + [(f"callm_gate_{g}", ok) for g, ok in payload["gates"].items()]
            + ([("callm_error", payload["error"])] if "error" in payload else [])
            + usage_properties(payload.get("usage")))


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
        self.state = state  # the plugin's CallmState: its config and run

    @pytest.hookimpl(tryfirst=True)  # before LogXML.pytest_sessionfinish writes the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        run = self.state.run
        if not run.writes_report() or log_xml(self.state.config) is None:
            return
        from pytest_callm.report.links import REPORT_PAGE
        from pytest_callm.scoring.metrics import summarize

        summary = summarize(run.results, run.settings.k)
        add_suite_properties(self.state.config, suite_properties(
            summary, model=run.settings.model or "?", caller=run.models.caller_name(),
            run_dir=run.run_dir.path, report_page=run.run_dir.path / REPORT_PAGE))
