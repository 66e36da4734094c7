"""`callm models`: the model configs a run can name, listed, so that nobody reads TOML files to choose.

    callm models [--model-configs DIR]...

Lists the bundled configs and those in the project's folders (`--model-configs`, repeatable; like
`--callm-model-configs` they come first, so a project's config replaces a bundled one of its name).
One row per config, sorted by name: the name `--callm-model` takes, the provider, whether a list
price is known (with the date of its source), and the variable holding the key (`none` for a
server without one); under it, where the model runs (served: the program of its serve command;
hosted: the host of its base URL), the quirks and modes it turns on, and the caller it suggests.
Fits 100 columns.

A config that does not load is named on stderr and the command exits 1 after listing the rest.
"""

from __future__ import annotations

import argparse
import calendar
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pytest_callm.model.config import (MAX_TOOL_CALL_RESENDS, SELF, ModelConfig, ModelConfigError, bundled_dir,
                                      load_config)

WIDTH = 100
HOSTS = {"api.openai.com": "OpenAI", "api.anthropic.com": "Anthropic", "generativelanguage.googleapis.com": "Google",
         "api.groq.com": "Groq", "api.deepseek.com": "DeepSeek", "api.mistral.ai": "Mistral",
         "openrouter.ai": "OpenRouter", "api.together.xyz": "Together", "api.fireworks.ai": "Fireworks"}
_MONTHS = "|".join(calendar.month_name[1:])


@dataclass(frozen=True)
class Entry:
    config: ModelConfig
    project: bool  # from a project folder (else bundled)
    replaces_bundled: bool = False


def provider(config: ModelConfig) -> str:
    """Who provides the model: the hosting API's company, else the organisation in the model id."""
    host = urlparse(config.base_url).hostname or ""
    if config.serve is None and host in HOSTS:
        return HOSTS[host]
    if "/" in config.model:
        return config.model.split("/", 1)[0]
    return HOSTS.get(host, "-")


def runs_on(config: ModelConfig) -> str:
    """`served by PROGRAM` (the serve command's) or `hosted at HOST` (the base URL's)."""
    if config.serve is not None:
        command = config.serve.command
        program = Path(command[0]).name.replace("{python}", "python")
        if program == "python" and len(command) > 2 and command[1] == "-m":
            program = f"python -m {command[2]}"
        return f"served by {program}"
    url = urlparse(config.base_url)
    return f"hosted at {url.netloc.rsplit('@', 1)[-1] or config.base_url}"  # never a password in the URL


def source_date(source: str) -> str | None:
    """The date a price source names: 2025-10-01, 2025-10 (from "October 2025"), or a year."""
    iso = re.search(r"\b\d{4}-\d{2}(?:-\d{2})?\b", source)
    if iso:
        return iso.group(0)
    named = re.search(rf"\b({_MONTHS})\s+(?:\d{{1,2}},\s*)?(\d{{4}})\b", source)
    if named:
        return f"{named.group(2)}-{list(calendar.month_name).index(named.group(1)):02d}"
    year = re.search(r"\b(?:19|20)\d{2}\b", source)
    return year.group(0) if year else None


def price_known(config: ModelConfig) -> str:
    if config.prices is None:
        return "no"
    return f"yes, {source_date(config.prices.source) or 'undated'}"


def switches(config: ModelConfig) -> list[str]:
    """The quirks and modes a config turns on, in words."""
    q, m = config.quirks, config.mode
    on = []
    if q.first_message_from_user:
        on.append("first message from user")
    if q.tools_in_system_prompt:
        on.append("tools in system prompt")
    if q.lifts_calls_from_text:
        on.append("calls lifted from text")
    if q.resend_rejected_tool_calls != MAX_TOOL_CALL_RESENDS:  # every model gets the paper's 3 unless lowered
        on.append(f"rejected tool calls resent up to {q.resend_rejected_tool_calls} times (not 3)")
    if q.system_prompt_suffix:
        on.append(f"system prompt ends with {q.system_prompt_suffix!r}")
    if m.microthinking:
        on.append("microthinking")
    if not m.stream:
        on.append("not streamed (TTFT is the round trip)")
    return on


def collect(folders: list[Path]) -> tuple[list[Entry], list[str]]:
    """Every config, a project's before a bundled one of the same name; and the errors of those that
    do not load."""
    entries: dict[str, Entry] = {}
    errors: list[str] = []
    for folder, project in [*((f, True) for f in folders), (bundled_dir(), False)]:
        for path in sorted(Path(folder).glob("*.toml")):
            if path.stem in entries:
                if not project and entries[path.stem].project:
                    entries[path.stem] = Entry(entries[path.stem].config, True, replaces_bundled=True)
                continue
            try:
                entries[path.stem] = Entry(load_config(path), project)
            except ModelConfigError as e:
                errors.append(str(e))
    return [entries[name] for name in sorted(entries)], errors


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def render(entries: list[Entry]) -> str:
    """The table: one row per config, and under it where it runs, its quirks and modes."""
    rows = [(e.config.name, provider(e.config), price_known(e.config), e.config.api_key_env or "none")
            for e in entries]
    head = ("NAME", "PROVIDER", "PRICE KNOWN", "KEY")
    caps = (30, 14, 20, 28)
    widths = [min(cap, max(len(r[i]) for r in [head, *rows])) for i, cap in enumerate(caps)]
    lines = ["  ".join(_cell(v, w).ljust(w) for v, w in zip(head, widths)).rstrip()]
    for entry, row in zip(entries, rows):
        lines.append("  ".join(_cell(v, w).ljust(w) for v, w in zip(row, widths)).rstrip())
        detail = [runs_on(entry.config), *switches(entry.config)]
        if entry.config.caller:
            detail.append("plays its own caller" if entry.config.caller == SELF else f"caller {entry.config.caller}")
        if entry.project:
            detail.append(f"from {entry.config.source}" + (", replacing the bundled one" if entry.replaces_bundled
                                                           else ""))
        lines += textwrap.wrap("; ".join(detail), WIDTH, initial_indent="    ", subsequent_indent="      ",
                               break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callm models", description="list the model configs --callm-model can "
                                     "name: bundled, and the project's")
    parser.add_argument("--model-configs", action="append", default=[], type=Path, metavar="DIR",
                        help="a folder of the project's model configs NAME.toml (repeatable; listed first, "
                             "as --callm-model-configs searches them; the ini's callm_model_configs is not "
                             "read here, so name its folders)")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.model_configs if not f.is_dir()]
    if missing:
        print(f"callm models: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    entries, errors = collect(args.model_configs)
    sys.stdout.write(render(entries))
    project = sum(e.project for e in entries)
    print(f"\n{len(entries)} config(s): {len(entries) - project} bundled, {project} from the project. "
          "Run one with --callm-model=NAME.")
    for error in errors:
        print(f"callm models: {error}", file=sys.stderr)
    return 1 if errors else 0
