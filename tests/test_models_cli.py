"""Every shipped model config loads and can be served or reached as written; `callm models` lists them."""

from __future__ import annotations

import re

import pytest

from pytest_callm.cli import main as callm
from pytest_callm.model.catalog import WIDTH, source_date
from pytest_callm.model.config import bundled_names, resolve

PAPER_FAMILIES = {"claude-haiku-4.5", "gemini-2.5-flash", "gpt-oss-20b-groq", "gpt-oss-120b-groq", "llama-3.3-70b-vllm",
                  "llama-4-scout-vllm", "llama-4-maverick-vllm", "qwen3-30b-a3b-vllm", "gemma-3-27b-vllm",
                  "mistral-small-3.2-vllm", "nemotron-nano-9b-vllm", "deepseek-chat"}


def listed_row(out: str, name: str) -> tuple[list[str], str]:
    """A config's row in `callm models`: its fields, and the lines under it joined again."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(name + " "))
    detail = []
    for line in lines[at + 1:]:
        if not line.startswith("    "):
            break
        detail.append(line.strip())
    return lines[at].split(), " ".join(detail)


def configs():
    return [resolve(name) for name in bundled_names()]


def test_the_papers_model_families_ship_a_config_each():
    assert PAPER_FAMILIES <= set(bundled_names())


@pytest.mark.parametrize("name", bundled_names())
def test_a_shipped_config_loads_and_names_a_key_variable_or_none(name):
    config = resolve(name)
    assert config.source.endswith(f"{name}.toml")
    assert config.api_key_env is None or re.fullmatch(r"[A-Z][A-Z0-9_]*", config.api_key_env)


@pytest.mark.parametrize("name", [c.name for c in configs() if c.serve and c.serve.command[:2] == ("vllm", "serve")])
def test_a_vllm_serve_command_names_its_tool_parser_and_auto_tool_choice(name):
    command = list(resolve(name).serve.command)
    assert "--enable-auto-tool-choice" in command
    assert "--tool-call-parser" in command
    parser = command[command.index("--tool-call-parser") + 1]
    assert re.fullmatch(r"[a-z0-9_]+", parser)
    assert command[2] == "{model}" and "{port}" in command


def test_each_vllm_family_gets_its_own_tool_parser():
    def parser(name):
        command = list(resolve(name).serve.command)
        return command[command.index("--tool-call-parser") + 1]

    assert {name: parser(name) for name in ("qwen3-30b-a3b-vllm", "vllm-local", "gemma-3-27b-vllm",
                                            "mistral-small-3.2-vllm", "llama-4-scout-vllm", "llama-4-maverick-vllm",
                                            "llama-3.3-70b-vllm", "nemotron-nano-9b-vllm")} == {
        "qwen3-30b-a3b-vllm": "hermes", "vllm-local": "hermes", "gemma-3-27b-vllm": "pythonic",
        "mistral-small-3.2-vllm": "mistral", "llama-4-scout-vllm": "llama4_pythonic",
        "llama-4-maverick-vllm": "llama4_pythonic", "llama-3.3-70b-vllm": "llama3_json",
        "nemotron-nano-9b-vllm": "nemotron_json"}


def test_the_quirks_the_paper_names_are_on():
    assert resolve("llama-3.3-70b-vllm").quirks.tools_in_system_prompt
    assert resolve("llama-4-maverick-vllm").quirks.tool_calls_in_text
    assert resolve("gpt-oss-20b-groq").quirks.resend_rejected_tool_calls == 3
    assert resolve("nemotron-nano-9b-vllm").quirks.system_prompt_suffix == "/no_think"
    assert resolve("gemini-2.5-flash").sampling.reasoning_effort == "none"


@pytest.mark.parametrize("name", [c.name for c in configs() if c.prices is not None])
def test_a_shipped_price_names_its_source_and_date(name):
    prices = resolve(name).prices
    assert prices.source and source_date(prices.source) is not None
    assert 0 < prices.input and 0 < prices.output
    assert prices.cached_input is None or prices.cached_input <= prices.input


def test_callm_models_lists_every_shipped_config_within_100_columns(capsys):
    assert callm(["models"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()[1:] if line and not line.startswith(" ")]
    assert listed[:-1] == bundled_names()  # the last is the count line
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    assert f"{len(bundled_names())} config(s): {len(bundled_names())} bundled, 0 from the project" in out


def test_callm_models_says_how_each_model_runs_its_price_key_quirks_and_modes(capsys, tmp_path):
    (tmp_path / "phone-micro.toml").write_text('model = "org/phone"\nbase_url = "https://gw.example.com/v1"\n'
                                               'api_key_env = ""\ncaller = "self"\n'
                                               '[mode]\nmicrothinking = true\nstream = false\n')
    assert callm(["models", "--model-configs", str(tmp_path)]) == 0
    out = capsys.readouterr().out

    def row(name):
        return listed_row(out, name)

    assert row("claude-haiku-4.5") == (["claude-haiku-4.5", "Anthropic", "yes,", "2025-10", "ANTHROPIC_API_KEY"],
                                       "hosted at api.anthropic.com; first message from user")
    assert row("gpt-oss-20b-groq")[0][2:] == ["no", "GROQ_API_KEY"]
    assert row("llama-3.3-70b-vllm")[1] == "served by vllm; tools in system prompt; calls lifted from text"
    fields, detail = row("phone-micro")
    assert fields == ["phone-micro", "org", "no", "none"]
    assert detail == ("hosted at gw.example.com; microthinking; not streamed (TTFT is the round trip); "
                      f"plays its own caller; from {tmp_path / 'phone-micro.toml'}")


def test_a_project_config_replaces_the_bundled_one_and_a_broken_one_is_named(capsys, tmp_path):
    (tmp_path / "gpt-4.1.toml").write_text('model = "our-gpt"\nbase_url = "http://gateway:9000/v1"\n')
    (tmp_path / "broken.toml").write_text("[quirks]\npythonic = true\n")
    assert callm(["models", "--model-configs", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "unknown key(s) in [quirks]: pythonic" in err and str(tmp_path / "broken.toml") in err
    fields, detail = listed_row(out, "gpt-4.1")
    assert fields == ["gpt-4.1", "-", "no", "OPENAI_API_KEY"]
    assert detail == f"hosted at gateway:9000; from {tmp_path / 'gpt-4.1.toml'}, replacing the bundled one"
    assert "broken" not in out


def test_callm_models_is_deterministic(capsys):
    callm(["models"])
    first = capsys.readouterr().out
    callm(["models"])
    assert capsys.readouterr().out == first


def test_a_missing_folder_is_a_usage_error(capsys, tmp_path):
    assert callm(["models", "--model-configs", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.parametrize("source, date", [("anthropic.com/pricing (Claude Haiku 4.5, October 2025)", "2025-10"),
                                          ("pricing page, September 29, 2025", "2025-09"),
                                          ("checked 2026-03-14", "2026-03-14"), ("openai.com (2025)", "2025"),
                                          ("a friend", None)])
def test_the_date_of_a_price_source(source, date):
    assert source_date(source) == date
