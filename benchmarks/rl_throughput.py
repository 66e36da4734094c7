"""Episodes in flight: can one process keep a trainer's policy server busy?

A local OpenAI-compatible policy server (tests/openai_server.py, in its own process) follows the answer
key of one task (legal C4-H3 by default: 15 policy requests, a handoff, a database write) and sends
the first token of every reply `--delay-ms` (300) after the request arrives. One process holds
`--in-flight` (256) episodes of `pytest_callm.rl.CallEnvironment` at once, each sampling the policy
through the project's streaming OpenAI client (the sampler a trainer would plug in), until
`--episodes` (768) have finished; the default phone line sits between caller and policy.

It prints:

  episodes/s     finished episodes per second of wall time (after start-up)
  utilization    policy-request seconds / (in-flight slots x (last reply - first request)): the share
                 of slot time spent waiting on the policy rather than on the environment (a reply
                 read late because the loop was busy counts as the policy's: see TTFT - delay)
  TTFT - delay   the time to first token the episodes recorded, minus the served delay: the
                 environment's own overhead on the measurement (median, p95, max)
  env ms/step    environment time between a reply and the next request, per step (median, p95)
  rewards        how many episodes earned 1.0 (all should: the policy follows the key)

  CPU ms/request the CPU the environment's process and the tool server spent per policy request
                 (the sampler's included: it runs in the environment's process, as in a trainer;
                 `--client key` leaves it out, so the environment's own work is all that is counted)

Run from the repository root:  python benchmarks/rl_throughput.py [--in-flight 256] [--episodes 768]
                                   [--tools http|in-process] [--client lean|project|key]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402

from pytest_callm.model.client import OpenAIChatModel, RetryPolicy  # noqa: E402
from pytest_callm.model.config import ModelConfig  # noqa: E402
from pytest_callm.model.protocol import ModelReply, ModelRequest, ToolCall  # noqa: E402
from pytest_callm.rl.environment import CallEnvironment  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_policy_server(task: Path, delay_ms: float, piece_chars: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(REPO / "tests" / "openai_server.py"), "--port", str(port),
                               "--delay-ms", str(delay_ms), "--task", str(task), "--piece-chars", str(piece_chars),
                               "--industries", str(REPO / "industries")], cwd=REPO)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the policy server did not start")


class LeanSampler:
    """A trainer's sampler at its leanest: one aiohttp session, streamed chat completions parsed by
    hand, the time to the first text or tool-call delta noted. What the environment costs shows
    here; `--client project` uses the project's own client (the openai SDK) instead."""

    def __init__(self, base_url: str, connections: int):
        self.url = base_url + "/chat/completions"
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections))

    async def respond(self, request: ModelRequest) -> ModelReply:
        body = {"model": "scripted", "stream": True, "tools": request.tools,
                "messages": [{"role": "system", "content": request.system_prompt}, *request.messages]}
        start = time.perf_counter()
        ttft = None
        text: list[str] = []
        calls: dict[int, dict] = {}
        async with self.session.post(self.url, json=body) as response:
            response.raise_for_status()
            async for line in response.content:
                if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                    continue
                chunk = json.loads(line[6:])
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if (delta.get("content") or delta.get("tool_calls")) and ttft is None:
                        ttft = (time.perf_counter() - start) * 1000
                    text.append(delta.get("content") or "")
                    for tc in delta.get("tool_calls") or []:
                        call = calls.setdefault(tc["index"], {"id": "", "name": "", "arguments": ""})
                        fn = tc.get("function") or {}
                        call["id"] += tc.get("id") or ""
                        call["name"] += fn.get("name") or ""
                        call["arguments"] += fn.get("arguments") or ""
        return ModelReply(text="".join(text), ttft_ms=ttft,
                          tool_calls=[ToolCall(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())])

    async def aclose(self) -> None:
        await self.session.close()


class KeyPolicy:
    """The stand-in policy server's own answer-key agent, called in the environment's process: no HTTP,
    no JSON, no policy process. The first token "arrives" `delay_ms` after the request, as served.
    What the process spends is then the environment's own work (episodes, line, tools, scoring)."""

    def __init__(self, task: Path, industries: Path, delay_ms: float):
        sys.path.insert(0, str(REPO / "tests"))
        from openai_server import AnswerKeyAgent

        self.agent = AnswerKeyAgent(task, industries)
        self.delay_s = delay_ms / 1000
        self.ids = itertools.count(1)

    async def respond(self, request: ModelRequest) -> ModelReply:
        start = time.perf_counter()
        await asyncio.sleep(self.delay_s)
        step = self.agent.step({"messages": request.messages})
        calls = [ToolCall(f"call_{next(self.ids)}", c["name"], json.dumps(c["arguments"]))
                 for c in step.get("tool_calls", [])]
        return ModelReply(text=step.get("text", ""), tool_calls=calls, ttft_ms=(time.perf_counter() - start) * 1000)

    async def aclose(self) -> None:
        pass


class TimedPolicy:
    """The sampler, with each request's start and end noted."""

    def __init__(self, sampler):
        self.sampler = sampler
        self.spans: list[tuple[float, float]] = []

    async def respond(self, request):
        start = time.perf_counter()
        reply = await self.sampler.respond(request)
        self.spans.append((start, time.perf_counter()))
        return reply


async def episodes(env: CallEnvironment, name: str, policy: TimedPolicy, total: int, in_flight: int):
    env_gaps: list[float] = []
    results = []
    seeds = iter(range(1, total + 1))

    async def slot():
        for seed in seeds:
            episode_id, result = await env.areset(name, seed)
            while not result.done:
                reply = await policy.respond(result.observation.request())
                stepped = time.perf_counter()
                result = await env.astep(episode_id, reply)
                if not result.done:
                    env_gaps.append(time.perf_counter() - stepped)
            results.append(result)

    await asyncio.gather(*(slot() for _ in range(in_flight)))
    return results, env_gaps


