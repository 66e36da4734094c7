"""Time-to-first-token accuracy: does the client measure what the server does?

Starts the test suite's scripted OpenAI-compatible server (tests/openai_server.py) in its own
process with a fixed delay before the first token, sends it a request shaped like a real one (the
example pack's reception prompt and tools, a few turns of history) through the real streaming
client, and prints the measured time to first token against the configured delay: median, p90,
median error (measured - configured) and median ratio. The aim is a median error within 5 ms.

Run from the repository root:  python benchmarks/ttft_accuracy.py [--requests 30] [--delays 50 300 800]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_callm.model.client import OpenAIChatModel, RetryPolicy  # noqa: E402
from pytest_callm.model.latency import p90  # noqa: E402
from pytest_callm.model.protocol import ModelRequest  # noqa: E402
from pytest_callm.model.config import ModelConfig  # noqa: E402
from pytest_callm.task.pack import load_pack  # noqa: E402

SERVER = REPO / "tests" / "openai_server.py"
PACK = REPO / "examples" / "industries" / "vet_clinic"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(delay_ms: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", str(port), "--delay-ms", str(delay_ms)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/health", timeout=1).read()
            return proc, url + "/v1"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the scripted server did not start ({SERVER})")


def realistic_request() -> ModelRequest:
    pack = load_pack(PACK)
    agent = pack.entry_agent
    messages = [{"role": "assistant", "content": pack.greeting},
                {"role": "user", "content": "Hi, I'd like to book a check-up for my dog Biscuit."},
                {"role": "assistant", "content": "Of course. May I have your full name and phone number?"},
                {"role": "user", "content": "Dana Whitfield, 503 555 0142."}]
    return ModelRequest(agent, pack.agents[agent].prompt, messages, pack.tool_schemas(agent))


async def measure(base_url: str, requests: int) -> list[float]:
    config = ModelConfig(name="scripted", model="scripted", base_url=base_url, api_key_env=None)
    model = OpenAIChatModel(config, None, RetryPolicy(tries=1))
    request = realistic_request()
    try:
        for _ in range(2):  # warm-ups: connection, imports
            await model.respond(request)
        return [(await model.respond(request)).ttft_ms for _ in range(requests)]
    finally:
        await model.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--delays", type=float, nargs="+", default=[50, 300, 800])
    args = parser.parse_args()
    print(f"{'delay ms':>9} {'median ms':>10} {'p90 ms':>8} {'error ms':>9} {'ratio':>7}")
    worst = 0.0
    for delay in args.delays:
        proc, base_url = start_server(delay)
        try:
            ttfts = asyncio.run(measure(base_url, args.requests))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        median = statistics.median(ttfts)
        worst = max(worst, abs(median - delay))
        print(f"{delay:9.0f} {median:10.2f} {p90(ttfts):8.2f} {median - delay:+9.2f} {median / delay:7.4f}")
    print(f"largest median error: {worst:.2f} ms ({'within' if worst <= 5 else 'OVER'} the 5 ms aim); "
          f"{args.requests} requests per delay after 2 warm-ups")


if __name__ == "__main__":
    main()
