"""What the caller said beside what the agent heard, word by word: the recognizer's changes marked."""

from __future__ import annotations

import difflib
from typing import Any


def _marked(tokens: list[str], changed: list[bool]) -> list[dict[str, Any]]:
    """Runs of words, each run changed or not, for the template to wrap in <del>/<ins>."""
    runs: list[dict[str, Any]] = []
    for tok, ch in zip(tokens, changed):
        if runs and runs[-1]["changed"] == ch:
            runs[-1]["text"] += " " + tok
            continue
        if runs:  # the space between two runs belongs to neither
            if runs[-1]["changed"]:
                runs.append({"text": " ", "changed": False})
            else:
                runs[-1]["text"] += " "
        runs.append({"text": tok, "changed": ch})
    return runs


def word_diff(said: str, heard: list[str]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """What the caller said and what the agent heard (one line per message the line delivered), with
    the words the recognizer dropped or changed marked in the first and those it wrote in the second."""
    a = said.split()
    parts = [h.split() for h in heard]
    b = [t for p in parts for t in p]
    said_changed, heard_changed = [False] * len(a), [False] * len(b)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            said_changed[i1:i2] = [True] * (i2 - i1)
            heard_changed[j1:j2] = [True] * (j2 - j1)
    lines, at = [], 0
    for p in parts:
        lines.append(_marked(p, heard_changed[at:at + len(p)]))
        at += len(p)
    return _marked(a, said_changed), lines
