"""Content hashes of files and of an industry pack: what a run directory's manifest records of its
packs, and what a tool server answers on /health, so a run that uses a server someone else started
can tell whether it serves the very pack the run scores against."""

from __future__ import annotations

import hashlib

from pytest_callm.task.pack import Pack

# The files that make a pack what it is (its prompts are added by name): code, schema, seed, rules.
PACK_FILES = ("agent_blueprint.json", "tools.json", "pack.json", "tools.py", "db/schema.sql", "db/seed.sql",
              "words.json", "rules.json")


def digest_of_files(parts: list[tuple[str, str]]) -> str:
    """The content hash of a set of files from (name, sha256 hex of the content) pairs: what
    `digest_of_contents` gives for the files themselves, so a merge can hash a task set it only knows
    by its files' digests."""
    h = hashlib.sha256()
    for name, sha in sorted(parts):
        h.update(name.encode() + b"\0" + bytes.fromhex(sha))
    return h.hexdigest()


def digest_of_contents(parts: list[tuple[str, bytes]]) -> str:
    return digest_of_files([(name, hashlib.sha256(content).hexdigest()) for name, content in parts])


def pack_hash(pack: Pack) -> str:
    files = [*PACK_FILES, *(str(p.relative_to(pack.root)) for p in sorted((pack.root / "prompts").glob("*")))]
    return digest_of_contents([(f, (pack.root / f).read_bytes()) for f in files if (pack.root / f).is_file()])
