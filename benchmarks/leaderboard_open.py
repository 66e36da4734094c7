"""How long the leaderboard page of many models takes to open in Chromium, from file://, offline.

An oracle run of the example tasks is made once (or `--source DIR` names a run), then copied into
`--models` (30) run directories whose model names and figures are altered: each copy's attempts are
made to fail in a pattern of its own (so pass@1, pass^k and their intervals differ and are recomputed
as a run computes them), and each gets a usage total of its own (TTFT on both sides of the 1,000 ms
line, some without prices, one whose server reported no usage). `callm leaderboard` writes the page;
headless Chromium then opens a small wrapper page that loads it in a frame and records the time from
the wrapper's start to the frame's `load` event (parsing, styles, layout of the tables and SVG plots),
and also the wall time of `chromium --dump-dom` on the page against that of a blank page.

Run from the repository root:  python benchmarks/leaderboard_open.py [--models 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_TASKS = REPO / "examples" / "tasks" / "vet_clinic"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-default-apps", "--disable-sync", "--no-first-run"]
WRAPPER = """<!doctype html><html><head><meta charset="utf-8"><script>var t0 = performance.now();</script></head>
<body><iframe id="board" style="width:1280px;height:2000px" src="{src}"
 onload="document.body.setAttribute('data-load-ms', (performance.now() - t0).toFixed(1))"></iframe></body></html>
"""


def oracle_run(dest: Path) -> Path:
    """An oracle run of the example tasks (8 tasks, 5 attempts each) into `dest`."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                           "--callm-model=oracle", f"--callm-out={dest}"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
    return dest


def _usage(i: int, calls: int) -> dict | None:
    """A usage total of its own for model i: TTFT from 300 to ~2,000 ms, every fifth without prices,
    the seventh with no usage reported by its server."""
    if i == 0:
        return None  # the oracle itself: no model requests
    requests = calls * 6
    ttft = 250.0 + 61.0 * i
    hours = calls * 90 / 3600
    cost = None if i % 5 == 0 else round(0.002 * i * calls, 6)
    without = requests if i == 7 else 0
    total = {"label": "all industries", "calls": calls, "requests": requests, "requests_without_usage": without,
             "ttft_median_ms": ttft, "input_tokens": 900 * requests, "cached_input_tokens": 300 * requests,
             "output_tokens": 60 * requests, "reasoning_tokens": 0, "cost_usd": cost, "est_hours": hours,
             "cost_per_call": cost / calls if cost is not None else None,
             "cost_per_hour": cost / hours if cost is not None else None}
    return {"industries": {"vet_clinic": {**total, "label": "vet_clinic"}}, "total": total}


def synthetic_runs(source: Path, dest: Path, count: int, seed: int = 7) -> list[Path]:
    """`count` run directories made from the run in `source`: model i fails each attempt with its own
    probability (0 for the first), figures recomputed as the run computes them."""
    from pytest_callm.saved.merge import build_report
    from pytest_callm.saved.rundir import RunDir, write_json

    manifest = json.loads((source / "manifest.json").read_text())
    report = json.loads((source / "report.json").read_text())
    rng = random.Random(seed)
    out = []
    for i in range(count):
        name = f"model-{i:02d}-{'ab'[i % 2]}"
        run = dest / name
        run.mkdir(parents=True)
        fail = 0.0 if i == 0 else min(0.9, 0.03 * i)
        attempts = []
        for a in report["attempts"]:
            a = dict(a)
            if rng.random() < fail:
                a["passed"], a["gates"] = False, {**a.get("gates", {}), "database": False}
            attempts.append(a)
        built = build_report(attempts, name, report["k"], "clean")
        built["usage"] = _usage(i, len(attempts))
        # Each stands for a CALLM result (a simulated caller on a model of its own), so it is ranked.
        write_json(run / "manifest.json", {**manifest, "caller": {"kind": "model", "name": "caller-model"},
                                           "comparable": {**manifest["comparable"], "model": name}})
        RunDir(run).write_report(built)
        out.append(run)
    return out


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _dump(chromium: str, profile: Path, url: str) -> tuple[str, float]:
    start = time.perf_counter()
    proc = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return proc.stdout, wall


def load_ms(chromium: str, index: Path, work: Path) -> float:
    """Milliseconds from a wrapper page's start to the `load` event of the leaderboard in its frame."""
    work.mkdir(parents=True, exist_ok=True)
    wrapper = work / "open-leaderboard.html"
    wrapper.write_text(WRAPPER.format(src=index.resolve().as_uri()))
    dom, _ = _dump(chromium, work / f"profile-{time.monotonic_ns()}", wrapper.as_uri())
    found = re.search(r'data-load-ms="([\d.]+)"', dom)
    if not found:
        raise RuntimeError("the wrapper page recorded no load time: " + dom[-1000:])
    return float(found.group(1))


def dump_wall_ms(chromium: str, index: Path, work: Path) -> tuple[float, float]:
    """Wall milliseconds of `chromium --dump-dom` on the page and on a blank page (the browser's start)."""
    blank = work / "blank.html"
    blank.write_text("<!doctype html><title>blank</title>")
    _, base = _dump(chromium, work / f"profile-{time.monotonic_ns()}", blank.as_uri())
    _, page = _dump(chromium, work / f"profile-{time.monotonic_ns()}", index.resolve().as_uri())
    return page, base


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, help="a run directory to copy (default: a new oracle run)")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium on PATH", file=sys.stderr)
        return 2
    from pytest_callm.report.leaderboard import main as leaderboard

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        source = args.source or oracle_run(work / "oracle")
        runs = synthetic_runs(source, work / "runs", args.models)
        start = time.perf_counter()
        if leaderboard([*map(str, runs), "--out", str(work / "board")]) != 0:
            return 1
        written = (time.perf_counter() - start) * 1000
        index = work / "board" / "index.html"
        loads = [load_ms(chromium, index, work) for _ in range(args.repeat)]
        walls = [dump_wall_ms(chromium, index, work) for _ in range(args.repeat)]
        print(f"{args.models} models: written in {written:.0f} ms, index.html {index.stat().st_size / 1024:.0f} KiB")
        print(f"open to load event in Chromium (file://): median {statistics.median(loads):.0f} ms "
              f"(runs: {', '.join(f'{v:.0f}' for v in loads)})")
        print(f"chromium --dump-dom wall: page median {statistics.median(p for p, _ in walls):.0f} ms, "
              f"blank page median {statistics.median(b for _, b in walls):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
