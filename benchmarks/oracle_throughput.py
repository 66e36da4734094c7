"""Oracle throughput: how much time the harness itself spends per call (no model, no caller).

The call measured is a benchmark task on the example pack with ten tool-server requests (two
handoffs, ten industry tools) plus the final state read (aims on a 2-core machine: under 3 ms in
process beside the limit's order, under 10 ms per call in a whole pytest run). Prints:

  1. in process: milliseconds per oracle call (engine + tool server over loopback + verifier);
  2. through pytest with -n 0 and -n 2 (calls in flight at the default, 32 in the run): calls per
     second over the whole session, saving every trajectory and writing the report pages included,
     and the marginal cost of one more call, (T(2N) - T(N)) / N, which cancels start-up and collection
     (each T the best of three runs);
  3. the physical limit both are compared with: the call's tool-server requests times a measured
     loopback round trip between two processes, plus the copy of the call's seed database.

Run from the repository root:  python benchmarks/oracle_throughput.py [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_callm.authoring.lock import lock  # noqa: E402
from pytest_callm.task.pack import PackRegistry  # noqa: E402
from pytest_callm.runs.runtime import Runtime  # noqa: E402
from pytest_callm.task.task_file import load_task  # noqa: E402
from pytest_callm.toolserver.calldb import CallStore  # noqa: E402

ECHO = """
import socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
conn, _ = server.accept()
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while data := conn.recv(65536):
    conn.sendall(data)
"""

PACKS = REPO / "examples" / "industries"
DANA = {"full_name": "Dana Whitfield", "phone": "503-555-0142"}

BENCH_TASK = {
    "task_name": "BENCH-10: ten tool requests across three agents",
    "customer_name": "Dana Whitfield",
    "intent": "Benchmark only: not a task a caller plays.",
    "traits": [],
    "exp_handoff_path": ["records", "appointments"],
    "exp_tool_calls": [
        {"name": "check_clinic_hours", "parameters": {"day": "monday"}, "status": "ok"},
        {"name": "check_clinic_hours", "parameters": {"day": "saturday"}, "status": "ok"},
        {"name": "transfer_to_records"},
        {"name": "verify_owner", "parameters": DANA, "status": "ok"},
        {"name": "get_vaccination_status", "parameters": {"pet_name": "Pepper"}, "status": "ok"},
        {"name": "get_vaccination_status", "parameters": {"pet_name": "Biscuit"}, "status": "ok"},
        {"name": "send_records", "parameters": {"pet_name": "Pepper", "channel": "email"}, "status": "ok"},
        {"name": "transfer_to_appointments"},
        {"name": "find_open_slots", "parameters": {"service": "vaccine"}, "status": "ok"},
        {"name": "list_appointments", "status": "ok"},
        {"name": "book_appointment", "parameters": {"pet_name": "Pepper", "slot_id": "S-103"}, "status": "ok"},
        {"name": "cancel_appointment", "parameters": {"appointment_id": 2}, "status": "ok"},
    ],
    "metadata": {"category": "Benchmark", "category_slug": "BENCH", "difficulty": "hard", "industry": "vet_clinic"},
}


def write_task(folder: Path) -> Path:
    path = folder / "BENCH-10" / "task.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(BENCH_TASK))
    lock([path], [PACKS])  # the expected state comes from replay, as for every task
    return path


def loopback_round_trip_ms(rounds: int = 3000) -> float:
    """Median round trip of a 300-byte message to another process over 127.0.0.1 (TCP_NODELAY)."""
    echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
    try:
        port = int(echo.stdout.readline())
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            message, times = b"x" * 300, []
            for _ in range(rounds):
                start = time.perf_counter()
                sock.sendall(message)
                got = 0
                while got < len(message):
                    got += len(sock.recv(65536))
                times.append((time.perf_counter() - start) * 1000)
    finally:
        echo.kill()
        echo.wait()
    return statistics.median(times[rounds // 10:])


def database_copy_ms(path: Path, folder: Path, rounds: int = 300) -> float:
    """Median cost of giving a call its own copy of the pack's seed database (and dropping it)."""
    packs = PackRegistry([PACKS])
    _, _, pack = load_task(path, packs)
    store = CallStore(pack, folder / "calls")
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        store.open(f"bench-{i}").close()
        store.remove(f"bench-{i}")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def in_process(path: Path, calls: int, limit: float) -> None:
    packs = PackRegistry([PACKS])
    _, task, pack = load_task(path, packs)
    runtime = Runtime("oracle", packs.loaded())
    try:
        for _ in range(20):  # warm-up
            runtime.run_attempt(task, pack, 1)
        times, requests = [], 0
        for i in range(calls):
            start = time.perf_counter()
            trajectory, verdict = runtime.run_attempt(task, pack, i + 1)
            times.append((time.perf_counter() - start) * 1000)
            assert verdict.passed
            requests = sum(1 for c in trajectory.tool_calls if c.kind == "industry") + 1  # + the state read
    finally:
        runtime.close()
    print(f"in process: {calls} oracle calls of {requests} tool-server requests each")
    print(f"  harness ms per call: median {statistics.median(times):.2f}, mean {statistics.mean(times):.2f}, "
          f"p90 {statistics.quantiles(times, n=10)[-1]:.2f}  ({requests / statistics.median(times) * 1000:.0f} "
          f"requests/s, {1000 / statistics.mean(times):.0f} calls/s); {statistics.median(times) / limit:.1f}x the limit")


def pytest_wall(folder: Path, workers: int, attempts: int) -> float:
    cmd = [sys.executable, "-m", "pytest", str(folder), "--callm-model=oracle", f"--callm-attempts={attempts}",
           f"--callm-industries={PACKS}", "-n", str(workers), "-q", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(f"pytest -n {workers} failed")
    return wall


def through_pytest(folder: Path, workers: int, calls: int, limit: float, repeat: int = 3) -> None:
    # The best of a few runs each: a difference of two single wall times is mostly noise on a busy machine.
    one = min(pytest_wall(folder, workers, calls) for _ in range(repeat))
    two = min(pytest_wall(folder, workers, 2 * calls) for _ in range(repeat))
    print(f"pytest -n {workers}: {2 * calls} calls in {two:.2f} s wall, start-up included ({2 * calls / two:.0f} calls/s); "
          f"marginal {1000 * (two - one) / calls:.1f} ms per call ({calls / (two - one):.0f} calls/s, "
          f"{1000 * (two - one) / calls / limit:.1f}x the limit)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per measurement (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="callm-bench-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")
        path = write_task(folder)
        requests = sum(1 for c in BENCH_TASK["exp_tool_calls"] if not c["name"].startswith("transfer_")) + 1
        rtt, copy = loopback_round_trip_ms(), database_copy_ms(path, folder)
        limit = requests * rtt + copy
        print(f"loopback limit: {requests} tool-server requests x {rtt:.3f} ms round trip + {copy:.3f} ms "
              f"database copy = {limit:.2f} ms per call")
        in_process(path, args.calls, limit)
        for workers in (0, 2):
            through_pytest(folder, workers, args.calls, limit)


if __name__ == "__main__":
    main()