async def make_lean(base_url: str, connections: int) -> LeanSampler:
    return LeanSampler(base_url, connections)  # its session belongs to the environment's loop


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="legal/C4-H3")
    parser.add_argument("--in-flight", type=int, default=256)
    parser.add_argument("--episodes", type=int, default=768)
    parser.add_argument("--delay-ms", type=float, default=300.0)
    parser.add_argument("--piece-chars", type=int, default=4,
                        help="characters per streamed chunk (4: a token each, as a serving engine streams)")
    parser.add_argument("--client", choices=["lean", "project", "key"], default="lean",
                        help="the policy's sampler: a lean aiohttp one, the project's client (openai SDK), or "
                             "none: `key` plays the stand-in server's answer-key agent in the environment's "
                             "process (no HTTP, no policy process: the environment's own CPU alone)")
    parser.add_argument("--tools", choices=["http", "in-process"], default="http",
                        help="the tools behind the tool server's HTTP routes (as the benchmark runs them), or "
                             "its tool runner called on the environment's loop (CallEnvironment(tools_in_process=True))")
    args = parser.parse_args()
    task_dir = REPO / "tasks" / args.task
    server, base_url = (None, "") if args.client == "key" else \
        start_policy_server(task_dir / "task.json", args.delay_ms, args.piece_chars)
    policy_cpu = (lambda: 0.0) if server is None else (lambda: cpu_s(server.pid))
    try:
        started = time.perf_counter()
        env = CallEnvironment([task_dir], root=REPO, concurrency=args.in_flight,
                              tools_in_process=args.tools == "in-process")
        tool_pid = env.runtime._server._proc.pid if env.runtime._server is not None else None
        tool_cpu = (lambda: cpu_s(tool_pid)) if tool_pid is not None else (lambda: 0.0)
        ready = time.perf_counter()
        if args.client == "key":
            client = KeyPolicy(task_dir / "task.json", REPO / "industries", args.delay_ms)
        elif args.client == "lean":
            client = env.run(make_lean(base_url, args.in_flight))
        else:
            config = ModelConfig(name="policy", model="scripted", base_url=base_url, api_key_env=None)
            client = OpenAIChatModel(config, None, RetryPolicy(), connections=args.in_flight)
        policy = TimedPolicy(client)
        try:
            cpu_before = (time.process_time(), tool_cpu(), policy_cpu())
            results, env_gaps = env.run(episodes(env, args.task, policy, args.episodes, args.in_flight))
            done = time.perf_counter()
            cpu = [after - before for before, after in zip(cpu_before, (
                time.process_time(), tool_cpu(), policy_cpu()))]
            env.run(client.aclose())
        finally:
            env.close()
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    first = min(s for s, _ in policy.spans)
    last = max(e for _, e in policy.spans)
    busy = sum(e - s for s, e in policy.spans)
    utilization = busy / (args.in_flight * (last - first))
    ttft = [r.ttft_ms - args.delay_ms for res in results for r in res.info["trajectory"].requests
            if r.ttft_ms is not None]
    rewards = sum(1 for r in results if r.reward == 1.0)
    steps = len(policy.spans)
    print(f"task {args.task}: {args.episodes} episodes, {args.in_flight} in flight, policy first token after "
          f"{args.delay_ms:.0f} ms, {args.piece_chars} characters a chunk, {args.client} sampler, tools "
          f"{args.tools}; {steps} policy "
          f"requests ({steps / args.episodes:.1f} an episode); {os.cpu_count()} cores")
    print(f"environment start      {ready - started:6.2f} s (task load, tool server)")
    ideal = steps * args.delay_ms / 1000 / args.in_flight
    print(f"wall (episodes)        {done - ready:6.2f} s   ideal {ideal:.2f} s ({ideal / (done - ready):.2f} of ideal: "
          "time lost to the environment, the sampler and the policy server together)")
    print(f"episodes/s             {args.episodes / (done - ready):6.1f}")
    print(f"utilization            {utilization:6.3f}")
    print(f"TTFT - delay (ms)      median {statistics.median(ttft):.1f}, p95 {pct(ttft, 0.95):.1f}, "
          f"max {max(ttft):.1f}")
    print(f"env ms/step            median {1000 * statistics.median(env_gaps):.1f}, "
          f"p95 {1000 * pct(env_gaps, 0.95):.1f}")
    sampler = {"lean": ", sampler", "project": ", sampler", "key": ", the key's agent in place of a sampler"}[args.client]
    print(f"CPU s                  environment {cpu[0]:.1f} (its process: episodes, line{sampler}"
          f"{', tools' if args.tools == 'in-process' else ''}), tool server {cpu[1]:.1f}, policy server {cpu[2]:.1f}")
    print(f"CPU ms / request       environment {1000 * cpu[0] / steps:.2f}, tool server {1000 * cpu[1] / steps:.2f}, "
          f"both {1000 * (cpu[0] + cpu[1]) / steps:.2f} (aim: 1.2)")
    print(f"rewards 1.0            {rewards} of {len(results)}")
    others = collections.Counter((r.reward, (r.info.get("explanation") or r.info.get("infrastructure_error", ""))[:200])
                                 for r in results if r.reward != 1.0)
    for (reward, why), n in others.most_common(3):
        print(f"  {n} x reward {reward}: {why}")


if __name__ == "__main__":
    main()
