"""Each call of a small run shown as it plays: who said what, each tool call, and how the call ended.

A run of a real model under the progress lines' threshold (a run of 50 attempts or more prints a line
at every tenth instead) said nothing until its first call ended: minutes of silence with a local model
(`smollm2-local`: 95 s to 6 minutes a call on 2 cores). Here every turn prints the moment the engine
records it (`engine.Watch`), from the runtime's thread, past pytest's output capture as its live log
does (`global_and_fixture_disabled`).

Shown only where the lines can be read in order: in the process that owns the terminal (not an xdist
worker), one call at a time (`--callm-concurrency=1`, as a config with `calls_in_flight = 1` sets),
a real model (the oracle's calls take milliseconds), and not under `-q`.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext

import pytest

from pytest_callm.call.trajectory import Trajectory
from pytest_callm.model import redact
from pytest_callm.session.run_session import PROGRESS_MIN_ATTEMPTS  # from here progress lines, not calls

CLIP = 100  # characters of a turn or of a call's arguments shown


def clip(text: str, n: int = CLIP) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


class LiveCalls:
    def __init__(self, config: pytest.Config):
        self.capture = config.pluginmanager.get_plugin("capturemanager")
        self.reporter = config.pluginmanager.get_plugin("terminalreporter")
        self.shown: dict[str, tuple[int, int]] = {}  # call id -> turns and tool calls shown so far
        self.lock = threading.Lock()

    def lines(self, trajectory: Trajectory) -> list[str]:
        """What is new in this call since it was last shown, in the order it happened."""
        first = trajectory.call_id not in self.shown
        turns, calls = self.shown.get(trajectory.call_id, (0, 0))
        head = f"callm: {trajectory.industry}/{trajectory.task_id} attempt {trajectory.attempt}"
        events = [(t.at_ms, f"{'caller' if t.role == 'caller' else 'agent'}"
                            f"{f' ({t.agent})' if t.role != 'caller' and t.agent else ''}: {clip(t.said)}")
                  for t in trajectory.transcript[turns:]]
        events += [(c.started_ms, f"{c.agent} calls {c.name}({clip(c.raw_arguments, 60)}): "
                                  f"{'refused' if c.refused else c.status}") for c in trajectory.tool_calls[calls:]]
        out = [f"{head}: playing" + (f" (rerun {trajectory.reruns})" if trajectory.reruns else "")] if first else []
        out += [f"{head} {at / 1000:6.1f} s  {what}" for at, what in sorted(events, key=lambda e: e[0])]
        if trajectory.end_reason:
            out.append(f"{head}: ended ({trajectory.end_reason}) after {trajectory.exchanges} exchanges, "
                       f"{trajectory.duration_ms / 1000:.1f} s")
            self.shown.pop(trajectory.call_id, None)
        else:
            self.shown[trajectory.call_id] = (len(trajectory.transcript), len(trajectory.tool_calls))
        return out

    def __call__(self, trajectory: Trajectory) -> None:
        with self.lock:
            lines = self.lines(trajectory)
            if not lines or self.reporter is None:
                return
            quiet = self.capture.global_and_fixture_disabled() if self.capture is not None else nullcontext()
            with quiet:
                self.reporter.ensure_newline()
                for line in lines:
                    self.reporter.write_line(redact.text(line))  # a key a model repeats is struck here too
                self.reporter.flush()  # now, while the terminal is ours: later, the capture would take it


def live_calls(config: pytest.Config, run) -> LiveCalls | None:
    """The watcher of this process's calls (`run`: its RunSession), or None where its lines would not help
    (the module says when)."""
    if hasattr(config, "workerinput") or run.models.model_config is None or run.concurrency > 1:
        return None
    if not 0 < run.total < PROGRESS_MIN_ATTEMPTS or config.get_verbosity() < 0:
        return None
    return LiveCalls(config)
