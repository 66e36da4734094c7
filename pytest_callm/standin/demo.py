"""`callm demo`: a ranked leaderboard and a choose page with no key, from the stand-in models.

    callm demo [--out callm-demo] [--attempts 3] [--tasks N] [--open]

Starts the stand-in server (players.py) in this process on a free port, plays the three stand-in
agents, `stand-in-strong`, `stand-in-middling` and `stand-in-careless`, each in a pytest run of its
own (three at once, on one tool server) on a few tasks of the installed suite, named by their files,
with `stand-in-caller` as the caller, then ranks the three runs with `callm leaderboard`:

    OUT/runs/<model>/     each model's run (report.html, trajectories), as any run
    OUT/logs/<model>.log  each pytest run's output
    OUT/board/            index.html (the ranking), choose.html, leaderboard.md, a page per model

Everything real runs: the model client over HTTP and streaming, the phone line, the simulated
caller, the tool server, the verifier and the pages. What is scripted is the models: the agents are
policies that read the answer key and plant their own mistakes (strong: none, middling: about 1
attempt in 3, careless: 4 in 5), so the ranking shows the pages working, not any model's quality.
Their prices are invented and their first-token delays set (1,200, 300 and 120 ms), so that the
choose page has a trade-off to show: it is written with the paper's 1,000 ms budget on the median
time to first token, which the strong stand-in misses.

Run again with the same --out, the runs already finished are kept (pytest resumes them) and the
board is written again.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import webbrowser
from pathlib import Path

from pytest_callm.standin.book import TaskBook
from pytest_callm.standin.cli import players
from pytest_callm.standin.players import AGENTS
from pytest_callm.standin.server import ScriptedServer
from pytest_callm.task.benchmark import benchmark_industries, benchmark_tasks
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver.process import ToolServer

# Three tasks of each industry, across categories and difficulties; each opens with words of its own,
# so the agents know the task from the caller's first line. Taken in this order: --tasks N the first N.
DEMO_TASKS = ("legal/C4-H3", "healthcare/C5-E1", "customer_support/C2-E2",
              "legal/C2-E2", "healthcare/C1-E1", "customer_support/C3-E1",
              "legal/C1-M2", "healthcare/C2-M1", "customer_support/C5-H1")
TTFT_BUDGET_MS = 1000.0  # the paper's line: over it a model is not conversational
TITLE = "Keyless demo: three stand-in agents (scripted, reading the answer key: not models)"


def task_files(tasks: tuple[str, ...]) -> list[str]:
    """The installed suite's files of these tasks: a run collects them alone, not the whole suite."""
    return [str(benchmark_tasks() / name / "task.json") for name in tasks]


def pytest_command(model: str, base_url: str, tasks: tuple[str, ...], attempts: int, out: Path,
                   tool_server: str) -> list[str]:
    return [sys.executable, "-m", "pytest", *task_files(tasks), "-q", "-p", "no:cacheprovider",
            "-c", str(out / "pytest.ini"), "--rootdir", str(out), f"--callm-model={model}",
            f"--callm-base-url={base_url}", f"--callm-caller-base-url={base_url}",
            f"--callm-tool-server={tool_server}", f"--callm-attempts={attempts}", f"--callm-out={out / 'runs' / model}"]


def play(base_url: str, tasks: tuple[str, ...], attempts: int, out: Path, tool_server: str) -> list[str]:
    """The three agents' runs, at once, on one tool server; the problems of those that did not finish."""
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "pytest.ini").write_text("[pytest]\n")  # this folder is the runs' project: no other settings apply
    running = []
    for care in AGENTS:
        log = (out / "logs" / f"{care.name}.log").open("w")
        proc = subprocess.Popen(pytest_command(care.name, base_url, tasks, attempts, out, tool_server), cwd=out,
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        running.append((care.name, proc, log))
    problems = []
    for name, proc, log in running:
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            for _, other, _ in running:  # wait while each run saves, so the next command resumes it
                other.wait()
            raise
        log.close()
        lines = (out / "logs" / f"{name}.log").read_text(errors="replace").splitlines()
        print(f"  {name}: {lines[-1].strip('= ') if lines else 'no output'}")
        if code not in (0, 1):  # 1: some attempts failed, as planted
            problems.append(f"{name}: pytest exited {code}; its output: {out / 'logs' / (name + '.log')}")
    return problems


def main(argv: list[str] | None = None) -> int:
    from pytest_callm.report.leaderboard import main as leaderboard_main

    parser = argparse.ArgumentParser(prog="callm demo", description="play the scripted stand-in agents on a few "
                                     "locked tasks and rank them: a leaderboard and choose page with no key")
    parser.add_argument("--out", type=Path, default=Path("callm-demo"), help="folder for the runs and the board "
                        "(default: callm-demo/)")
    parser.add_argument("--attempts", type=int, default=3, help="attempts per task (default 3; pass^k with k = this)")
    parser.add_argument("--tasks", type=int, default=len(DEMO_TASKS),
                        help=f"how many of the demo's {len(DEMO_TASKS)} tasks to play (default all)")
    parser.add_argument("--open", action="store_true", help="open the leaderboard in the browser when written")
    args = parser.parse_args(argv)
    if not 1 <= args.tasks <= len(DEMO_TASKS):
        parser.error(f"--tasks must be 1 to {len(DEMO_TASKS)}")
    if args.attempts < 1:
        parser.error("--attempts must be at least 1")
    tasks = DEMO_TASKS[:args.tasks]
    out = args.out.resolve()
    started = time.monotonic()
    try:
        book = TaskBook.load([benchmark_tasks() / name / "task.json" for name in tasks])
    except (ValueError, KeyError, FileNotFoundError) as e:
        print(f"callm demo: {e}", file=sys.stderr)
        return 2
    print(f"callm demo: {len(AGENTS)} stand-in agents x {len(tasks)} tasks x {args.attempts} attempts, "
          f"caller stand-in-caller; runs in {out / 'runs'}")
    packs = {name: load_pack(benchmark_industries() / name) for name in sorted({t.split("/")[0] for t in tasks})}
    tools = ToolServer(packs).start()  # one for the three runs: each would start its own
    try:
        with ScriptedServer(models=(), players=players(book), keep_log=False) as server:
            problems = play(server.base_url, tasks, args.attempts, out, tools.url)
    except KeyboardInterrupt:  # the runs got the terminal's Ctrl-C too, and saved what they had played
        print(f"callm demo: stopped; what was played is saved in {out / 'runs'}: run the same command to go on",
              file=sys.stderr)
        return 130
    finally:
        tools.stop()
    if problems:
        print("callm demo: " + "\n  ".join(problems), file=sys.stderr)
        return 2
    board = out / "board"
    code = leaderboard_main([*(str(out / "runs" / care.name) for care in AGENTS), "--out", str(board),
                             "--title", TITLE, "--ttft-budget", str(TTFT_BUDGET_MS)])
    if code != 0:
        return code
    print(f"callm demo: done in {time.monotonic() - started:.0f} s. Open {board / 'index.html'} "
          f"(and {board / 'choose.html'}).")
    if args.open:
        webbrowser.open((board / "index.html").as_uri())
    return 0

