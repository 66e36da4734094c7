"""Is a tool's `parameters` valid JSON Schema? Checked once per schema on a machine.

Checking a schema against the 2020-12 meta-schema is slow in `jsonschema` (its `$dynamicRef`s): the
shipped packs' 92 tools took about 0.17 s of CPU, in every process that loads them (each xdist
worker, each tool server beside it). The answer depends on the schema and on the checker (its
release, the meta-schemas, the formats it checks, Python), so the schemas found valid are remembered in
the user's cache under the checker's name (`user_cache.Passed`) and not checked again; an invalid one
is checked, and reported, at every load.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema

from pytest_callm import user_cache


def _checker() -> bytes:
    """Everything the check's answer depends on: the checker and the meta-schemas it reads, the formats
    it checks (which depend on optional packages installed beside it: `uri-reference` only with
    rfc3987 or rfc3986-validator), Python (the `regex` format compiles with `re`), and this code."""
    formats = sorted(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    return "\n".join([user_cache.releases("jsonschema", "jsonschema-specifications", "referencing"), sys.version,
                      f"Draft202012Validator.check_schema, formats {formats}", Path(__file__).read_text()]).encode()


PASSED = user_cache.Passed("tool-schemas", _checker())  # at import: the code that runs, not a later edit


def schema_errors(schemas: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """(name, the checker's message) for each of `schemas` ((name, schema) pairs, in order) that is
    not valid JSON Schema (2020-12)."""
    errors, valid = [], []
    for name, schema in schemas:
        digest = hashlib.blake2b(json.dumps(schema, sort_keys=True).encode(), digest_size=16).digest()
        if digest in PASSED:
            continue
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            errors.append((name, e.message))
        else:
            valid.append(digest)
    PASSED.add(valid)
    return errors
