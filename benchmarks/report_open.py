"""How long the whole suite's report page takes to open in Chromium, beyond a tiny page.

Runs `pytest --callm-model=oracle` over the benchmark's tasks (or takes `--run DIR`, a finished run
directory), then has headless Chromium load, lay out and paint `report.html` into a screenshot, and
the same for a tiny page: Chromium's own start-up and exit cancel out, what is left is the page's.
The best of `--repeat` tries of each, so that a busy machine's hiccup does not count as the page's.
The figure is printed, never asserted by a test (a loaded machine is no measure of a page).

Run from the repository root:  python benchmarks/report_open.py [--run DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--window-size=1280,2400"]


def open_time(chromium: str, page: Path, scratch: Path) -> float:
    scratch.mkdir(parents=True)
    start = time.perf_counter()
    result = subprocess.run([chromium, *FLAGS, f"--user-data-dir={scratch}", f"--screenshot={scratch / 'shot.png'}",
                             page.as_uri()], capture_output=True, text=True, timeout=120)
    spent = time.perf_counter() - start
    if result.returncode != 0 or not (scratch / "shot.png").exists():
        sys.exit(f"chromium did not paint {page}: {result.stderr[-500:]}")
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, help="a finished run directory (default: a new oracle run)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        run = args.run.resolve() if args.run else None
        if run is None:
            run = scratch / "run"
            subprocess.run([sys.executable, "-m", "pytest", "--callm-model=oracle", "-q", "-p", "no:cacheprovider",
                            f"--callm-out={run}"], cwd=REPO, check=True, capture_output=True)
        tiny = scratch / "tiny.html"
        tiny.write_text("<!doctype html><html><head><title>tiny</title></head><body><p>tiny</p></body></html>")
        times = {name: min(open_time(chromium, page, scratch / f"{name}-{n}") for n in range(args.repeat))
                 for name, page in (("tiny", tiny), ("report", run / "report.html"))}
        size = (run / "report.html").stat().st_size
        print(f"report.html ({size / 1024:.0f} KiB): {times['report']:.2f} s to paint in Chromium, a tiny page "
              f"{times['tiny']:.2f} s: the page's own {times['report'] - times['tiny']:.2f} s "
              f"(best of {args.repeat})")


if __name__ == "__main__":
    main()
