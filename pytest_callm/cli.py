"""`callm`: commands around the pytest plugin.

    callm lock [--check] PATHS...     fill or check exp_db_state by replaying answer keys
    callm lint PATHS...               check answer keys and suite composition
    callm prove PATHS... [-v]         replay declared traps, mutants and correct spellings of each key
    callm new-task DIR/ID             a new task file from a template (ID: C4-H5, or C4-H for the next free)
    callm serve [--port N]            run a tool server for --callm-tool-server
    callm fit-line-profile PAIRS.jsonl -o PROFILE.json
                                      fit a phone-line error profile from real calls
    callm compare DIR DIR... [--force]
                                      compare saved runs side by side
    callm leaderboard DIR... [--out DIR] [--force] [--title T]
                                      rank models, one run each: an HTML page, a Markdown table
                                      and a page per model
    callm report DIR                  (re)write the HTML report of a run
    callm models [--model-configs DIR]
                                      list the model configs: bundled and the project's
    callm merge DIR... --out DIR      join shard runs (--callm-shard=I/N) into one run
    callm split-check TRAIN... [--eval DIR]
                                      refuse a training set that shares task ids or near-identical
                                      answer keys with the evaluation set (default: tasks/)
    callm export PATHS... --out FILE.jsonl
                                      one dataset row per task (prompt, info, answer key hash)
    callm judge-check MODEL [--model-configs DIR]
                                      a judge model's precision, recall and Cohen's kappa on every
                                      rule class's labelled sentences
    callm generate PACK --n N --seed S [--out DIR]
                                      training tasks drawn from the pack's locked ones with fresh
                                      people and facts, each proven and refused if it leaks
    callm serve-stand-in [--port 8009] [--tasks PATH]...
                                      the scripted stand-in models (agents that read the answer
                                      key, a caller that reads its brief) on a local server, no key
    callm demo [--out DIR] [--open]   the stand-in agents played on a few locked tasks and ranked:
                                      a leaderboard and choose page with no key
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pytest_callm import gc_pace
from pytest_callm.task.pack import PackError, PackRegistry, default_industries
from pytest_callm.task.task_file import TaskError
from pytest_callm.toolserver.calldb import MAX_LIVE_CALLS



def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    gc_pace.pace()
    if argv[:1] == ["fit-line-profile"]:  # subcommands with their own parser and help
        from pytest_callm.phone.error_profile import fit_profile_main

        return fit_profile_main(argv[1:])
    if argv[:1] == ["compare"]:
        from pytest_callm.report.compare import main as compare_main

        return compare_main(argv[1:])
    if argv[:1] == ["models"]:
        from pytest_callm.model.catalog import main as models_main

        return models_main(argv[1:])
    if argv[:1] == ["leaderboard"]:
        from pytest_callm.report.leaderboard import main as leaderboard_main

        return leaderboard_main(argv[1:])
    if argv[:1] == ["report"]:
        from pytest_callm.report.report_html import main as report_main

        return report_main(argv[1:])
    if argv[:1] == ["merge"]:
        from pytest_callm.report.merged import main as merge_main

        return merge_main(argv[1:])
    if argv[:1] == ["split-check"]:
        from pytest_callm.rl.splits import main as split_check_main

        return split_check_main(argv[1:])
    if argv[:1] == ["export"]:
        from pytest_callm.rl.dataset import main as export_main

        return export_main(argv[1:])
    if argv[:1] == ["generate"]:
        return generate_main(argv[1:])
    if argv[:1] == ["serve-stand-in"]:
        from pytest_callm.standin.cli import main as stand_in_main

        return stand_in_main(argv[1:])
    if argv[:1] == ["demo"]:
        from pytest_callm.standin.demo import main as demo_main

        return demo_main(argv[1:])
    if argv[:1] == ["judge-check"]:
        from pytest_callm.scoring.judge import main as judge_check_main

        return judge_check_main(argv[1:], default_industries(Path.cwd()))
    if argv[:1] == ["prove"]:
        from pytest_callm.authoring.prove import main as prove_main

        try:
            return prove_main(argv[1:], default_industries(Path.cwd()))
        except (PackError, TaskError) as e:
            print(e, file=sys.stderr)
            return 2
    parser = argparse.ArgumentParser(prog="callm", description=__doc__.splitlines()[0])
    parser.add_argument("--industries", action="append", default=[], type=Path,
                        help="extra folder holding industry packs (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_lock = sub.add_parser("lock", help="fill or check exp_db_state by replaying each answer key")
    p_lock.add_argument("paths", nargs="+", type=Path, help="task files or folders of them")
    p_lock.add_argument("--check", action="store_true", help="change nothing; exit 1 if a stored state is stale")
    p_lint = sub.add_parser("lint", help="check that answer keys are fair and suites well formed")
    p_lint.add_argument("paths", nargs="+", type=Path, help="task files or folders of them")
    p_lint.add_argument("--no-suite", action="store_true",
                        help="skip the suite composition check (when linting part of a suite)")
    p_new = sub.add_parser("new-task", help="write a new task file from a template, with the next free id")
    p_new.add_argument("path", type=Path, help="DIR/ID: the pack's task folder and the id, e.g. tasks/legal/C4-H5 "
                                               "(C4-H: the next free hard task of C4)")
    p_new.add_argument("--industry", help="the pack (default: the enclosing folder named after a pack)")
    p_serve = sub.add_parser("serve", help="run a tool server for --callm-tool-server")
    sub.add_parser("fit-line-profile", help="fit a phone-line error profile from real calls (see its --help)")
    sub.add_parser("prove", help="replay each task's declared traps, mutants and correct spellings (see its --help)")
    sub.add_parser("compare", help="compare two or more run directories (see its --help)")
    sub.add_parser("models", help="list the model configs --callm-model can name (see its --help)")
    sub.add_parser("leaderboard", help="rank models from their run directories: page, table, model pages "
                   "(see its --help)")
    sub.add_parser("report", help="write the HTML report of a run directory (see its --help)")
    sub.add_parser("merge", help="join shard run directories into one run (see its --help)")
    sub.add_parser("split-check", help="refuse a training set that leaks into the evaluation set (see its --help)")
    sub.add_parser("export", help="write the tasks as dataset rows, JSON lines (see its --help)")
    sub.add_parser("generate", help="write training tasks with fresh people and facts (see its --help)")
    sub.add_parser("judge-check", help="a judge model's agreement with the rule classes' labelled sentences "
                   "(see its --help)")
    sub.add_parser("serve-stand-in", help="serve the scripted stand-in models on a local OpenAI-compatible "
                   "server, no key (see its --help)")
    sub.add_parser("demo", help="play the stand-in models on a few tasks and rank them: a leaderboard with "
                   "no key (see its --help)")
    p_serve.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 to serve on")
    p_serve.add_argument("--max-live-calls", type=int, default=MAX_LIVE_CALLS,
                         help="live call databases per pack before new calls are refused (429)")
    p_serve.add_argument("--data-dir", type=Path, help="keep each call's SQLite database in this folder, for "
                         "debugging (what --callm-keep-calls does with the server a run starts)")
    args = parser.parse_args(argv)
    industries = default_industries(Path.cwd()) + args.industries

    try:
        if args.command == "lock":
            from pytest_callm.authoring.lock import lock

            results = lock(args.paths, industries, write=not args.check)
            stale = [r for r in results if r.changed]
            for r in stale:
                print(f"{'stale' if args.check else 'locked'}: {r.path}")
            print(f"{len(results)} task file(s), {len(stale)} {'stale' if args.check else 'updated'}")
            return 1 if args.check and stale else 0
        if args.command == "lint":
            from pytest_callm.authoring.lint import lint

            # Named files are a task being written, not a suite: their pack's composition is not checked.
            suite = not args.no_suite and any(p.is_dir() for p in args.paths)
            notes: list[str] = []
            problems, count = lint(args.paths, industries, suite=suite, notes=notes if suite else None)
            for p in problems:
                print(p)
            for note in notes:
                print(note)
            print(f"{count} task file(s), {len(problems)} problem(s)")
            return 1 if problems else 0
        if args.command == "new-task":
            return new_task_main(args.path, industries, args.industry)
        if args.command == "serve":
            from pytest_callm.toolserver.server import serve

            packs = PackRegistry(industries)
            dirs = [packs.get(n).root for n in packs.names()]  # load and check every pack first
            from pytest_callm.toolserver.calldb import TOKEN_ENV

            token = os.environ.get(TOKEN_ENV) or None  # set it here and for the runs that use this server
            serve(dirs, args.port, watch_stdin=False, max_live_calls=args.max_live_calls, token=token,
                  data_dir=args.data_dir,
                  announce=lambda url: print(f"tool server for {', '.join(packs.names())} at {url} "
                                             f"({'its call routes need $' + TOKEN_ENV if token else 'no token: any local user can reach its calls'}; "
                                             "Ctrl-C stops it)", flush=True))
            return 0
    except (PackError, TaskError) as e:
        print(e, file=sys.stderr)
        return 2
    return 0


def generate_main(argv: list[str]) -> int:
    from pytest_callm.authoring.generate import GenerateError, generate
    from pytest_callm.rl.memorisation import KeyOnTask, memorised_passes
    from pytest_callm.rl.splits import clashes, load_tasks, nearest_evaluation

    parser = argparse.ArgumentParser(
        prog="callm generate",
        description="write training tasks composed from the pack's own sub-goals (industries/PACK/compose.py), "
                    "never from locked tasks; each solvable, locked, proven and split-checked (docs/generate.md)")
    parser.add_argument("pack", help="the industry pack, e.g. legal")
    parser.add_argument("--n", type=int, required=True, help="how many tasks")
    parser.add_argument("--seed", type=int, required=True, help="the same seed writes the same files, byte for byte")
    parser.add_argument("--out", type=Path, default=Path("generated"),
                        help="folder to write under, as OUT/PACK/seed-S/ID/task.json (default: generated/, "
                             "outside tasks/, so never collected with the locked suite)")
    parser.add_argument("--eval", dest="evaluation", type=Path, default=None,
                        help="the locked suite: what the tasks must not leak into, and whose names they never use (default: tasks/ "
                             "where it runs, else the installed suite's)")
    parser.add_argument("--industries", action="append", default=[], type=Path,
                        help="extra folder holding industry packs (repeatable)")
    parser.add_argument("--workers", type=int, default=None, help="processes proving the tasks (default: one per core, at most 4)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    from pytest_callm.task.benchmark import locked_tasks

    args.evaluation = args.evaluation or locked_tasks()
    industries = default_industries(Path.cwd()) + args.industries
    try:
        packs = PackRegistry(industries)
        evaluation, problems = load_tasks([args.evaluation / args.pack], packs)
        if problems:
            print("the evaluation set does not load:\n" + "\n".join(problems), file=sys.stderr)
            return 2

        locked_views: dict = {}  # the locked suite's masked views, computed once for every round
        player = KeyOnTask(packs.loaded())

        def leaks(files: list[Path]) -> dict[Path, str]:
            training, _ = load_tasks(files, packs)
            near = nearest_evaluation(training, evaluation, locked_views)
            found = {Path(c.training.task.path): f"{c.reason} {c.evaluation.name}"
                     for c in clashes(training, evaluation, near=near)}
            for path, why in memorised_passes([n for n in near if Path(n.training.task.path) not in found],
                                              player).items():
                found[Path(path)] = f"memorised: {why}"
            return found

        try:
            result = generate(args.pack, args.n, args.seed, args.out, industries, leaks=leaks,
                              locked=args.evaluation, workers=args.workers)
        finally:
            player.close()
    except (GenerateError, PackError, TaskError) as e:
        print(f"callm generate: {e}", file=sys.stderr)
        return 2
    rejected = ", ".join(f"{k} {v}" for k, v in sorted(result.rejected.items())) or "none"
    where = args.out / args.pack / f"seed-{args.seed}"
    print(f"{len(result.written)} of {args.n} task(s) written to {where} in {result.seconds:.0f} s "
          f"({', '.join(f'{k} {v:.0f} s' for k, v in result.phases.items())}); "
          f"draws rejected and drawn again: {result.redrawn} ({rejected})")
    return 0 if len(result.written) == args.n else 1


def new_task_main(target: Path, industries: list[Path], industry: str | None) -> int:
    from pytest_callm.authoring.scaffold import ScaffoldError, new_task

    try:
        _, _, steps = new_task(target, PackRegistry(industries), industry)
    except ScaffoldError as e:
        print(f"callm new-task: {e}", file=sys.stderr)
        return 2
    print(steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
