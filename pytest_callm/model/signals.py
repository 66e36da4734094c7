"""What model servers say when a request fails, and whose failure that is: one table.

A server refuses a request in its own words: vLLM and OpenAI say "maximum context length", llama.cpp's
server types its error `exceed_context_size_error`, TGI answers 422 "Input validation error: `inputs`
tokens + `max_new_tokens` must be <= ...", and several send the same error inside a stream that began
with 200. Each row below says how one server says one thing, and whose failure it is:

- `MODEL`: the model's own behaviour, scored as the call stands. The conversation outgrew its context
  (`overflow`); its provider refused what was said in the call (`refusal`); its provider refused a tool
  call it wrote (`malformed_call`: resent up to three times, as the paper does for every model, then
  the model's empty reply).
- `OURS`: the harness's or the server's side (`busy`: retried with backoff; `refused_request`: not
  retried, the whole call is rerun once and then not scored).

The first row that matches wins, so a row of `OURS` that shares words with a row of `MODEL` ("context
deadline exceeded" is Go's timeout, not a context window) goes before it. A failure no row matches
keeps the status rules of `client.py` (429 and 5xx retried, other 4xx refused). The replies each row is
tested against are in `tests/test_server_signals.py`, written from the servers' documented or observed
wording; a new server's wording is a new row there and here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MODEL = "the model's"
OURS = "ours"

OVERFLOW, REFUSAL, MALFORMED_CALL = "overflow", "refusal", "malformed_call"
BUSY, REFUSED_REQUEST = "busy", "refused_request"
OWNER = {OVERFLOW: MODEL, REFUSAL: MODEL, MALFORMED_CALL: MODEL, BUSY: OURS, REFUSED_REQUEST: OURS}
IN_STREAM = 200  # the status an error sent inside a stream (or a 200 body) is matched as


@dataclass(frozen=True)
class Signal:
    server: str  # who says it (documentation: matching never looks at which server answered)
    kind: str  # a key of OWNER
    words: str | None = None  # a regular expression searched in the error's text, case-insensitive
    code: str | None = None  # the error's `code`, `type` or `error_type`, exactly
    key: str | None = None  # a field the error body holds
    statuses: tuple[int, ...] | None = None  # HTTP statuses it comes with (IN_STREAM: inside a 200); None: any

    @property
    def owner(self) -> str:
        return OWNER[self.kind]

    def matches(self, status: int, codes: set[str], keys: set[str], text: str) -> bool:
        if self.statuses is not None and status not in self.statuses:
            return False
        if (self.code is not None and self.code not in codes) or (self.key is not None and self.key not in keys):
            return False
        return self.words is None or re.search(self.words, text, re.I | re.M) is not None


_CLIENT_ERROR = (400, 413, 422, IN_STREAM)

SIGNALS: tuple[Signal, ...] = (
    # --- first, the refusals that quote the model's own output (which may hold any words) -------
    Signal("Ollama", MALFORMED_CALL, words=r"^(error code: \d+ - )?error parsing tool call"),
    Signal("llama.cpp server", MALFORMED_CALL, words=r"^(error code: \d+ - )?failed to parse (tool call|input at pos)"),
    Signal("Groq", MALFORMED_CALL, code="tool_use_failed"),
    Signal("Groq", MALFORMED_CALL, key="failed_generation"),
    # --- ours, before anything that shares their words ----------------------------------------
    Signal("Ollama (Go)", BUSY, words=r"context deadline exceeded|context canceled"),
    Signal("Groq", REFUSED_REQUEST, words=r"request too large .*tokens per minute", statuses=(413,)),
    Signal("TGI", BUSY, code="overloaded"),
    Signal("TGI", BUSY, words=r"model is overloaded"),
    Signal("Anthropic-compatible gateways", BUSY, code="overloaded_error"),
    Signal("vLLM", REFUSED_REQUEST, words=r"expecting (value|property name|',' delimiter)|unterminated string"
                                         r"|extra data: line", statuses=(400,)),  # the history we sent is not JSON
    # --- the context overflowed: the model's ---------------------------------------------------
    Signal("OpenAI, Groq, gateways", OVERFLOW, code="context_length_exceeded"),
    Signal("llama.cpp server", OVERFLOW, code="exceed_context_size_error"),
    Signal("llama.cpp server (older)", OVERFLOW, words=r"context size has been exceeded|exceeds the available "
                                                       r"context size", statuses=(*_CLIENT_ERROR, 500)),
    Signal("vLLM, OpenAI, OpenRouter", OVERFLOW, words=r"maximum context length", statuses=_CLIENT_ERROR),
    Signal("SGLang", OVERFLOW, words=r"longer than the model'?s context length", statuses=_CLIENT_ERROR),
    Signal("TGI", OVERFLOW, words=r"`inputs` tokens \+ `max_new_tokens` must be <=|`inputs` must have less than",
           statuses=_CLIENT_ERROR),
    Signal("Anthropic-compatible gateways", OVERFLOW, words=r"prompt is too long|exceed context limit",
           statuses=_CLIENT_ERROR),
    Signal("Gemini-compatible gateways", OVERFLOW, words=r"input token count .* exceeds the maximum",
           statuses=_CLIENT_ERROR),
    Signal("any", OVERFLOW, words=r"context[_ ]length|context window|exceeds? the (model'?s? )?(context|maximum)"
                                  r"|too many tokens|input is too long", statuses=_CLIENT_ERROR),
    # --- the provider refused what was said in the call: the model's ---------------------------
    Signal("OpenAI", REFUSAL, code="invalid_prompt"),
    Signal("Azure OpenAI", REFUSAL, code="content_filter"),
    Signal("any", REFUSAL, words=r"flagged as potentially violating|content management policy", statuses=_CLIENT_ERROR),
)


def _strings(data: Any, keys: tuple[str, ...]) -> set[str]:
    return {str(data[k]) for k in keys if isinstance(data, dict) and data.get(k) is not None}


_CODE_KEYS = ("code", "type", "error_type")


def facts(error: Exception) -> tuple[int, set[str], set[str], list[str]]:
    """(status, codes, keys, messages) of a failed request: its HTTP status (IN_STREAM for an error sent
    inside a stream), the `code`, `type` and `error_type` values and the field names of its error body,
    and its messages (the server's words: never the whole body, whose other fields may quote the model)."""
    status = getattr(error, "status_code", None) or IN_STREAM
    body = getattr(error, "body", None)
    whole = None
    response = getattr(error, "response", None)
    if status != IN_STREAM and response is not None:  # the whole body: TGI's `error_type` sits beside `error`
        try:
            whole = response.json()
        except Exception:  # not JSON, or not read: the error object is all there is
            whole = None
    codes, keys = set(), set()
    messages = [str(getattr(error, "message", "") or "")]
    for part in (body, whole):
        if isinstance(part, dict):
            codes |= _strings(part, _CODE_KEYS)
            keys |= set(part)
            messages += [part[k] for k in ("message", "error", "detail") if isinstance(part.get(k), str)]
        elif isinstance(part, str):
            messages.append(part)
    return status, {c for c in codes if c}, keys, [m for m in messages if m]


def classify(error: Exception) -> Signal | None:
    """The first row that says what this failure is, or None (the status rules decide)."""
    status, codes, keys, messages = facts(error)
    text = "\n".join(messages)
    return next((s for s in SIGNALS if s.matches(status, codes, keys, text)), None)
