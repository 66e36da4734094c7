"""Calls played ahead: up to N calls in flight in one process, each handed to its own attempt.

A model call is almost all waiting on the network. The runner that plays attempt after attempt (pytest,
one item at a time) tells `play_ahead` which attempts come next, in order; the first `size` of them are
started on the runtime's event loop, where they progress together. When an attempt's turn comes,
`take` gives the future of its call, which may have ended long ago. Attempts are still reported one
by one, in order, each with its own verdict.

A call ends by being saved (the runner does that as soon as it is scored), so nothing finished is lost
when the run stops: `cancel` stops the calls still in flight, each removing its database, and a resumed
run plays them again.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task

if TYPE_CHECKING:
    from pytest_callm.runs.attempts import AttemptRunner, Played

Key = tuple[str, str, int]  # industry, task id, attempt


def key_of(task: Task, attempt: int) -> Key:
    return task.industry, task.task_id, attempt


class CallsInFlight:
    def __init__(self, runner: AttemptRunner, size: int):
        self.runner = runner
        self.size = size
        self._calls: dict[Key, concurrent.futures.Future[Played]] = {}

    def play_ahead(self, upcoming: Sequence[tuple[Task, Pack, int] | None]) -> None:
        """`upcoming`: the attempts this process runs next, in order, the current one first; None
        for one that cannot be played ahead (it plays its own call, or none). Starts the calls of the
        first `size` not started yet; cancels calls whose attempt is no longer coming (taken away by
        another worker)."""
        window = upcoming[: self.size]
        coming = {key_of(a[0], a[2]) for a in upcoming if a is not None}
        for key in [k for k in self._calls if k not in coming]:
            self._calls.pop(key).cancel()
        for entry in window:
            if entry is None:
                continue
            task, pack, attempt = entry
            key = key_of(task, attempt)
            if key in self._calls:
                continue
            runtime = self.runner.started()
            # Built here, in the caller's thread: a plugged-in caller factory never runs on the loop.
            who = runtime.participants(task, pack, attempt)
            self._calls[key] = runtime.submit(self.runner.play_async(task, pack, attempt, who))

    def has(self, task: Task, attempt: int) -> bool:
        return key_of(task, attempt) in self._calls

    def take(self, key: Key) -> concurrent.futures.Future[Played] | None:
        """The call played ahead for this attempt (its `result()` waits for the end), or None."""
        return self._calls.pop(key, None)

    def cancel(self) -> None:
        """Stop every call still in flight; each removes its database before this returns."""
        self._calls.clear()
        if self.runner.runtime is not None:
            self.runner.runtime.cancel_all()
