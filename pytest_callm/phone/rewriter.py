"""The phone line's optional rewrite model (`--callm-line-model`), as the paper does it.

When the line has drawn a misheard name, word or phrase for a caller turn, this asks a model to
write how a phone recognizer would mishear that span, and only that span. Anything but a short,
different answer falls back to the pronouncing dictionary's suggestion, so a chatty or failing
model never leaks into the transcript.
"""

from __future__ import annotations

from typing import Any

from pytest_callm.model.protocol import Model, ModelRequest

PROMPT = """You simulate a telephone speech recognizer that mishears one short span of a caller's turn.
You get the turn, the span, and the kind of error. Reply with only the misheard version of the span:
a real word or name that sounds close to it on a phone line, about the same length. No quotes, no
explanation, nothing else."""


def misheard_rewriter(model: Model):
    """An async `rewriter(span, context) -> str` for `pytest_callm.phone.line.make_line`."""

    async def rewrite(span: str, context: dict[str, Any]) -> str:
        fallback = context.get("suggestion") or span
        message = (f"Turn: {context.get('turn', '')}\nSpan: {span}\n"
                   f"Error: {context.get('type', 'misheard_word').replace('_', ' ')}")
        reply = await model.respond(ModelRequest(agent="line", system_prompt=PROMPT,
                                                 messages=[{"role": "user", "content": message}], tools=[]))
        answer = " ".join((reply.text or "").strip().strip('"\'.').split())
        too_long = len(answer.split()) > max(3, 2 * len(span.split()))
        if not answer or too_long or answer.casefold() == span.casefold():
            return fallback
        return answer

    return rewrite
