"""The call engine (DESIGN §5): plays one phone call with a model and returns its trajectory.

The call itself is an `Episode` (`episode.py`), advanced one model reply at a time; this loop is
the benchmark's driver of it: it asks the model under test for each reply. An RL trainer drives the
same episode with its own policy (`pytest_callm.rl`), so a call played either way is the same data,
scored by the same verifier. In each agent turn the model may make up to `max_requests_per_turn`
requests: tool calls first, speech last. A model whose context overflows, or whose provider refuses
what was said in the call, breaks the call there.

No pytest in here: the engine can run under any harness.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_callm.call.caller import Caller
from pytest_callm.call.episode import CallLimits, Episode
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.model.protocol import Model, ModelsOwnFailure
from pytest_callm.phone.line import Line
from pytest_callm.task.pack import Pack
from pytest_callm.toolserver.client import ToolClient

__all__ = ["CallLimits", "Watch", "run_call"]

# Told the trajectory so far after every step of the call (someone watching it play); it must not block.
Watch = Callable[[Trajectory], None]


async def run_call(*, pack: Pack, model: Model, caller: Caller, line: Line, tools: ToolClient, call_id: str,
                   task_id: str, attempt: int, limits: CallLimits = CallLimits(),
                   watch: Watch | None = None, records: dict | None = None) -> Trajectory:
    episode = Episode(pack=pack, caller=caller, line=line, tools=tools, call_id=call_id, task_id=task_id,
                      attempt=attempt, model_name=getattr(model, "name", type(model).__name__), limits=limits,
                      records=records)
    observation = await episode.reset()
    while not observation.done:
        if watch is not None:
            watch(episode.trajectory)
        try:
            reply = await model.respond(observation.request())
        except ModelsOwnFailure as e:  # its context overflowed, or its provider refused the call's words
            observation = await episode.break_call(str(e), e.end_reason)
        else:
            observation = await episode.step(reply)
    if watch is not None:
        watch(episode.trajectory)
    return episode.trajectory
