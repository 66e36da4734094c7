"""Task pages written during the run: each as soon as the run holds every attempt of its task.

The process that gathers the results (the xdist controller, or the only process) hands each attempt's
result to `TaskPages.add`; the attempt's trajectory is already saved by then (the worker saves it
before it reports). When the last selected attempt of a task arrives, that task's page is written
from the run directory, so the end of the run writes only the main page and the pages of tasks
whose attempts did not all arrive (a run stopped early, tasks written in Python).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pytest_callm.scoring.metrics import pass_hat_k

NODE_ID = re.compile(r"(.+?)::(.+)\[attempt-(\d+)\]")


class TaskPages:
    def __init__(self, run_dir: Path, packs_dirs: list[Path] | None, model: str | None, k: int,
                 expected: dict[tuple[str, str], int], known_packs: dict | None = None):
        self.run_dir, self.packs_dirs, self.model, self.k = Path(run_dir), packs_dirs, model, k
        self.known_packs = known_packs  # the packs the run played, loaded already
        self.expected = expected
        self.results: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self.written: set[tuple[str, str]] = set()
        self._builder = None

    @classmethod
    def for_items(cls, run_dir: Path, packs_dirs: list[Path] | None, model: str | None, k: int,
                  ids: list[str], task_of_file: dict[str, tuple[str, str]],
                  known_packs: dict | None = None) -> "TaskPages":
        """`ids`: the selected items' node ids; `task_of_file`: (industry, task id) by task file (as in the ids)."""
        expected: Counter = Counter()
        for nodeid in ids:
            match = NODE_ID.fullmatch(nodeid)
            if match and match[1] in task_of_file:
                expected[task_of_file[match[1]]] += 1
        return cls(run_dir, packs_dirs, model, k, dict(expected), known_packs)

    def add(self, result: dict[str, Any]) -> None:
        key = (result.get("industry"), result.get("task_id"))
        got = self.results[key]
        got.append(result)
        if len(got) > self.expected.get(key, 0):
            self.written.discard(key)  # more attempts than selected: the end of the run writes it again
        elif len(got) == self.expected[key]:
            try:
                self._write(key, got)
            except Exception:  # noqa: BLE001  a page is never worth a run: the end of the run writes it
                self.written.discard(key)

    def _write(self, key: tuple[str, str], results: list[dict[str, Any]]) -> None:
        from pytest_callm.report.builder import Builder
        from pytest_callm.report.formatting import task_page
        from pytest_callm.report.report_html import render_task_page, write_page, write_stylesheet

        if self._builder is None:
            self._builder = Builder(self.run_dir, self.packs_dirs, report={"model": self.model, "k": self.k},
                                    known_packs=self.known_packs)
            write_stylesheet(self.run_dir / self._builder.page_name)
        builder = self._builder
        attempts = sorted(results, key=lambda r: r.get("attempt") or 0)
        scored = [r for r in attempts if r.get("passed") is not None]
        c = sum(1 for r in scored if r["passed"])
        n = len(scored)
        builder.report = {"model": self.model, "k": self.k, "attempts": attempts, "summary": {"tasks": {
            f"{key[0]}/{key[1]}": {"pass_at_1": c / n if n else None, "pass_k": pass_hat_k(n, c, self.k)}}}}
        write_page(self.run_dir / task_page(builder.page_name, *key), render_task_page(builder, *key))
        self.written.add(key)
