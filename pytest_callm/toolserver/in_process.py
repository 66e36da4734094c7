"""The tool server's own tool runner, called in this process instead of over HTTP.

`callm prove` plays tens of thousands of tool calls, each a few SQLite statements; over loopback HTTP,
the request and response cost three times the tool itself. `InProcessTools` answers the engine the
way `ToolClient` does (the same method names and results), by calling the same `run_tool` the
server's route calls, over the same per-call databases (`CallStore`). The HTTP layer is what it
leaves out: its routes, limits and errors are tested on their own (tests/test_toolserver.py), and
every benchmark run still goes through it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from pytest_callm.task.pack import Pack
from pytest_callm.toolserver.calldb import CallStore, Records
from pytest_callm.toolserver.server import DATA_DIR_PREFIX, run_tool
from pytest_callm.toolkit import envelope


class InProcessTools:
    """The engine's tool client, answering from this process (one thread: the runtime's loop)."""

    def __init__(self, packs: dict[str, Pack]):
        self._folder = Path(tempfile.mkdtemp(prefix=DATA_DIR_PREFIX))
        self.stores = {name: CallStore(pack, self._folder) for name, pack in packs.items()}

    async def start_call(self, pack: str, call_id: str, records: Records | None = None) -> None:
        self.stores[pack].connection(call_id, records)

    async def call(self, pack: str, call_id: str, tool: str, arguments: Any) -> dict[str, Any]:
        return (await self.call_audited(pack, call_id, tool, arguments))[0]

    async def call_audited(self, pack: str, call_id: str, tool: str, arguments: Any,
                           agent: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        store = self.stores[pack]
        spec = store.pack.tools.get(tool)
        if spec is None or spec.kind != "industry":
            return envelope(False, None, "unknown_tool", f"Tool {tool!r} is not a tool of the server."), None
        audit: dict[str, Any] = {}
        result = run_tool(store.pack, store, call_id, tool, arguments, audit,
                          agent=agent if agent in store.pack.agents else None)
        return result, audit

    async def state(self, pack: str, call_id: str) -> dict[str, list[dict[str, Any]]]:
        return self.stores[pack].snapshot(call_id)

    async def remove_call(self, pack: str, call_id: str) -> None:
        self.stores[pack].remove(call_id)

    async def health(self) -> dict[str, Any]:
        return {"status": "ok", "packs": sorted(self.stores)}

    async def aclose(self) -> None:
        for store in self.stores.values():
            for call_id in list(getattr(store, "_recent", {})):
                store.remove(call_id)
        shutil.rmtree(self._folder, ignore_errors=True)
