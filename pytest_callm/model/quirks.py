"""Provider quirks: small, switchable changes to a request or a reply (paper, "Models under test").

Each is a config switch under `[quirks]` and off by default:

- `first_message_from_user`: some APIs refuse a conversation that does not open with a user
  message. The call opens with the agent's greeting, so one fixed line saying that the call has
  connected goes before it.
- `tools_in_system_prompt`: for chat templates that misplace the API's tool list (Llama 3.3's
  puts it in the first user turn), the tools are described at the end of the system prompt instead
  of the `tools` field, and the model answers with calls written in its text (lifted out below).
- `tool_calls_in_text`: pythonic templates (Llama 4 on vLLM) often write calls inside a spoken
  reply, `Let me check. [lookup_caller(full_name="A", phone="1")]`, which the server's parser
  accepts only as the whole reply. Calls to known tools are lifted out of the text; the text before
  the first call is spoken, the rest was written before any tool returned and is dropped.
- `resend_rejected_tool_calls = N`: a provider that rejects a malformed tool call the model wrote
  (Groq: HTTP 400, code `tool_use_failed`; the others in `signals.py`) gets the same request again, up
  to N times: 3 unless a config lowers it (the paper resends up to three times for every model). After
  the last, the model has no reply to that request: its failure, scored.
- `system_prompt_suffix = "..."`: a model whose switches live in its system prompt (Nemotron Nano's
  `/no_think` turns its reasoning off) gets that text after every agent's system prompt.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from typing import Any

from pytest_callm.model.protocol import ToolCall

CONNECTED_LINE = "(The phone call has connected.)"


def first_message_from_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation (after the system prompt) with a user message first."""
    if messages and messages[0].get("role") == "user":
        return messages
    return [{"role": "user", "content": CONNECTED_LINE}, *messages]


def tools_in_system_prompt(system_prompt: str, tools: list[dict[str, Any]]) -> str:
    """The system prompt with the tools described at its end, and how to call them in text."""
    if not tools:
        return system_prompt
    functions = [t["function"] for t in tools]
    return "\n".join([
        system_prompt.rstrip(), "", "# Tools", "",
        "You can call the functions below. To call them, end your reply with a Python list of calls using "
        "keyword arguments only, for example [function_name(first_argument=\"text\", second_argument=2)]. "
        "Anything you say to the caller goes before the list; write nothing after it. Results come back in "
        "the next messages.", "",
        json.dumps(functions, ensure_ascii=False, indent=1)])


def with_system_prompt_suffix(system_prompt: str, suffix: str) -> str:
    """The system prompt with a model's control text (`/no_think`) on a line of its own at the end."""
    return f"{system_prompt.rstrip()}\n\n{suffix}" if suffix else system_prompt


# --- calls written in text --------------------------------------------------------------------

_CALL_LIST_START = re.compile(r"\[\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_NAMED_LITERALS = {"true": True, "false": False, "null": None, "none": None, "True": True, "False": False,
                   "None": None}


def _closing_bracket(text: str, start: int) -> int | None:
    """Index of the `]` that closes the `[` at `start`, skipping brackets inside string literals."""
    depth, quote, i = 0, None, start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i if ch == "]" else None
        i += 1
    return None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMED_LITERALS:
        return _NAMED_LITERALS[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    raise ValueError("not a literal")


def _parse_call_list(source: str, known: set[str]) -> list[tuple[str, dict[str, Any]]] | None:
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.List) or not tree.elts:
        return None
    calls = []
    for node in tree.elts:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in known):
            return None
        if node.args or any(k.arg is None for k in node.keywords):
            return None  # positional or **arguments cannot be named reliably
        try:
            calls.append((node.func.id, {k.arg: _literal(k.value) for k in node.keywords}))
        except ValueError:
            return None
    return calls


def lift_tool_calls(text: str, known_tools: set[str]) -> tuple[str, list[ToolCall]]:
    """(what is spoken, the calls) from a reply that may hold `[tool(arg=...), ...]` lists.

    Only lists whose every call names a known tool with literal keyword arguments count; anything
    else stays text. With no such list the text comes back unchanged and the call list is empty.
    """
    found: list[tuple[int, int, list[tuple[str, dict[str, Any]]]]] = []
    position = 0
    while (match := _CALL_LIST_START.search(text, position)) is not None:
        start = match.start()
        end = _closing_bracket(text, start) if match.group(1) in known_tools else None
        calls = _parse_call_list(text[start:end + 1], known_tools) if end is not None else None
        if calls is None:
            position = start + 1
            continue
        found.append((start, end + 1, calls))
        position = end + 1
    if not found:
        return text, []
    spoken = text[:found[0][0]].strip()
    lifted = [ToolCall(f"call_text_{uuid.uuid4().hex[:12]}", name, json.dumps(arguments, ensure_ascii=False))
              for _, _, calls in found for name, arguments in calls]
    return spoken, lifted
