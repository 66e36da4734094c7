"""One streamed reply, read chunk by chunk within its bounds: a model that never stops is cut as it streams.

A model in a repetition loop writes until the request's deadline (10 minutes a try, five tries, then
the call rerun: about 100 minutes of a call slot, with all of it held in memory). The bounds are
enforced here while the stream is read, never left to the deadline:

- spoken text: `MAX_REPLY_CHARS`; past it (and a key's length more: see `redact.margin`) the reply is
  cut there and the stream closed. That is the
  model's behaviour, scored as the call stands, and the trajectory's `cuts` says so;
- reasoning: `MAX_REASONING_CHARS` kept; past `MAX_REASONING_READ_CHARS` read (about 25,000 tokens,
  more than any phone turn thinks) the reply is cut;
- a thought held back for microthinking counts with the text read (`MAX_CONTENT_READ_CHARS`);
- a tool call's arguments: a little over `MAX_ARGUMENT_CHARS` kept, so a longer call is still refused
  as too long; its id and name: `MAX_NAME_CHARS`;
- everything read: `MAX_READ_CHARS`; past it the reply is cut (and a reply that does not stream is
  read only to that many bytes: `client._body_within`).

So what one reply holds in memory is bounded whatever the server sends. Fields of the wrong type are
read as what they hold (`output.field_text`, `object_list`): the server's output, never our error.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_callm.model import microthinking, redact
from pytest_callm.model.output import MAX_ARGUMENT_CHARS, call_index, field_text, object_list
from pytest_callm.model.protocol import (MAX_NAME_CHARS, MAX_REASONING_CHARS, MAX_REPLY_CHARS, ToolCall, Usage,
                                         usage_from)

MAX_REASONING_READ_CHARS = 100_000
MAX_CONTENT_READ_CHARS = MAX_REPLY_CHARS + MAX_REASONING_CHARS  # a thought never closed is no longer than that
MAX_READ_CHARS = 32_000_000  # every field of one reply together (tool arguments past their bound are read, not kept)


def reasoning_piece(delta: dict[str, Any]) -> str | None:
    # Not part of the OpenAI schema: vLLM sends `reasoning_content` (newer: `reasoning`), Groq and
    # OpenRouter `reasoning`.
    for key in ("reasoning_content", "reasoning"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class ReplyReader:
    """What one reply's chunks said so far, within bounds. `feed` returns True once the reply is cut
    (`cut` says why): stop reading. A finished reply is read on, for the usage chunk after it."""

    def __init__(self, splitter: microthinking.ThoughtSplitter | None = None) -> None:
        self.splitter = splitter
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: Usage | None = None
        self.finished = False
        self.filtered = False  # finish_reason "content_filter"
        self.cut: str | None = None
        self.has_token = False  # a spoken or tool-call token arrived (the time to first token stops)
        self._spoken = self._content = self._reasoning = self._read = 0
        # Kept past each bound by a key's length, so that a key read across it is redacted whole before
        # the cut (`protocol.safe_reply`, `output.clip`): a prefix would be saved, unrecognised.
        self._margin = redact.margin()

    def feed(self, chunk: dict[str, Any]) -> bool:
        if chunk.get("usage"):
            self.usage = usage_from(chunk["usage"]) or self.usage
        for choice in object_list(chunk.get("choices")):
            delta = choice.get("delta")
            delta = {"content": delta} if isinstance(delta, str) else delta if isinstance(delta, dict) else None
            if delta:
                self._delta(delta)
            if choice.get("finish_reason") is not None:
                self.finished = True
                # A provider that filtered the model's output ends it so (OpenAI, Azure): the reply as it
                # stands is the model's, scored, with a note.
                self.filtered = self.filtered or choice.get("finish_reason") == "content_filter"
            if self.cut:
                break
        if self.cut is None and self._read > MAX_READ_CHARS:
            self.cut = f"the reply passed {MAX_READ_CHARS:,} characters read while streaming"
        return self.cut is not None

    def _delta(self, delta: dict[str, Any]) -> None:
        piece = reasoning_piece(delta)
        if piece:
            self._read += len(piece)
            if self._reasoning < MAX_REASONING_CHARS + self._margin:
                self.reasoning.append(piece[:MAX_REASONING_CHARS + self._margin - self._reasoning])
            self._reasoning += len(piece)
            if self._reasoning > MAX_REASONING_READ_CHARS:
                self.cut = f"the reasoning passed {MAX_REASONING_READ_CHARS:,} characters while streaming"
                return
        spoken = field_text(delta.get("content"))
        if spoken:
            self._read += len(spoken)
            self._content += len(spoken)
            if self.splitter is not None:
                spoken = self.splitter.feed(spoken)  # the thought is held back, never spoken
                if self._content > MAX_CONTENT_READ_CHARS and not spoken:
                    self.cut = f"the text passed {MAX_CONTENT_READ_CHARS:,} characters before a word was spoken"
                    return
        if spoken:
            self.has_token = True
            self.text.append(spoken[:max(MAX_REPLY_CHARS + self._margin - self._spoken, 0)])
            self._spoken += len(spoken)
            if self._spoken > MAX_REPLY_CHARS + self._margin:
                self.cut = (f"the spoken text passed {MAX_REPLY_CHARS:,} characters while streaming (a model that does "
                            "not stop); cut there")
                return
        for tc in object_list(delta.get("tool_calls")):
            self.has_token = True
            self._tool_call_piece(tc)

    def _tool_call_piece(self, tc: dict[str, Any]) -> None:
        entry = self.calls.setdefault(call_index(tc.get("index")), {"id": None, "name": "", "arguments": [], "size": 0})
        self._read += 8  # an entry costs memory even when it carries nothing
        entry["id"] = entry["id"] or field_text(tc.get("id"))[:MAX_NAME_CHARS + self._margin] or None
        function = tc.get("function")
        if not isinstance(function, dict):
            return
        name = field_text(function.get("name"))
        if name and name != entry["name"] and len(entry["name"]) < MAX_NAME_CHARS + self._margin:
            entry["name"] = (entry["name"] + name)[:MAX_NAME_CHARS + self._margin]
        args = function.get("arguments")
        if args:  # an object where a JSON string belongs: that object, written as JSON
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            self._read += len(args)
            if entry["size"] <= MAX_ARGUMENT_CHARS + self._margin:  # past the bound: refused as too long
                entry["arguments"].append(args[:MAX_ARGUMENT_CHARS + self._margin + 1 - entry["size"]])
            entry["size"] += len(args)

    def tool_calls(self) -> list[ToolCall]:
        return [ToolCall(c["id"] or f"call_{i}", c["name"], "".join(c["arguments"]))
                for i, c in sorted(self.calls.items())]
