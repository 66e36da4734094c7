"""How fast SIGTERM to the main pytest process stops a run (docs/reliability.md, "Stopping").

A local OpenAI-compatible server (tests/openai_server.py, in a thread of this script) plays the example
pack's C2-E1 answer key and a scripted caller. pytest plays it `--attempts` (20) times, 2 calls in flight,
in one process and with `-n 2`. Once an attempt is saved, every request hangs; once one hangs, SIGTERM
goes to the main process alone (not its group), as a job runner or `kill PID` sends it. It prints, per
mode, the best and the median of `--repeat` (3) runs of:

  processes gone  SIGTERM to the last of the run's other processes (workers, tool servers) gone
  main exited     SIGTERM to the main process's exit (the interrupted line and report written)

The aim is 3 s for the first. tests/test_signals.py checks what must hold at any load: nothing
outlives the main process, and the interrupted line says what was saved.

Run from the repository root:  python benchmarks/stop_time.py [--repeat 3] [--attempts 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from openai_server import AnswerKeyAgent, ScriptCaller, ScriptedServer  # noqa: E402
from process_tree import sigterm_mid_call  # noqa: E402

PACK = REPO / "examples" / "industries" / "vet_clinic"
TASK = REPO / "examples" / "tasks" / "vet_clinic" / "C2-E1"
MODES = {"one process": [], "-n 2": ["-n", "2"]}


def project(folder: Path, attempts: int, server: ScriptedServer) -> None:
    shutil.copytree(PACK, folder / "industries" / PACK.name)
    shutil.copytree(TASK, folder / "tasks" / PACK.name / TASK.name)
    (folder / "pytest.ini").write_text(f"[pytest]\ncallm_attempts = {attempts}\ncallm_line = clean\n"
                                       "callm_model_configs = models\n")
    (folder / "models").mkdir()
    for name in ("agent", "caller"):
        (folder / "models" / f"{name}.toml").write_text(
            f'model = "{name}-model"\nbase_url = "{server.base_url}"\napi_key_env = ""\n')


def stop_once(folder: Path, server: ScriptedServer, workers: list[str], n: int) -> tuple[float, float]:
    server.reset(agent=AnswerKeyAgent(folder / "tasks" / PACK.name / TASK.name / "task.json", folder / "industries"),
                 caller=ScriptCaller(["What are your hours on Monday?", "Thanks, bye."]),
                 models=("agent-model", "caller-model"))
    run = folder / f"run-{n}"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--callm-model=agent",
           "--callm-caller-model=caller", "--callm-concurrency=2", f"--callm-out={run}",
           *workers]
    stopped = sigterm_mid_call(cmd, folder, run, server, folder / f"out-{n}.txt")
    if "callm: interrupted:" not in stopped.text:
        sys.exit(f"no interrupted line:\n{stopped.text[-2000:]}")
    return stopped.gone_s, stopped.exited_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        folder = Path(tmp)
        project(folder, args.attempts, server)
        n = 0
        for _ in range(args.repeat):
            for mode, workers in MODES.items():
                n += 1
                results[mode].append(stop_once(folder, server, workers, n))
                print(f"  {mode}: processes gone {results[mode][-1][0]:.2f} s, main exited "
                      f"{results[mode][-1][1]:.2f} s", file=sys.stderr, flush=True)
    print(f"SIGTERM to the main process, {args.attempts} attempts of {PACK.name}/{TASK.name}, calls hanging; "
          f"{os.cpu_count()} cores, load {load:.1f} at start; best (median) of {args.repeat}")
    for mode, runs in results.items():
        gone, exited = [r[0] for r in runs], [r[1] for r in runs]
        print(f"  {mode:<12} processes gone {min(gone):.2f} s ({statistics.median(gone):.2f}), "
              f"main exited {min(exited):.2f} s ({statistics.median(exited):.2f})   aim: gone within 3 s")


if __name__ == "__main__":
    main()
