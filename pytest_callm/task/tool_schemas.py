"""Is a tool's `parameters` valid JSON Schema? Checked once per schema, remembered in the user's cache.

Checking a schema against the 2020-12 meta-schema is slow in `jsonschema` (its `$dynamicRef`s): the
shipped packs' 92 tools took about 0.17 s of CPU, in every process that loads them (each xdist
worker, each tool server beside it). The answer depends only on the schema and the `jsonschema`
release, so the digests of the schemas found valid are kept (`user_cache`, named by the release)
and a schema seen before is not checked again. An invalid schema is never kept: its error is
reported at every load.
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema

from pytest_callm import user_cache

_KEEP = 4096  # digests: every pack a machine's runs and tests load, many times over
_lock = threading.Lock()
_valid: dict[Path, set[str]] = {}  # this process's view of each cache file's digests


@lru_cache(maxsize=1)
def _checker() -> bytes:
    try:
        release = metadata.version("jsonschema")
    except metadata.PackageNotFoundError:
        release = "unknown"
    return f"jsonschema {release} Draft202012 check_schema".encode()


def _cache_path() -> Path:
    return user_cache.cache_file("tool-schemas", _checker())


def _digest(schema: Any) -> str:
    return hashlib.blake2b(json.dumps(schema, sort_keys=True).encode(), digest_size=16).hexdigest()


def schema_errors(schemas: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """(name, the checker's message) for each of `schemas` ((name, schema) pairs, in order) that is
    not valid JSON Schema (2020-12)."""
    path = _cache_path()
    with _lock:
        if path not in _valid:
            kept = user_cache.read(path)
            _valid[path] = {d for d in kept if isinstance(d, str)} if isinstance(kept, list) else set()
        known = set(_valid[path])
    errors, found_valid = [], set()
    for name, schema in schemas:
        digest = _digest(schema)
        if digest in known:
            continue
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            errors.append((name, e.message))
        else:
            found_valid.add(digest)
    if found_valid:
        with _lock:
            _valid[path] |= found_valid
            user_cache.write(path, sorted(_valid[path])[-_KEEP:])
    return errors
