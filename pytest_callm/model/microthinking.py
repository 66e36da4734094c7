"""Microthinking (`[mode] microthinking = true`; paper, "Models under test").

Some phone models are trained to write one short sentence of reasoning before every reply, returned
separately and withheld from the caller. The client asks for it at the end of the system prompt: a
sentence between `<think>` and `</think>`, then the reply. While the reply streams, `ThoughtSplitter`
keeps what is between the markers as reasoning and passes on only what follows, so:

- the thought never reaches the caller, and is kept in the trajectory as the reply's reasoning;
- the time to first token runs to the first spoken token (or tool call) after the thought, so it
  includes the time the model spent writing that sentence (the paper measures it the same way).

A reply that does not open with the marker is spoken as written (the model skipped its thought). A
thought that is never closed is kept as reasoning and nothing of it is spoken: the mode promises the
caller never hears the thought, so a reply that runs on inside it has no spoken text. A server that
already splits reasoning out (vLLM with a reasoning parser: `reasoning_content`) needs no markers;
the client keeps that reasoning apart in any mode.
"""

from __future__ import annotations

OPEN = "<think>"
CLOSE = "</think>"
UNCLOSED_NOTE = "the reply opened a thought and never closed it: nothing of it was spoken"

INSTRUCTION = (
    "# How to reply\n\n"
    f"Before every reply, think in one short sentence written between {OPEN} and {CLOSE}, then reply. "
    "The caller never sees or hears what is between the markers. For example:\n"
    f"{OPEN}The caller gave a name but no phone number, so I ask for it.{CLOSE}May I have your phone number?")


def with_instruction(system_prompt: str) -> str:
    """The system prompt with the microthinking instruction at its end."""
    return f"{system_prompt.rstrip()}\n\n{INSTRUCTION}"


class ThoughtSplitter:
    """Splits streamed content into a leading marked thought and the spoken rest.

    `feed(piece)` returns the part of the piece that is spoken (often "", while the thought is still
    being written or the marker not yet certain); `finish()` returns what was held back at the end.
    """

    def __init__(self) -> None:
        self._state = "start"  # start -> thought -> after (whitespace skipped) -> spoken
        self._held = ""
        self._thought: list[str] = []  # parts: joined once, so a long thought reads in linear time
        self.unclosed = False  # the stream ended inside the thought

    @property
    def thought(self) -> str | None:
        return "".join(self._thought).strip() or None

    def feed(self, piece: str) -> str:
        self._held += piece
        if self._state == "start":
            head = self._held.lstrip()
            if not head or (len(head) < len(OPEN) and OPEN.startswith(head)):
                return ""  # not yet known whether the reply opens with a thought
            if head.startswith(OPEN):
                self._state, self._held = "thought", head[len(OPEN):]
            else:
                self._state, self._held = "spoken", head  # no thought: spoken as written
        if self._state == "thought":
            end = self._held.find(CLOSE)
            if end < 0:  # the thought so far moves out of what is searched, less a marker's possible start
                keep = len(CLOSE) - 1
                self._thought.append(self._held[:-keep])
                self._held = self._held[-keep:]
                return ""
            self._thought.append(self._held[:end])
            self._state, self._held = "after", self._held[end + len(CLOSE):]
        if self._state == "after":  # the whitespace between the thought and the reply is not spoken
            self._held = self._held.lstrip()
            if not self._held:
                return ""
            self._state = "spoken"
        spoken, self._held = self._held, ""
        return spoken

    def finish(self) -> str:
        """What is left when the reply has ended: a held-back start is spoken, an open thought is not."""
        held, self._held = self._held, ""
        if self._state == "thought":
            self._thought.append(held)
            self.unclosed = True
            return ""
        return held.strip() if self._state == "start" else ""


def split(content: str) -> tuple[str, str | None, bool]:
    """(spoken, thought, unclosed) of a whole reply (an endpoint that does not stream)."""
    splitter = ThoughtSplitter()
    spoken = splitter.feed(content) + splitter.finish()
    return spoken, splitter.thought, splitter.unclosed
