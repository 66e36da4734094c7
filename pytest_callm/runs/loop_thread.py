"""The event loop of one process's calls, running in a thread of its own.

Calls in flight wait on the network almost all the time; they make progress only while their loop
runs. A loop driven from pytest's thread (`asyncio.Runner.run` per item) would stand still between
items, and the first token of a stream that arrived then would be timed late. Here the loop runs the
whole session in its own thread; pytest's thread hands it coroutines and waits on their results.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "callm-calls"):
        self.loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task] = set()  # every coroutine handed over and not yet finished
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            return await coro
        finally:
            self._tasks.discard(task)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start the coroutine on the loop; its result (or exception) arrives in the future."""
        return asyncio.run_coroutine_threadsafe(self._tracked(coro), self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine on the loop and wait for it. An interrupt (Ctrl-C) while waiting
        cancels it; `cancel_all` or `close` then waits for it to unwind."""
        future = self.submit(coro)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def cancel_all(self, timeout: float = 30.0) -> None:
        """Cancel every coroutine still running and wait until each has unwound (its `finally` blocks
        run on the loop: a call removes its database there)."""
        async def cancel() -> None:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(cancel(), self.loop).result()

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        self.cancel_all()

        async def wind_down() -> None:
            await self.loop.shutdown_asyncgens()
            await self.loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(wind_down(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()
