"""What one pytest process (an xdist worker, or the only process) needs to run calls.

One asyncio loop for the whole session (HTTP clients live in it), the tool server or a client to a
running one, and the factory that builds the model, caller and line for an attempt. It knows
nothing of pytest, so a script or an RL environment can drive attempts the same way.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass

from .caller import Caller
from .engine import CallLimits, run_call
from .line import CleanLine, Line
from .model import Model
from .oracle import OracleModel, ScriptedCaller
from .pack import Pack
from .task import Task
from .tools_client import ToolClient
from .toolserver import ToolServer
from .trajectory import Trajectory
from .verify import Verdict, verify

BUILTIN_MODELS = ("oracle",)


class ModelUnavailable(Exception):
    pass


def check_model_name(name: str) -> None:
    if name not in BUILTIN_MODELS:
        raise ModelUnavailable(
            f"--callm-model={name}: this build runs only the built-in model(s) {', '.join(BUILTIN_MODELS)}; "
            "use --callm-model=oracle to replay every answer key offline")


def make_call_id(task_id: str, attempt: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", task_id)[:40]
    return f"{safe}-a{attempt}-{uuid.uuid4().hex[:12]}"


@dataclass
class Participants:
    model: Model
    caller: Caller
    line: Line


def participants(model_name: str, task: Task, pack: Pack, limits: CallLimits) -> Participants:
    check_model_name(model_name)
    model = OracleModel(task, pack, limits.max_requests_per_turn)
    return Participants(model, ScriptedCaller(model), CleanLine())


class Runtime:
    def __init__(self, model_name: str, packs: dict[str, Pack], tool_server_url: str | None = None,
                 limits: CallLimits = CallLimits()):
        self.model_name = model_name
        self.limits = limits
        self._runner = asyncio.Runner()
        self._server = None if tool_server_url else ToolServer(packs).start()
        self.tool_server_url = tool_server_url or self._server.url
        self.tools = self._runner.run(self._connect())

    async def _connect(self) -> ToolClient:
        client = ToolClient(self.tool_server_url)
        await client.health()
        return client

    def run_attempt(self, task: Task, pack: Pack, attempt: int) -> tuple[Trajectory, Verdict]:
        trajectory = self.play(task, pack, attempt)
        return trajectory, verify(task, pack, trajectory)

    def play(self, task: Task, pack: Pack, attempt: int) -> Trajectory:
        who = participants(self.model_name, task, pack, self.limits)
        trajectory = self._runner.run(run_call(
            pack=pack, model=who.model, caller=who.caller, line=who.line, tools=self.tools,
            call_id=make_call_id(task.task_id, attempt), task_id=task.task_id, attempt=attempt,
            limits=self.limits))
        after = getattr(who.model, "after_call", None)
        if after is not None:
            after(trajectory.tool_calls)
        return trajectory

    def close(self) -> None:
        try:
            self._runner.run(self.tools.aclose())
        finally:
            self._runner.close()
            if self._server is not None:
                self._server.stop()
