"""Where the tool server runs a call's work: off its event loop, one request of a call at a time,
within a time bound.

A tool is a pack's own code. Run on the server's event loop, one that hung (a lock, a network wait, a
loop) froze every other call the server held, and their tools failed as infrastructure. Here the work
runs on a runner thread that hands its queue to a fresh thread when a piece takes long (`_Runner`),
and the loop only waits for it, so a hung tool delays the others by a tenth of a second at most, once,
and its own call alone after that.

One call's requests share its SQLite connection, so they take turns: each call has a lane, a lock held
from the start of a request's work until the work returns. A request that is not done within the bound
(waiting for its turn included) is answered `LaneTimedOut`, the tool's failure; a piece that ran past
it keeps its call's lane until it returns, so nothing else uses that call's connection meanwhile (later
requests of that call time out in turn: the call is broken, and the engine plays it again).
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
# The longest one tool call may run (waiting behind an earlier request of its call included). A tool is a
# few SQLite statements, well under a millisecond; this only catches one that hangs.
TOOL_TIME_BOUND_S = 30.0


class LaneTimedOut(Exception):
    """A call's work did not finish within the bound."""


def _settle(future: asyncio.Future, result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Runner:
    """One thread running the server's work, one piece after another, that hands its queue on when a
    piece holds it.

    A piece is a tool call, a fraction of a millisecond. A thread for each request in flight (the last
    design) had hundreds of threads contending for the GIL when an RL environment played hundreds of
    episodes at once: a third of the tool server's CPU went to the kernel, handing the GIL between
    them. Here one thread runs every piece in turn. A piece still waiting after `HANDOFF_S` looks at
    the runner, and again every `HANDOFF_S` until it starts: if the piece the runner runs has run that
    long (a slow or hung tool), a fresh thread takes the queue over, and the held one ends once its piece
    returns. So a hung tool delays the others by at most twice `HANDOFF_S`, once, and holds only its own
    call (its lane) after that. Pieces are meant to be quick (a tool is a few SQLite statements): ones
    that each run tens of milliseconds, just under `HANDOFF_S`, take turns rather than run side by side,
    and the time a piece waits in the queue counts against its request's bound.
    """

    HANDOFF_S = 0.05
    _lock = threading.Lock()
    _current: "_Runner | None" = None

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[], None], list]] = queue.SimpleQueue()
        self.since: float | None = None  # when the piece it runs started; None while it waits
        self.retired = False
        threading.Thread(target=self._serve, name="callm-tool", daemon=True).start()

    @classmethod
    def submit(cls, job: Callable[[], None]) -> list:
        """Queue `job`; the returned list becomes non-empty when a thread starts it."""
        started: list = []
        with cls._lock:
            if cls._current is None:
                cls._current = cls()
            cls._current.jobs.put((job, started))
        return started

    @classmethod
    def waiting(cls, started: list) -> bool:
        """Whether the job of `started` still waits, after handing the queue to a fresh runner if the
        current one has run its piece for HANDOFF_S (a queue of quick pieces is simply left to run)."""
        with cls._lock:
            if started:
                return False
            held = cls._current  # its `since` is set and cleared under this lock: read once, it stays
            if held is not None and held.since is not None and time.monotonic() - held.since >= cls.HANDOFF_S:
                cls._current = cls()
                held.retired = True
                while True:
                    try:
                        cls._current.jobs.put(held.jobs.get_nowait())
                    except queue.Empty:
                        break
            return True

    def _serve(self) -> None:
        while True:
            job, started = self.jobs.get()
            with self._lock:
                if self.retired:  # handed on while this one waited: the new runner takes the piece
                    _Runner._current.jobs.put((job, started))
                    return
                started.append(True)
                self.since = time.monotonic()
            job()
            with self._lock:  # either a look retired this one first, and it ends, or it is seen idle
                self.since = None
                if self.retired:
                    return

    @classmethod
    def _forget(cls) -> None:
        """In a forked child: the parent's runner thread is not there, so the next piece starts a new one."""
        cls._lock, cls._current = threading.Lock(), None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Runner._forget)


def off_the_loop(work: Callable[[], T]) -> asyncio.Future:
    """`work()` run on the runner thread (a fresh one when the runner is held past HANDOFF_S); its
    result (or exception, SystemExit included) on the returned future."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as e:  # noqa: BLE001  handed to the waiting request, whatever it is
            result, error = None, e
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:
            pass  # the server's loop is closed: it stopped, no one waits for this any more

    started = _Runner.submit(run)
    check = [None]  # the pending look at the runner, cancelled once the work is done

    def look() -> None:
        again = True
        try:
            again = _Runner.waiting(started)
        finally:  # a look that failed (no thread could start) looks again: the piece must not be forgotten
            if again:
                check[0] = loop.call_later(_Runner.HANDOFF_S, look)

    check[0] = loop.call_later(_Runner.HANDOFF_S, look)
    future.add_done_callback(lambda _: check[0].cancel())
    return future


class Lanes:
    """One lane per call (any hashable key): its requests' work runs one at a time, off the loop."""

    def __init__(self, bound_s: float = TOOL_TIME_BOUND_S):
        self.bound_s = bound_s
        self._lanes: dict[Any, list] = {}  # key -> [lock, requests holding or waiting for it]

    def busy(self) -> int:
        """Calls with work in a lane now (a hung tool's included)."""
        return len(self._lanes)

    def held(self, key: Any) -> bool:
        """Whether this call has work in its lane now: running (a tool past the bound included) or waiting."""
        return key in self._lanes

    async def run(self, key: Any, work: Callable[[], T]) -> T:
        """`work()` off the loop once the call's earlier requests are done; LaneTimedOut past the bound."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.bound_s
        lane = self._lanes.setdefault(key, [asyncio.Lock(), 0])
        lane[1] += 1
        try:
            if lane[0].locked():  # a free lane is taken at once: no timer (most requests, a few µs each)
                await asyncio.wait_for(lane[0].acquire(), self.bound_s)
            else:
                await lane[0].acquire()
        except TimeoutError:
            self._leave(key, lane)
            raise LaneTimedOut(f"an earlier request of this call still runs after {self.bound_s:g} s") from None
        except BaseException:  # the request was cancelled (its client went away) while it waited its turn
            self._leave(key, lane)
            raise
        future = off_the_loop(work)
        # The request waits on its own future, settled by the work's or by the bound's timer: a request
        # that gives up (timed out, or cancelled) leaves the work's future, and the lane, to the work.
        waiting = loop.create_future()

        def done(f: asyncio.Future) -> None:  # the work returned: the lane is free again
            if not f.cancelled():
                f.exception()  # retrieved here too: a request that timed out no longer waits for it
            lane[0].release()
            self._leave(key, lane)
            if waiting.done():
                return
            if f.cancelled():
                waiting.cancel()
            elif f.exception() is not None:
                waiting.set_exception(f.exception())
            else:
                waiting.set_result(f.result())

        def late() -> None:
            if not waiting.done():
                waiting.set_exception(LaneTimedOut(f"it ran past the tool time bound of {self.bound_s:g} s"))

        future.add_done_callback(done)
        timer = loop.call_at(deadline, late)
        try:
            return await waiting
        finally:
            timer.cancel()

    def _leave(self, key: Any, lane: list) -> None:
        lane[1] -= 1
        if lane[1] == 0 and self._lanes.get(key) is lane:
            del self._lanes[key]
