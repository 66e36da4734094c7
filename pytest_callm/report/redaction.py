"""Secrets kept off the pages: key-like fields of a config blanked, and the values of the environment
variables the run's configs read keys from struck from every finished page."""

from __future__ import annotations

import os
import re
from typing import Any

from markupsafe import escape

REDACTED = "[redacted]"
# Field names whose values are secrets (`api_key`, `auth_token`, `Authorization`, ...); `*_env` fields
# hold the name of a variable, which is shown.
SECRET_FIELD = re.compile(r"(?i)(^|[_-])(api_?key|secret|password|passwd|authorization|bearer|token)$")
MIN_SECRET_LENGTH = 8  # shorter variable values are not struck from the page (they would hit ordinary text)


def redact(value: Any, key: str = "") -> Any:
    """A config as the page shows it: every key-like field blanked, whatever the manifest holds."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if key and not key.lower().endswith("_env") and SECRET_FIELD.search(key) and value not in (None, "", False):
        return REDACTED
    return value


def secret_variables(manifest: dict[str, Any] | None) -> list[str]:
    """The names of the environment variables the run's configs read keys from (`*_env` fields)."""
    names: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if str(k).lower().endswith("_env") and isinstance(v, str) and v:
                    names.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(manifest or {})
    return sorted(set(names))


def strike_secrets(page: str, variables: list[str]) -> str:
    """Remove the values of `variables` from the page, raw and as the template escaped them."""
    for name in variables:
        value = os.environ.get(name, "")
        if len(value) < MIN_SECRET_LENGTH:
            continue
        for form in {value, str(escape(value))}:
            page = page.replace(form, REDACTED)
    return page
