"""mkdocs hook: the reference parts of the site, rendered from the code at build time so they cannot drift.

A page asks for a part with a marker on a line of its own:

    <!-- callm: commands -->        every `callm` command: usage, description, arguments (docs/cli.md)
    <!-- callm: pytest-options -->  the plugin's pytest options and their ini keys (docs/configuration.md)
    <!-- callm: module-sizes -->    lines per package of pytest_callm, and each module over the size limit
                                    with the reason the page gives for it (docs/architecture.md)

The commands are the parsers the `callm` command itself builds: each subcommand's `main` is run with
`argparse.ArgumentParser.parse_args` replaced by a catch that hands back the parser, so a command
whose parser lives in its own module is read from there. The options are those the plugin registers,
loaded through its `pytest11` entry point into a fresh pytest config. Nothing is fetched.

A problem (a marker with no part, a long module the page gives no reason for, a reason for a module
that is no longer long) is a warning, so `mkdocs build --strict` fails on it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import re
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.callm")

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # render this checkout's code, whichever copy of the package is installed
    sys.path.insert(0, str(ROOT))
MARKER = re.compile(r"^<!-- callm: ([a-z-]+) -->$", re.M)
LONG_MODULE = 500  # lines; a module longer than this is named on the architecture page with its reason


def on_page_markdown(markdown: str, page, config, files) -> str:
    def part(match: re.Match) -> str:
        name = match[1]
        if name == "commands":
            return commands()
        if name == "pytest-options":
            return pytest_options()
        if name == "module-sizes":
            return module_sizes(markdown, page.file.src_uri)
        log.warning("%s: no reference part named %r", page.file.src_uri, name)
        return match[0]

    return MARKER.sub(part, markdown)


def cell(text: str) -> str:
    """Text for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


# --- the `callm` commands ---------------------------------------------------------------------------

class _Parser(BaseException):  # not an Exception: no `except Exception` in a command swallows it
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


@contextlib.contextmanager
def _catch_parsers():
    def catch(self, args=None, namespace=None):
        raise _Parser(self)

    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_args = catch
    argparse.ArgumentParser.parse_known_args = catch
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = saved


def parser_of(argv: list[str]) -> argparse.ArgumentParser:
    """The parser `callm ARGV...` would parse its arguments with."""
    from pytest_callm import cli

    with _catch_parsers(), contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main(argv)
        except _Parser as caught:
            return caught.parser
    raise RuntimeError(f"callm {' '.join(argv)} parsed no arguments")


def command_parsers() -> tuple[argparse.ArgumentParser, dict[str, tuple[str, argparse.ArgumentParser, bool]]]:
    """The top-level parser, and for each subcommand (in the order `callm --help` lists them) its
    one-line help, the parser that reads its arguments, and whether `callm` parses it itself."""
    top = parser_of([])
    subs = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: (choice.help or "").replace(" (see its --help)", "") for choice in subs._choices_actions}
    commands = {}
    for name, own in subs.choices.items():
        real = parser_of([name])  # the top-level parser again when `callm` parses the command itself
        top_again = any(isinstance(a, argparse._SubParsersAction) for a in real._actions)
        commands[name] = (helps.get(name, ""), own if top_again else real, top_again)
    return top, commands


