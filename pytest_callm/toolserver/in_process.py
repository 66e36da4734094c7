"""The tool server's own tool runner, called in this process instead of over HTTP.

`callm prove` plays tens of thousands of tool calls, each a few SQLite statements; over loopback HTTP,
the request and response cost three times the tool itself. `InProcessTools` answers the engine the
way `ToolClient` does (the same method names and results), by calling the same `run_tool` the
server's route calls, over the same per-call databases (`CallStore`). The HTTP layer is what it
leaves out: its routes, limits and errors are tested on their own (tests/test_toolserver.py), and
every benchmark run still goes through it.

What it keeps is where a call's work runs: in the server's lanes (lanes.py), on their runner thread
within the tool time bound, never on the caller's event loop. A pack's tool that hangs (a
lock, a network wait, a loop) would otherwise freeze the loop, and with it every episode an RL
environment plays at once and the whole `callm prove`. Past the bound the call fails as it does
behind the server, with the `ToolServerError` the client raises for the server's `tool_timed_out`:
the tool's failure, and the engine plays the call again.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pytest_callm.task.pack import Pack
from pytest_callm.toolserver.calldb import CallStore, Records
from pytest_callm.toolserver.client import ToolServerError
from pytest_callm.toolserver.lanes import TOOL_TIME_BOUND_S, Lanes, LaneTimedOut
from pytest_callm.toolserver.scratch import DATA_DIR_PREFIX
from pytest_callm.toolserver.tool_runner import run_tool
from pytest_callm.toolkit import envelope

T = TypeVar("T")


class InProcessTools:
    """The engine's tool client, answering from this process: each request's work in its call's lane."""

    def __init__(self, packs: dict[str, Pack], tool_time_bound_s: float = TOOL_TIME_BOUND_S):
        self._folder = Path(tempfile.mkdtemp(prefix=DATA_DIR_PREFIX))
        self.stores = {name: CallStore(pack, self._folder) for name, pack in packs.items()}
        self.lanes = Lanes(tool_time_bound_s)

    async def _in_lane(self, pack: str, call_id: str, what: str, work: Callable[[], T]) -> T:
        try:
            return await self.lanes.run((pack, call_id), work)
        except LaneTimedOut as e:  # the words of the server's `tool_timed_out` reply, as the client raises it
            raise ToolServerError(f"tool_timed_out: {pack}.{what}: {e}") from None

    async def start_call(self, pack: str, call_id: str, records: Records | None = None) -> None:
        store = self.stores[pack]
        await self._in_lane(pack, call_id, "call", lambda: store.connection(call_id, records))

    async def call(self, pack: str, call_id: str, tool: str, arguments: Any) -> dict[str, Any]:
        return (await self.call_audited(pack, call_id, tool, arguments))[0]

    async def call_audited(self, pack: str, call_id: str, tool: str, arguments: Any,
                           agent: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        store = self.stores[pack]
        spec = store.pack.tools.get(tool)
        if spec is None or spec.kind != "industry":
            return envelope(False, None, "unknown_tool", f"Tool {tool!r} is not a tool of the server."), None
        audit: dict[str, Any] = {}
        desk = agent if agent in store.pack.agents else None
        result = await self._in_lane(pack, call_id, tool, lambda: run_tool(
            store.pack, store, call_id, tool, arguments, audit, agent=desk))
        return result, audit

    async def state(self, pack: str, call_id: str) -> dict[str, list[dict[str, Any]]]:
        store = self.stores[pack]
        return await self._in_lane(pack, call_id, "state", lambda: store.snapshot(call_id))

    async def remove_call(self, pack: str, call_id: str) -> None:
        store = self.stores[pack]
        await self._in_lane(pack, call_id, "call", lambda: store.remove(call_id))

    async def health(self) -> dict[str, Any]:
        return {"status": "ok", "packs": sorted(self.stores)}

    async def aclose(self) -> None:
        """Each call's database closed and removed, but for a call whose lane a tool still holds (one
        past the bound, in its thread): closing a SQLite connection while another thread uses it ended
        the process with a segfault. That call's file goes with the folder."""
        for name, store in self.stores.items():
            for call_id in store.open_calls():
                if not self.lanes.held((name, call_id)):
                    store.remove(call_id)
        shutil.rmtree(self._folder, ignore_errors=True)
