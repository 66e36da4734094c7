"""Secrets never leave the process: every key the run read is replaced by its variable's name
wherever the run writes (run directory files, the HTML page, JUnit properties, the terminal).

A server may echo the Authorization header into an error message, which then travels through
retry notes, exception messages and reports; rather than guard each of those, the places that
write pass their output through `text` or `value`. Keys are remembered where they are read
(`config.api_key_for`) and passwords embedded in a base URL where a URL is used or shown.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

_secrets: dict[str, str] = {}  # secret -> what replaces it
MIN_LENGTH = 4  # shorter values would redact ordinary words; no real key is that short


def remember(secret: str | None, name: str) -> None:
    if secret and len(secret) >= MIN_LENGTH:
        _secrets[secret] = f"${name}"


def active() -> bool:
    """Whether any secret is remembered (nothing to redact otherwise)."""
    return bool(_secrets)


def text(value: str) -> str:
    if not _secrets or not isinstance(value, str):
        return value
    for secret in sorted(_secrets, key=len, reverse=True):  # a longer secret may contain a shorter one
        if secret in value:
            value = value.replace(secret, _secrets[secret])
    return value


def cut(value: str, limit: int) -> str:
    """`value[:limit]`, redacted first: a key that straddles the cut would be kept as a prefix that no
    later redaction recognises. Whoever cuts text that may be saved cuts it here."""
    return text(value)[:limit]


def margin() -> int:
    """How much more than its bound a reader keeps before cutting (`cut`), so that a key it read across
    the bound is whole when it is redacted: the longest remembered secret, or 256."""
    return max([256, *map(len, _secrets)])


def value(data: Any) -> Any:
    """A JSON-like structure with every string (keys included) redacted."""
    if not _secrets:
        return data
    if isinstance(data, str):
        return text(data)
    if isinstance(data, dict):
        return {text(k) if isinstance(k, str) else k: value(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [value(v) for v in data]
    return data


def public_url(url: str | None) -> str | None:
    """The URL without user name and password (remembered, so an echo of them is redacted too)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.username is None and parts.password is None:
        return url
    remember(parts.password, "base URL password")
    # HTTP clients send URL credentials as Basic auth: that header, echoed, must not show them either.
    basic = base64.b64encode(f"{unquote(parts.username or '')}:{unquote(parts.password or '')}".encode()).decode()
    remember(basic, "base URL credentials")
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
