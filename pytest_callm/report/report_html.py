"""The HTML report of a run: pages a person opens to see how a model did and why a call failed.

    callm report RUN_DIR [--industries DIR] [-o PAGE]      ->  RUN_DIR/report.html
                                                               RUN_DIR/report/<industry>/<task>.html

The pages are made with Jinja2 (autoescape on: every value from a run is escaped) from the run
directory alone: `report.json` for the figures, `manifest.json` for the settings, and the trajectory
files for what happened in each attempt. They need no server and load nothing from elsewhere: the
main page's CSS is inline, the task pages link their one stylesheet beside them (`report/style.css`,
relative: file:// loads it), the handoff graphs are inline SVG, links are relative, and the only
interactive parts are <details>.

The main page (`report.html`, report.html.j2) stays light however long the run:

- an overview table per industry, category and difficulty (tasks, attempts, pass@1 and pass^k, with
  the bootstrap intervals where the summary has them), the gate failures and the unscored attempts;
- the model, caller and line settings of the manifest (the names of the key variables, never a key);
- a table of the tasks, failing ones first, each linking to its section or its page;
- a section per task with an attempt that failed or was not scored, holding those attempts in full;
- one line per passing attempt (its gates; requests, TTFT, tokens and cost when the run has usage),
  read from report.json alone, linking to the attempt on its task's page.

A task's page (`report/<industry>/<task>.html` beside `report.html`, task.html.j2) draws the task's
expected handoff path once, then holds every attempt of the task, failing ones first and open,
passing ones collapsed. One macro (macros.html.j2) draws an attempt on either page. One that did not
pass is in full: the combined verdict and the three gates, expected against actual tool calls with
the differing arguments marked (the results in a collapsible block), the expected and the actual
handoff path drawn on the industry's handoff graph, the database rows that differ, the transcript
with what the caller said beside what the agent heard (recognizer errors marked), and the attempt's
tokens, cost and latency. One that passed is in brief, saying what equals the expected rather than
repeating it: a line for its calls, its path ("as expected", or drawn when it holds more hops) and its
database, the transcript in full (every tool call a line of it, with its arguments and status), and
its cost and latency in a line. That keeps a whole run directory near 10 KB an oracle attempt.

During a run the task pages are written as each task's attempts all arrive (task_pages.py); at the
end `write_html_report` writes the main page and the task pages not written yet. `callm report` and
`callm merge` write every page.

The parts, one concern each: `builder` (the pages' context, from the run directory), `views` (an
attempt's tool calls, database rows, transcript and usage as shown), `handoff_graph` (the SVG geometry of
a pack's handoffs), `word_diff` (said beside heard), `sources` (the packs and task files a run names),
`formatting` (how values read, where pages are), `redaction` (secrets kept off the pages); this module
renders and writes the pages, and is the `callm report` command.

A page is bounded whatever a model wrote (a call's trajectory may hold 2,000,000 characters, a task
5 of them): a value longer than `SHOWN_CHARS` is cut where it is shown, saying how much was cut (the
trajectory file keeps it whole); a page still over `PAGE_CHARS` is drawn again with values cut to
`CUT_CHARS`; and a main page still over it shows its failing attempts on their task pages only, saying
so. The limits never touch what an oracle run shows (tests/test_bounds.py).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Collection

import jinja2

from pytest_callm.model import redact as secrets_out
from pytest_callm.report.builder import Builder
from pytest_callm.report.formatting import PAGE_NAME, STYLESHEET, count, ms, pct, show, task_page, usd
from pytest_callm.report.redaction import secret_variables, strike_secrets
from pytest_callm.report.sources import ReportError
from pytest_callm.saved.rundir import RunDirError


SHOWN_CHARS = 10_000  # a value on a page: a long tool result reads whole, a model's flood does not
PAGE_CHARS = 4_000_000  # a page: past it, values are cut to CUT_CHARS
CUT_CHARS = 500


def clipped(value: Any, limit: int) -> Any:
    """The page's context with every text longer than `limit` cut, saying how much was cut."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return (f"{secrets_out.cut(value, limit)} … [{len(value) - limit:,} more characters, cut from the page; the "
                "attempt's trajectory file holds them all]")  # redacted before the cut: no key kept as a prefix
    if isinstance(value, dict):
        return {k: clipped(v, limit) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(clipped(v, limit) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(clipped(v, limit) for v in value)
    return value


def bounded(template: str, context: Callable[[], dict[str, Any]], *, main: bool = False) -> str:
    """A page rendered within PAGE_CHARS (see the module's docstring)."""
    ctx = context()
    for limit in (SHOWN_CHARS, CUT_CHARS):
        page = environment().get_template(template).render(**clipped(ctx, limit))
        if len(page) <= PAGE_CHARS:
            return page
    if main:  # failing attempts in full: on their task pages only
        ctx = clipped(context(), CUT_CHARS)
        for t in ctx["tasks"]:
            t["full"] = []
        ctx["notes"] = [*ctx["notes"], f"Every attempt is on its task's page only (the task's link): with the "
                                       f"failing ones in full, this page would hold {len(page):,} characters."]
        page = environment().get_template(template).render(**ctx)
    return page


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment, made (and its templates compiled) once a process."""
    # Compiling the templates took a fifth of a short run's CPU, in every process that writes a page:
    # their code is kept as Python keeps a module's (jinja's cache in the temp folder, checked against
    # each template's source), unless bytecode is not to be written (PYTHONDONTWRITEBYTECODE).
    cache = None if sys.dont_write_bytecode else jinja2.FileSystemBytecodeCache()
    env = jinja2.Environment(loader=jinja2.PackageLoader("pytest_callm.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             bytecode_cache=cache)
    env.filters.update(show=show, pct=pct, ms=ms, usd=usd, num=count)
    return env


def render_report(run_dir: Path, packs_dirs: list[Path] | None = None, page_name: str = PAGE_NAME) -> str:
    """The main page."""
    builder = Builder(Path(run_dir), packs_dirs)
    builder.page_name = page_name
    page = bounded("report.html.j2", builder.build, main=True)
    return strike_secrets(page, secret_variables(builder.manifest))


def render_task_page(builder: "Builder", industry: str, task_id: str) -> str:
    page = bounded("task.html.j2", lambda: builder.build_task(industry, task_id))
    return strike_secrets(page, secret_variables(builder.manifest))


def write_page(path: Path, page: str) -> None:
    """Write a page atomically (a reader sees the old page or the new one), with secrets struck."""
    page = secrets_out.text(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # readable like any other file (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_stylesheet(page: Path) -> Path:
    """The task pages' stylesheet (`report/style.css` beside `report.html`), written when it differs."""
    path = page.parent / page.stem / STYLESHEET
    css = environment().get_template("style.css.j2").render()
    if not path.is_file() or path.read_text(encoding="utf-8") != css:
        write_page(path, css)
    return path


def write_task_pages(builder: "Builder", page: Path, keys: list[tuple[str, str]]) -> list[Path]:
    """Write the pages of these (industry, task) beside the main `page`, and their stylesheet; returns
    the pages' paths."""
    if keys:
        write_stylesheet(page)
    written = []
    for industry, task_id in keys:
        path = page.parent / task_page(page.name, industry, task_id)
        write_page(path, render_task_page(builder, industry, task_id))
        written.append(path)
    return written


def write_html_report(run_dir: Path, packs_dirs: list[Path] | None = None, *, out: Path | None = None,
                      written: Collection[tuple[str, str]] = (), known_packs: dict | None = None) -> Path:
    """Write the run's report: the main page (by default `<run_dir>/report.html`) and the page of each
    (industry, task) beside it (`report/<industry>/<task>.html`), but those `written` during the run
    already (task_pages.py). `known_packs`: the packs the run played, loaded already. Returns the main
    page's path."""
    path = Path(out) if out is not None else Path(run_dir) / PAGE_NAME
    builder = Builder(Path(run_dir), packs_dirs, known_packs=known_packs)
    builder.page_name = path.name
    write_page(path, strike_secrets(bounded("report.html.j2", builder.build, main=True),
                                     secret_variables(builder.manifest)))
    skip = set(written)
    pages = write_task_pages(builder, path, [key for key in builder.grouped() if key not in skip])
    pages += [path.parent / task_page(path.name, *key) for key in skip]
    for old in set((path.parent / path.stem).glob("*/*.html")) - set(pages):  # tasks the run no longer has
        old.unlink()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callm report", description="Write the HTML report of a run directory.")
    parser.add_argument("run_dir", type=Path, help="the run directory (--callm-out of the run)")
    parser.add_argument("--industries", action="append", type=Path, default=None,
                        help="folder holding the industry packs (repeatable); default: the industries/ "
                             "folders above the run's task files")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help=f"the page to write (default RUN_DIR/{PAGE_NAME})")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        path = write_html_report(args.run_dir, args.industries, out=args.output)
    except (ReportError, RunDirError) as e:  # RunDirError: a saved attempt's seed is missing or unreadable
        print(f"callm report: {e}", file=sys.stderr)
        return 2
    print(f"report written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
