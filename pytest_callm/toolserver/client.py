"""HTTP client of the tool server, used by the engine (one per event loop).

aiohttp rather than httpx here: on this path a tool request costs about 1.5 ms with aiohttp and
3.5 ms with httpx's async client (measured against the same server), and a call makes a dozen.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import asyncio
import uuid

from pytest_callm.task.digest import pack_hash
from pytest_callm.toolserver.calldb import (AGENT_HEADER, AUDIT_HEADER, CALL_ID_HEADER, CLIENT_KEEPALIVE_S,
                                            REQUEST_HEADER, TOKEN_HEADER)

# A request whose connection failed before its reply came (a dropped keep-alive connection, a reset)
# is sent again, up to this many times in all, on a fresh connection: every request is safe to repeat
# (reads, and starting or removing a call, are idempotent; a tool request carries an id, and the server
# answers its second sending with the reply it kept from the first).
SEND_TRIES = 3

if TYPE_CHECKING:
    import aiohttp

    from pytest_callm.task.pack import Pack


_TOKENS: dict[str, str] = {}  # base URL -> token, of the servers this process started or was given


def remember_token(base_url: str, token: str | None) -> None:
    """A client made later in this process for `base_url` (a test's own, in its own loop) sends `token`."""
    if token:
        _TOKENS[base_url.rstrip("/")] = token


class ToolServerError(Exception):
    """The tool server could not answer: an infrastructure error, never a model failure."""


class ToolServerMismatch(ToolServerError):
    """A tool server named by its URL does not serve this run's packs as they are: a setup error,
    the same for every attempt, so the run stops with it."""


class ToolServerBusy(ToolServerError):
    """The tool server holds as many live calls as it may (429): a new one must wait."""


def check_tool_server(url: str, timeout: float = 5.0) -> dict[str, Any]:
    """Synchronous health check, for use before any event loop exists (e.g. at collection)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=timeout) as response:
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise ToolServerError(f"the tool server at {url} is not reachable or not healthy: {e}") from None


def require_packs(health: dict[str, Any], packs: dict[str, Pack], url: str) -> None:
    """Refuse a tool server that does not serve each of `packs` from the same files (its /health
    answer): a run scored against another pack of the same name would be scored wrong, silently."""
    served = health.get("pack_digests") if isinstance(health, dict) else None
    if not isinstance(served, dict):
        raise ToolServerMismatch(f"the tool server at {url} does not say which pack files it serves "
                                 f"(started by another version of pytest-callm?)")
    for name, pack in sorted(packs.items()):
        if name not in served:
            raise ToolServerMismatch(f"the tool server at {url} does not serve the {name!r} pack this run "
                                     f"plays (it serves {', '.join(sorted(served)) or 'none'})")
        if served[name] != pack_hash(pack):
            raise ToolServerMismatch(f"the tool server at {url} serves a {name!r} pack whose files differ from "
                                     f"this run's ({pack.root}): start it on the same pack")


class ToolClient:
    def __init__(self, base_url: str, timeout: float = 30.0, connections: int = 64, token: str | None = None):
        import aiohttp  # here, not at module import: aiohttp builds SSL contexts on import (0.3 s),
        # which a process that never plays a call (--collect-only, a rescore) should not pay

        self._aiohttp = aiohttp
        self._errors = (aiohttp.ClientError, TimeoutError)
        self._dropped = aiohttp.ClientConnectionError  # ServerDisconnectedError, resets, refused connections
        self._connections = connections
        self.base_url = base_url.rstrip("/")
        token = token or _TOKENS.get(self.base_url)
        self.token = token
        self._token = {TOKEN_HEADER: token} if token else {}  # a server started with a token wants it
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._http: aiohttp.ClientSession | None = None

    def _session(self) -> aiohttp.ClientSession:
        # Created lazily so it binds to the event loop that uses it.
        if self._http is None:
            aiohttp = self._aiohttp
            connector = aiohttp.TCPConnector(limit=self._connections, keepalive_timeout=CLIENT_KEEPALIVE_S)
            self._http = aiohttp.ClientSession(self.base_url, timeout=self._timeout, connector=connector)
        return self._http

    async def call(self, pack: str, call_id: str, tool: str, arguments: Any) -> dict[str, Any]:
        return (await self.call_audited(pack, call_id, tool, arguments))[0]

    async def call_audited(self, pack: str, call_id: str, tool: str, arguments: Any,
                           agent: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The result envelope, and what the call read and wrote (the server's audit header; None
        from a server that sends none). `agent`: the desk making the call, for the pack's records."""
        payload, headers = await self._send("POST", f"/packs/{pack}/tools/{tool}", call_id, json.dumps(arguments),
                                            with_headers=True, agent=agent, request_id=uuid.uuid4().hex)
        raw = headers.get(AUDIT_HEADER)
        try:
            audit = json.loads(raw) if raw else None
        except ValueError:
            audit = None
        return payload, audit

    async def start_call(self, pack: str, call_id: str, records: dict[str, list[dict[str, Any]]] | None = None) -> None:
        """Create the call's database; `records`: the task's own rows on top of the seed."""
        await self._send("POST", f"/packs/{pack}/call", call_id,
                         json.dumps({"records": records}) if records else None)

    async def remove_call(self, pack: str, call_id: str) -> None:
        await self._send("DELETE", f"/packs/{pack}/call", call_id)

    async def state(self, pack: str, call_id: str) -> dict[str, list[dict[str, Any]]]:
        return (await self._send("GET", f"/packs/{pack}/state", call_id))["data"]

    async def health(self) -> dict[str, Any]:
        try:
            async with self._session().get("/health") as response:
                response.raise_for_status()
                return await response.json()
        except self._errors as e:
            raise ToolServerError(f"tool server at {self.base_url} is not healthy: {e!r}") from e

    async def _send(self, method: str, path: str, call_id: str, body: str | None = None,
                    with_headers: bool = False, agent: str | None = None, request_id: str | None = None) -> Any:
        headers = {CALL_ID_HEADER: call_id, **self._token}
        if agent:
            headers[AGENT_HEADER] = agent
        if body is not None:
            headers["Content-Type"] = "application/json"
        if request_id is not None:
            headers[REQUEST_HEADER] = request_id
        dropped: list[str] = []
        while True:
            try:
                async with self._session().request(method, path, data=body, headers=headers) as response:
                    text = await response.text()
                    status = response.status
                    response_headers = response.headers
                break
            except self._dropped as e:
                dropped.append(repr(e))
                if len(dropped) >= SEND_TRIES:
                    raise ToolServerError(f"{method} {self.base_url}{path} failed {len(dropped)} times: "
                                          + "; ".join(dropped)) from e
                await asyncio.sleep(0.05 * len(dropped))
            except self._errors as e:
                raise ToolServerError(f"{method} {self.base_url}{path} failed: {e!r}") from e
        try:
            payload = json.loads(text)
        except ValueError:
            raise ToolServerError(f"{method} {path} -> HTTP {status}, not JSON: {text[:300]}") from None
        if status >= 400:  # the model's own mistakes are 200 envelopes; anything else is infrastructure
            detail = payload.get("caller_safe_message") if isinstance(payload, dict) else payload
            error = ToolServerBusy if status == 429 else ToolServerError
            raise error(f"{method} {path} -> HTTP {status}: {detail}")
        return (payload, response_headers) if with_headers else payload

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