def _usage(parser: argparse.ArgumentParser, prog: str) -> str:
    parser.prog = prog
    formatter = argparse.HelpFormatter(prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = argparse.HelpFormatter(parser.prog)
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            name = ", ".join(action.option_strings)
            if action.nargs != 0:
                name += " " + formatter._format_args(action, action.dest.upper())
        else:
            name = formatter._format_args(action, action.dest)
        help_ = formatter._expand_help(action) if action.help else ""
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0 else f"`{default}`"
        rows.append(f"| `{cell(name)}` | {shown} | {cell(help_)} |")
    return rows


def commands() -> str:
    top, commands = command_parsers()
    out = ["Every subcommand of `callm`, as `callm --help` lists them:", "",
           "| command | what it does |", "|---|---|"]
    out += [f"| [`callm {name}`](#callm-{name}) | {cell(help_)} |" for name, (help_, _, _) in commands.items()]
    top_rows = _arguments(top)
    own = [f"`{name}`" for name, (_, _, by_callm) in commands.items() if by_callm]
    if top_rows and own:
        out += ["", f"The commands `callm` parses itself ({', '.join(own)}) also take, before the command's "
                "name (`callm --industries DIR lint tasks`):", "",
                "| argument | default | meaning |", "|---|---|---|", *top_rows]
    for name, (help_, parser, _) in commands.items():
        out += ["", f"## `callm {name}` {{#callm-{name}}}", ""]
        description = parser.description or help_
        out += [" ".join(description.split()), "", "```", _usage(parser, f"callm {name}"), "```"]
        rows = _arguments(parser)
        if rows:
            out += ["", "| argument | default | meaning |", "|---|---|---|", *rows]
        if parser.epilog:
            out += ["", " ".join(parser.epilog.split())]
    return "\n".join(out) + "\n"


# --- the pytest options -----------------------------------------------------------------------------

def pytest_options() -> str:
    import importlib.metadata

    from _pytest.config import get_config

    entry = next(e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "callm")
    config = get_config()
    config.pluginmanager.import_plugin(entry.value)
    parser = config._parser
    group = next(g for g in parser._groups if g.name == "callm")
    inis = parser._inidict
    out = ["| option, and its ini key | meaning |", "|---|---|"]
    for option in group.options:
        attrs = option.attrs()
        dest = attrs["dest"]
        names = ", ".join(option.names())
        if attrs.get("action") not in ("store_true", "store_false", "count"):
            names += "=" + dest.removeprefix("callm_").upper()
        ini = inis.get(dest)
        ini_key = ""
        if ini:  # a string unless registered otherwise: a bool for a flag, paths for a list of folders
            ini_key = f"<br>`{dest}`" + (f" ({ini[1]})" if ini[1] not in (None, "string") else "")
        repeat = " (repeatable)" if attrs.get("action") == "append" and "repeatable" not in attrs["help"] else ""
        out.append(f"| `{cell(names)}`{ini_key} | {cell(attrs['help'])}{repeat} |")
    extra = sorted(set(inis) - {o.attrs()["dest"] for o in group.options})
    callm_only = [k for k in extra if k.startswith("callm_")]
    if callm_only:
        out += ["", "ini keys with no option:", "", "| ini key | meaning |", "|---|---|"]
        out += [f"| `{k}` ({inis[k][1] or 'string'}) | {cell(inis[k][0])} |" for k in callm_only]
    return "\n".join(out) + "\n"


# --- module sizes -----------------------------------------------------------------------------------

REASON = re.compile(r"^- `(pytest_callm/[\w/]+\.py)`", re.M)


def module_sizes(markdown: str, page: str) -> str:
    package = ROOT / "pytest_callm"
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(package.rglob("*.py"))}
    folders: dict[str, list[tuple[str, int]]] = {}
    for path, lines in sizes.items():
        folder = path.rsplit("/", 1)[0] + "/"
        folders.setdefault(folder, []).append((path, lines))
    out = [f"Measured from the code when this site was built: {len(sizes)} modules, "
           f"{sum(sizes.values()):,} lines (blank lines and docstrings included).", "",
           "| package | modules | lines | largest module |", "|---|---:|---:|---|"]
    for folder, modules in folders.items():
        largest = max(modules, key=lambda m: m[1])
        out.append(f"| `{folder}` | {len(modules)} | {sum(n for _, n in modules):,} | "
                   f"`{largest[0].rsplit('/', 1)[1]}` ({largest[1]:,}) |")
    long = {path: n for path, n in sizes.items() if n > LONG_MODULE}
    out += ["", f"Modules over {LONG_MODULE} lines (each one's reason is below):", "",
            "| module | lines |", "|---|---:|"]
    out += [f"| `{path}` | {n:,} |" for path, n in sorted(long.items(), key=lambda item: -item[1])]
    explained = set(REASON.findall(markdown))
    for path in sorted(set(long) - explained):
        log.warning("%s: %s has %d lines (over %d) and the page gives no reason for it: add a line "
                    "'- `%s`: why' below the marker", page, path, long[path], LONG_MODULE, path)
    for path in sorted(explained - set(long)):
        log.warning("%s: %s is %s: remove its reason from the page", page, path,
                    f"{sizes[path]} lines, no longer over {LONG_MODULE}" if path in sizes else "gone")
    return "\n".join(out) + "\n"
