"""Model configs: bundled and project files, defaults for a bare model id, overrides, errors."""

from __future__ import annotations

import pytest

from pytest_callm.model.config import (OPENAI_BASE_URL, Mode, ModelConfigError, Prices, Quirks, ServeCommand, bundled_names,
                                      parse_config, resolve)


def write(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.toml").write_text(text)
    return folder


def test_every_bundled_config_loads():
    names = bundled_names()
    assert {"gpt-4.1", "gpt-4.1-mini", "gpt-5-mini", "gpt-oss-120b-groq", "llama-4-scout-vllm", "vllm-local"} <= set(names)
    for name in names:
        assert resolve(name).name == name


def test_bundled_configs_carry_the_papers_phone_settings():
    assert resolve("gpt-5-mini").sampling.reasoning_effort == "minimal"
    groq = resolve("gpt-oss-120b-groq")
    assert (groq.sampling.reasoning_effort, groq.quirks.resend_rejected_tool_calls, groq.api_key_env) == \
        ("low", 3, "GROQ_API_KEY")
    assert resolve("llama-4-scout-vllm").quirks.tool_calls_in_text
    local = resolve("vllm-local")
    assert local.api_key_env is None and local.serve.command[:2] == ("vllm", "serve")
    assert "--enable-auto-tool-choice" in local.serve.command and "{port}" in local.serve.command


def test_bundled_prices_are_per_million_tokens_with_a_source():
    gpt41 = resolve("gpt-4.1")
    assert gpt41.prices == Prices(input=2.0, output=8.0, cached_input=0.5, source=gpt41.prices.source)
    assert "openai.com" in gpt41.prices.source
    assert resolve("gpt-oss-120b-groq").prices is None  # left out rather than guessed


def test_an_unknown_name_is_an_openai_model_id_with_defaults(tmp_path):
    config = resolve("gpt-4o-2024-11-20", [tmp_path])
    assert (config.model, config.base_url, config.api_key_env) == ("gpt-4o-2024-11-20", OPENAI_BASE_URL, "OPENAI_API_KEY")
    assert config.prices is None and config.quirks == Quirks() and config.source == "default"


def test_a_projects_folder_comes_before_the_bundled_configs(tmp_path):
    write(tmp_path, "gpt-4.1", 'model = "our-gpt-4.1-deployment"\nbase_url = "http://gateway/v1"\n')
    config = resolve("gpt-4.1", [tmp_path])
    assert (config.model, config.base_url) == ("our-gpt-4.1-deployment", "http://gateway/v1")
    assert config.source == str(tmp_path / "gpt-4.1.toml")


def test_a_config_file_can_be_named_by_path(tmp_path):
    write(tmp_path, "mine", 'model = "m"\napi_key_env = ""\n')
    assert resolve(str(tmp_path / "mine.toml")).api_key_env is None


def test_the_config_name_is_the_model_id_unless_it_says_otherwise(tmp_path):
    write(tmp_path, "my-model", "[quirks]\nfirst_message_from_user = true\n")
    config = resolve("my-model", [tmp_path])
    assert config.model == "my-model" and config.quirks.first_message_from_user


@pytest.mark.parametrize("text, message", [
    ('modle = "x"', "unknown key(s): modle"),
    ("[quirks]\npythonic = true", "unknown key(s) in [quirks]: pythonic"),
    ("[prices]\ninput = 1.0", "[prices] needs both input and output"),
    ('[prices]\ninput = "cheap"\noutput = 1', "prices.input must be float"),
    ("[quirks]\nresend_rejected_tool_calls = 5", "resend_rejected_tool_calls must be 0 to 3"),
    ('[sampling]\nreasoning_effort = "max"', "reasoning_effort must be one of"),
    ("[quirks]\ntool_calls_in_text = 1", "quirks.tool_calls_in_text must be bool"),
    ('[serve]\ncommand = "vllm serve"', "[serve] command must be a non-empty list of strings"),
    ("model = ", "invalid TOML"),
    ("[mode]\nstreaming = false", "unknown key(s) in [mode]: streaming"),
    ('[mode]\nmicrothinking = "yes"', "mode.microthinking must be bool"),
])
def test_a_bad_config_names_its_file_and_the_problem(tmp_path, text, message):
    write(tmp_path, "bad", text + "\n")
    with pytest.raises(ModelConfigError) as e:
        resolve("bad", [tmp_path])
    assert str(e.value).startswith(str(tmp_path / "bad.toml"))
    assert message in str(e.value)


def test_base_url_and_key_variable_can_be_overridden():
    config = resolve("gpt-4.1")
    moved = config.with_overrides(base_url="http://127.0.0.1:9000/v1", api_key_env="GATEWAY_KEY")
    assert (moved.base_url, moved.api_key_env, moved.model) == ("http://127.0.0.1:9000/v1", "GATEWAY_KEY", "gpt-4.1")
    assert config.with_overrides(api_key_env="none").api_key_env is None
    assert config.with_overrides() == config


def test_cost_uses_the_input_price_for_cached_tokens_when_none_is_listed():
    assert Prices(input=1.0, output=2.0).cost(1_000_000, 1_000_000, 1_000_000) == 4.0
    assert Prices(input=1.0, output=2.0, cached_input=0.1).cost(0, 1_000_000, 0) == pytest.approx(0.1)


def test_a_serve_command_fills_in_model_port_and_python():
    serve = ServeCommand(("{python}", "-m", "server", "{model}", "--port={port}"))
    assert serve.argv("org/model", 8123, "/usr/bin/python3") == ["/usr/bin/python3", "-m", "server", "org/model",
                                                                 "--port=8123"]
    with pytest.raises(ModelConfigError, match="unknown placeholder 'gpu'"):
        ServeCommand(("vllm", "{gpu}")).argv("m", 1, "py")


def test_tools_in_the_system_prompt_imply_lifting_calls_from_text():
    assert Quirks(tools_in_system_prompt=True).lifts_calls_from_text
    assert not Quirks().lifts_calls_from_text


def test_modes_default_to_a_stream_without_microthinking(tmp_path):
    assert parse_config("x", {}, "x").mode == Mode(stream=True, microthinking=False)
    write(tmp_path, "phone", "[mode]\nstream = false\nmicrothinking = true\n")
    assert resolve("phone", [tmp_path]).mode == Mode(stream=False, microthinking=True)


def test_a_config_without_prices_has_no_cost():
    assert parse_config("x", {}, "x").prices is None


def test_the_example_model_configs_load():
    from conftest import REPO

    for path in (REPO / "examples" / "models").glob("*.toml"):
        config = resolve(path.stem, [path.parent])
        assert config.source == str(path) and config.model != path.stem
