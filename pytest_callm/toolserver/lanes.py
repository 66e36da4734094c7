"""Where the tool server runs a call's work: in a thread of its own, one request of a call at a time,
within a time bound.

A tool is a pack's own code. Run on the server's event loop, one that hung (a lock, a network wait, a
loop) froze every other call the server held, and their tools failed as infrastructure. Here each
request's work runs in a fresh thread (a pool could be filled by hung tools; a thread costs tens of
microseconds), and the loop only waits for it, so a slow tool delays its own call alone.

One call's requests share its SQLite connection, so they take turns: each call has a lane, a lock held
from the start of a request's work until its thread ends. A request that is not done within the bound
(waiting for its turn included) is answered `LaneTimedOut`, the tool's failure; a thread that ran past
it keeps its call's lane until it ends, so nothing else uses that call's connection meanwhile (later
requests of that call time out in turn: the call is broken, and the engine plays it again).
"""

from __future__ import annotations

import asyncio
import queue
import threading
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


class _Worker:
    """A thread that runs one piece of work at a time, kept for the next one while it is idle: starting
    a thread for every tool request cost more CPU than the tool. A worker held by a hung tool is simply
    not idle; the next request gets another."""

    IDLE_S = 30.0  # an idle worker ends after this long
    _idle: list["_Worker"] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="callm-tool", daemon=True).start()

    @classmethod
    def run(cls, job: Callable[[], None]) -> None:
        with cls._lock:
            worker = cls._idle.pop() if cls._idle else None
        (worker or cls()).jobs.put(job)

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=self.IDLE_S)
            except queue.Empty:
                with self._lock:
                    if self in self._idle:  # else it was just handed a job: take it
                        self._idle.remove(self)
                        return
                continue
            job()
            with self._lock:
                self._idle.append(self)


def in_own_thread(work: Callable[[], T]) -> asyncio.Future:
    """`work()` run in a thread of its own (an idle one kept from earlier work, or a new one); its
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

    _Worker.run(run)
    return future


class Lanes:
    """One lane per call (any hashable key): its requests' work runs one at a time, each in its own thread."""

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
        """`work()` in its own thread once the call's earlier requests are done; LaneTimedOut past the bound."""
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
        future = in_own_thread(work)
        # The request waits on its own future, settled by the thread's or by the bound's timer: a request
        # that gives up (timed out, or cancelled) leaves the thread's future, and the lane, to the thread.
        waiting = loop.create_future()

        def done(f: asyncio.Future) -> None:  # the thread ended: the lane is free again
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
