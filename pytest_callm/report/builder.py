"""The pages' context, built from a run directory: the header (model, settings, hashes), the overview
of the figures, a view of each task and of each of its attempts.

A rescored run (`--callm-rescore`) keeps no trajectories of its own: the pages read those of the run
it rescored, and verify them again with today's verifier (the figures of its report.json came from
that verifier, not from the verdicts stored with the original run).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pytest_callm.report.compare import line_name
from pytest_callm.report.formatting import (PAGE_NAME, STYLESHEET, count, flat_settings, interval, ms, pct, pretty,
                                            show, slug, task_page, usd)
from pytest_callm.report.handoff_graph import handoff_view
from pytest_callm.report.redaction import redact, secret_variables
from pytest_callm.report.sources import Packs, ReportError, load_task_file, pack_folders, read_json
from pytest_callm.report.views import (GATE_TITLES, GATES, database_view, failing_sentence, tool_rows,
                                       transcript_view, usage_view)
from pytest_callm.saved.rundir import RunDir
from pytest_callm.task.digest import pack_hash
from pytest_callm.task.pack import Pack


class Builder:
    def __init__(self, run_dir: Path, packs_dirs: list[Path] | None, report: dict[str, Any] | None = None,
                 known_packs: dict[str, Pack] | None = None):
        """`report`: the run's results so far, for a page written before report.json (task_pages.py);
        `known_packs`: the packs the run played, loaded already (the run writing its own pages)."""
        self.known_packs = known_packs
        self.run_dir = Path(run_dir)
        if not self.run_dir.is_dir():
            raise ReportError(f"{self.run_dir} is not a folder")
        self.manifest = read_json(self.run_dir / "manifest.json")
        self.report = report if report is not None else read_json(self.run_dir / "report.json")
        self.notes: list[str] = []
        self.source = self.run_dir
        self.rescored = False
        rescored_from = (self.manifest or {}).get("rescored_from")
        if not (self.run_dir / "trajectories").is_dir() and rescored_from:
            self.source, self.rescored = Path(rescored_from), True
            self.notes.append(f"This run rescored the trajectories of {rescored_from} with the verifier of its "
                              "day; the attempts below are those trajectories, verified again now.")
        self.saved = RunDir(self.source)
        if self.report is None:
            attempts = self.saved.saved_attempts()
            if self.manifest is None and not attempts:
                raise ReportError(f"{self.run_dir} holds no run (no report.json, manifest.json or trajectories)")
            self.notes.append(f"There is no report.json (the run did not finish): the figures below come from "
                              f"the {len(attempts)} saved trajectories.")
            self.report = self._report_from(attempts)
        self.packs_dirs = [Path(p) for p in packs_dirs] if packs_dirs else None
        self._packs: Packs | None = None
        self._pack_hashes: dict[str, str] = {}
        self.page_name = PAGE_NAME  # the main page's file name: the task pages are in the folder of its stem

    def _report_from(self, saved: list[dict[str, Any]]) -> dict[str, Any]:
        from pytest_callm.scoring.metrics import summarize

        results = []
        for s in saved:
            t = s.get("task") or {}
            verdict = s.get("verdict") or {}
            results.append({"task_id": t.get("task_id"), "industry": t.get("industry"), "category": t.get("category"),
                            "difficulty": t.get("difficulty"), "attempt": t.get("attempt"),
                            "passed": verdict.get("passed"), "gates": {g: (verdict.get(g) or {}).get("passed")
                                                                       for g in GATES}})
        k = (self.manifest or {}).get("k") or 1
        return {"model": ((self.manifest or {}).get("comparable") or {}).get("model"), "k": k,
                "summary": summarize(results, k).to_json() if results else {}, "attempts": results,
                "usage": None, "line_rates": None}

    # packs and tasks

    def packs(self, task_paths: list[Path]) -> Packs:
        """The packs, searched for above these task files too (tasks are read one at a time)."""
        if self._packs is None:
            self._packs = Packs(self.packs_dirs if self.packs_dirs is not None else [], self.known_packs)
        if self.packs_dirs is None:
            self._packs.add(pack_folders(self.run_dir, task_paths))
        return self._packs

    def pack_note(self, industry: str, pack: Pack | None, packs: Packs) -> str | None:
        if pack is None:
            return f"Handoff graph not drawn: {packs.problems.get(industry, 'the industry pack was not found')}."
        saved = (((self.manifest or {}).get("comparable") or {}).get("hashes") or {}).get("packs") or {}
        if industry in saved and industry not in self._pack_hashes:
            self._pack_hashes[industry] = pack_hash(pack)
        if industry in saved and saved[industry] != self._pack_hashes[industry]:
            return (f"The pack at {pack.root} has changed since this run: the graph is today's, and the "
                    "paths are the run's.")
        return None

    # attempts

    def attempt_view(self, entry: dict[str, Any], saved: dict[str, Any] | None, pack: Pack | None,
                     task, raw_task: dict[str, Any] | None, pack_note: str | None) -> dict[str, Any]:
        view = {"number": entry.get("attempt"), "passed": entry.get("passed"), "gates": dict(entry.get("gates") or {}),
                "error": entry.get("error"), "error_kind": entry.get("error_kind"), "saved": saved is not None,
                "note": None, "id": slug(entry["industry"], entry["task_id"], f"attempt-{entry.get('attempt')}"),
                "cuts": [], "rerun_because": []}
        if saved is None:
            if view["passed"] is not None:
                view["note"] = "No trajectory of this attempt is saved in the run directory."
            view["usage"] = usage_view(entry.get("usage"), {})
            return view
        trajectory = saved.get("trajectory") or {}
        verdict = saved.get("verdict") or {}
        stale = self.rescored or verdict.get("passed") != entry.get("passed")
        if stale:
            if task is not None and pack is not None:
                from pytest_callm.call.trajectory import Trajectory
                from pytest_callm.scoring.verdict import score

                verdict = score(task, pack, Trajectory.from_json(trajectory)).to_json()
            else:
                view["note"] = ("The verdict below is the one stored with the trajectory: the task or its pack "
                                "could not be loaded to verify it again, and the report scored it differently.")
        if view["passed"] is None and not entry.get("error"):
            view["passed"] = verdict.get("passed")
        if not view["gates"]:
            view["gates"] = {g: (verdict.get(g) or {}).get("passed") for g in GATES if g in verdict}
        view["gate_views"] = [{"gate": g, "title": GATE_TITLES[g], "passed": (verdict.get(g) or {}).get("passed"),
                               "problems": (verdict.get(g) or {}).get("problems") or []} for g in GATES if g in verdict]
        view["sentence"] = failing_sentence(view["gates"])
        words = (verdict.get("words") or {}).get("details") or {}
        view["judge"] = [f"{f.get('where')}: {f.get('said')!r} breaks {f.get('rule')}" for f in words.get("judge") or []
                         if isinstance(f, dict)]
        view["tools"] = tool_rows(verdict.get("tools") or {}, trajectory, pack, raw_task)
        view["tool_counts"] = Counter(r["state"] for r in view["tools"])
        view["handoff"] = handoff_view(verdict.get("handoff") or {}, trajectory, pack, pack_note)
        view["database"] = database_view(verdict.get("database") or {})
        view["transcript"] = transcript_view(trajectory)
        view["usage"] = usage_view(saved.get("usage") or entry.get("usage"), trajectory)
        view["cuts"] = list(trajectory.get("cuts") or [])
        view["rerun_because"] = list(trajectory.get("rerun_because") or [])
        return view

    def grouped(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The report's attempts by (industry, task id), in the report's order."""
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for a in self.report.get("attempts") or []:
            if a.get("industry") and a.get("task_id"):
                grouped[(a["industry"], a["task_id"])].append(a)
        return grouped

    def task_view(self, industry: str, task_id: str, attempts: list[dict[str, Any]], full: bool) -> dict[str, Any]:
        """A task and its attempts: every attempt in full (`full`, its own page), or only those that did
        not pass (the main page: a passing attempt there is a line, read from report.json alone)."""
        saved: dict[Any, dict[str, Any] | None] = {}
        path = None
        for a in attempts:
            if full or a.get("passed") is not True or path is None:
                s = saved[a.get("attempt")] = self.saved.load_attempt(industry, task_id, a.get("attempt"))
                path = path or ((s or {}).get("task") or {}).get("path")
        packs = self.packs([Path(path)] if path else [])
        pack = packs.get(industry)
        note = self.pack_note(industry, pack, packs)
        in_full = full or any(a.get("passed") is not True for a in attempts)
        # A task only summarised needs its file's title, not the task built (and validated) from it.
        raw, task, problem = load_task_file(Path(path) if path else None, pack if in_full else None)
        page = task_page(self.page_name, industry, task_id)
        views = []
        for a in attempts:
            if full or a.get("passed") is not True:
                views.append(self.attempt_view(a, saved.get(a.get("attempt")), pack, task, raw, note))
            else:
                views.append({"number": a.get("attempt"), "passed": True, "gates": dict(a.get("gates") or {}),
                              "id": slug(industry, task_id, f"attempt-{a.get('attempt')}"), "line": True,
                              "usage": usage_view(a.get("usage"), {})})
            views[-1]["href"] = f"{page}#{views[-1]['id']}"
        views.sort(key=lambda v: ({False: 0, None: 1, True: 2}[v["passed"]], v["number"] or 0))
        # The expected path, drawn once for a task's page: its passing attempts say "as expected".
        drawn = next((v["handoff"] for v in views if v.get("handoff")), None) if full else None
        expected_path = None if drawn is None else {
            "graph": (drawn["graphs"] or {}).get("expected"),
            "text": " → ".join([drawn["entry"], *drawn["expected"]]) if drawn["graphs"]
            else " → ".join(drawn["expected"]) or "(no handoff)"}
        score = (self.report.get("summary") or {}).get("tasks", {}).get(f"{industry}/{task_id}") or {}
        title = task.title if task is not None else (raw or {}).get("task_name", task_id).split(":", 1)[-1].strip()
        first = attempts[0]
        passes = sum(1 for v in views if v["passed"] is True)
        failures = sum(1 for v in views if v["passed"] is False)
        gate_failures = Counter(g for v in views for g, ok in v["gates"].items() if ok is False)
        return {
            "industry": industry, "task_id": task_id, "title": title, "id": slug(industry, task_id), "page": page,
            "category": first.get("category"), "difficulty": first.get("difficulty"),
            "category_name": ((raw or {}).get("metadata") or {}).get("category"),
            "customer": (raw or {}).get("customer_name"), "intent": (raw or {}).get("intent"),
            "traits": [(t.get("trait_name"), show(t.get("value"))) for t in (raw or {}).get("traits") or []
                       if isinstance(t, dict)],
            "forbidden": (raw or {}).get("forbidden_tools") or [],
            "task_problem": problem, "path": str(path or ""), "expected_path": expected_path,
            "attempts": views, "full": [v for v in views if not v.get("line")],
            "lines": [v for v in views if v.get("line")], "passes": passes, "failures": failures,
            "unscored": sum(1 for v in views if v["passed"] is None),
            "gate_failures": [f"{GATE_TITLES[g]} {gate_failures[g]}" for g in GATES if gate_failures[g]],
            "pass_at_1": score.get("pass_at_1", passes / (passes + failures) if passes + failures else None),
            "pass_k": score.get("pass_k"),
        }

    def build(self) -> dict[str, Any]:
        """The main page: the overview, every attempt that did not pass in full, a line for each that did."""
        tasks = [self.task_view(industry, task_id, attempts, full=False)
                 for (industry, task_id), attempts in self.grouped().items()]
        tasks.sort(key=lambda t: (t["failures"] == 0 and t["unscored"] == 0,
                                  t["pass_at_1"] if t["pass_at_1"] is not None else -1, t["industry"], t["task_id"]))
        names = {(t["industry"], t["category"]): t["category_name"] for t in tasks if t["category_name"]}
        return {**self.header(), "overview": self.overview(self.report.get("summary") or {}, names), "tasks": tasks,
                "stylesheet": None,
                "passing": [(t, v) for t in tasks for v in t["lines"]],
                "failing_attempts": sum(t["failures"] for t in tasks),
                "unscored_attempts": sum(t["unscored"] for t in tasks),
                "attempt_total": sum(len(t["attempts"]) for t in tasks),
                "failing_tasks": sum(1 for t in tasks if t["failures"] or t["unscored"]), "notes": self.notes}

    def build_task(self, industry: str, task_id: str) -> dict[str, Any]:
        """A task's own page: every attempt of it (those that passed in brief)."""
        task = self.task_view(industry, task_id, self.grouped()[(industry, task_id)], full=True)
        return {**self.header(), "task": task, "home": "../../" + self.page_name, "notes": self.notes,
                "stylesheet": "../" + STYLESHEET}

    # the page's top

    def header(self) -> dict[str, Any]:
        manifest = self.manifest or {}
        comparable = manifest.get("comparable") or {}
        hashes = comparable.get("hashes") or {}
        report = self.report
        settings = []
        for label, key in (("model under test", "model_config"), ("caller", "caller_config")):
            config = comparable.get(key)
            settings.append({"label": label, "rows": flat_settings(redact(config)) if config else [],
                             "none": "built in (no config)" if key == "model_config"
                             else "none: the oracle replays answer keys" if comparable.get("model") == "oracle"
                             else "the default caller"})
        line_rates = report.get("line_rates")
        return {
            "model": report.get("model") or comparable.get("model") or "?",
            "run_name": self.run_dir.resolve().name, "run_path": str(self.run_dir.resolve()),
            "created_at": manifest.get("created_at"), "package_version": manifest.get("package_version"),
            "k": report.get("k") or manifest.get("k"), "attempts_per_task": comparable.get("attempts"),
            "line": line_name(comparable.get("line")), "rescored_from": manifest.get("rescored_from"),
            "interrupted": report.get("interrupted"),  # the run stopped early: every figure is partial
            "settings": settings, "key_variables": secret_variables(manifest),
            "hashes": [("tasks", hashes.get("tasks")), ("verifier", hashes.get("verifier")),
                       *((f"pack {n}", h) for n, h in sorted((hashes.get("packs") or {}).items()))],
            "verifier_hash": hashes.get("verifier"), "verifier_now": manifest.get("verifier_now"),
            "line_rates": pretty(line_rates) if line_rates else None,
            "usage": self.usage_overview(report.get("usage")),
        }

    @staticmethod
    def usage_overview(usage: dict[str, Any] | None) -> list[dict[str, Any]] | None:
        if not usage:
            return None
        groups = [*((usage.get("industries") or {}).values()), *([usage["total"]] if usage.get("total") else [])]

        def gap(text: str, g: dict[str, Any]) -> str:  # a figure the server did not report is not "n/a"
            return "not reported" if text == "n/a" and g.get("requests_without_usage") else text

        return [{"label": g.get("label"), "calls": count(g.get("calls")), "requests": count(g.get("requests")),
                 "ttft": ms(g.get("ttft_median_ms")), "input": gap(count(g.get("input_tokens")), g),
                 "cached": gap(count(g.get("cached_input_tokens")), g), "output": gap(count(g.get("output_tokens")), g),
                 "cost": gap(usd(g.get("cost_usd")), g), "per_call": gap(usd(g.get("cost_per_call")), g),
                 "per_hour": gap(usd(g.get("cost_per_hour")), g)} for g in groups]

    @staticmethod
    def overview(summary: dict[str, Any], names: dict[tuple[str, str], str] | None = None) -> dict[str, Any]:
        """The figures per industry, category (named: `names`, (industry, code) -> the tasks' category name),
        difficulty and across industries."""
        intervals = summary.get("intervals") or {}
        rows = []

        def row(g: dict[str, Any], level: str, iv: dict[str, Any] | None = None, label: str | None = None):
            rows.append({"label": label or g.get("label"), "level": level, "tasks": g.get("tasks"),
                         "attempts": g.get("attempts"), "passes": g.get("passes"),
                         "pass_at_1": pct(g.get("pass_at_1")), "pass_k": pct(g.get("pass_k")),
                         "short": g.get("short_tasks") or 0,
                         "ci_1": interval((iv or {}).get("pass_at_1")), "ci_k": interval((iv or {}).get("pass_k"))})

        for name, g in (summary.get("industries") or {}).items():
            row(g, "industry", (intervals.get("industries") or {}).get(name))
            for what, level in (("categories", "category"), ("difficulties", "difficulty")):
                for key, cg in (summary.get(what) or {}).items():
                    if key.split("/", 1)[0] == name:
                        code = key.split("/", 1)[-1]
                        named = (names or {}).get((name, code)) if level == "category" else None
                        row(cg, level, label=f"{cg.get('label') or code} {named}" if named else None)
        if summary.get("overall") and len(summary.get("industries") or {}) > 1:
            row(summary["overall"], "overall", intervals.get("overall"))
        return {"rows": rows, "k": summary.get("k"), "partial": summary.get("partial"),
                "has_ci": bool(intervals), "ci_method": intervals.get("method"),
                "ci_confidence": intervals.get("confidence"), "ci_resamples": intervals.get("resamples"),
                "gate_failures": summary.get("gate_failures") or {}, "errors": summary.get("errors") or {}}
