"""Which task a stand-in model's request belongs to, when one server plays many tasks at once.

A Chat Completions request carries no task id, and must not: the model under test is sent what a
real model is sent. So the stand-ins tell the task the way a person would, from the conversation:

- the caller's side: its system prompt is built from the task's brief (`caller_prompt`), which holds
  the task's locked script (`intent`) word for word, so the task is the one whose script the prompt
  holds (failing that, the one whose words it shares most);
- the agent's side: it hears the caller's first words through the phone line (every locked task's
  script opens with a line of its own: "Open with exactly: ..."), so the task is the one whose
  opening shares the most words with what was heard. A recognizer error changes a word or two, not
  the match. When two tasks open alike (two callers who both want to join a membership), the agent
  asks for the caller's name, and the names and numbers the caller gives decide. Two tasks with one
  caller who opens with the same words (healthcare C1-H1 and C2-H4: one patient cancelling this
  afternoon) are not told apart: served together, the agent plays one key on both calls and fails
  the other task, as an agent would that took the call for another.

The book holds the served tasks and their packs; it never changes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_callm.rl.splits import load_tasks
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import Task

# A match this close to the best one leaves the agent unsure (shares of the opening's words).
AMBIGUOUS_MARGIN = 0.15
MIN_OPENING_SHARE = 0.5  # below it the opening matched no task well: the agent asks
_QUOTED = re.compile(r'"([^"]+)"')
_OPENING = re.compile(r'(?:Open|Start|Begin)[^"]{0,80}"([^"]+)"')
_WORD = re.compile(r"[a-z0-9]+")
# Words too common to tell two openings apart.
_COMMON = frozenset("""a an and are as at be but by can do for from have hi hello i id im ive is it its me my of on
or so that the this to was we with you your youre yes please just like want would could about get""".split())


def words(text: str) -> frozenset[str]:
    """The telling words of a text: lowercased, letters and digits (apostrophes dropped: "I'd" is
    "id"), without the commonest ones."""
    return frozenset(w for w in _WORD.findall(text.lower().replace("'", "")) if w not in _COMMON)


def quoted_lines(intent: str) -> list[tuple[str, str]]:
    """The lines a caller's script tells it to say, each with the words that come before it in its
    sentence (when to say it): [(condition, line)]."""
    out = []
    for m in _QUOTED.finditer(intent):
        start = max(intent.rfind(". ", 0, m.start()), intent.rfind('." ', 0, m.start()), -1) + 1
        out.append((intent[start:m.start()], m.group(1)))
    return out


def opening_line(intent: str) -> str:
    """The caller's first words: the line its script opens with, else its first quoted line, else
    its first sentence."""
    m = _OPENING.search(intent) or _QUOTED.search(intent)
    return m.group(1) if m else intent.split(". ")[0]


@dataclass(frozen=True)
class Entry:
    task: Task
    pack: Pack
    opening: str
    opening_words: frozenset[str]
    known_words: frozenset[str]  # the caller's name and traits: what it says when asked who it is

    @property
    def name(self) -> str:
        return self.task.name


def _entry(task: Task, pack: Pack) -> Entry:
    raw = task.raw
    opening = opening_line(raw.get("intent", ""))
    known = " ".join([raw.get("customer_name", ""), *(str(t.get("value", "")) for t in raw.get("traits", []))])
    return Entry(task, pack, opening, words(opening), words(known))


class TaskBook:
    """The tasks one stand-in server plays."""

    def __init__(self, entries: list[Entry]):
        if not entries:
            raise ValueError("a stand-in server needs at least one task to play")
        self.entries = entries
        self._by_intent = [(e.task.raw.get("intent", ""), e) for e in entries]

    @classmethod
    def load(cls, paths: list[Path], industries: list[Path] = ()) -> "TaskBook":
        """Every task file under `paths` (their packs from `industries`, then the installed suite's).
        Raises ValueError naming the files that do not load."""
        loaded, problems = load_tasks(paths, PackRegistry(list(industries)))
        if problems:
            raise ValueError("tasks that do not load:\n  " + "\n  ".join(problems))
        return cls([_entry(t.task, t.pack) for t in loaded])

    def __len__(self) -> int:
        return len(self.entries)

    def for_caller(self, system_prompt: str) -> Entry:
        """The task whose caller brief this system prompt is."""
        for intent, entry in self._by_intent:
            if intent and intent in system_prompt:
                return entry
        said = words(system_prompt)
        return max(self.entries, key=lambda e: len(said & (e.opening_words | e.known_words)))

    def for_agent(self, messages: list[dict[str, Any]], sure_only: bool = True) -> Entry | None:
        """The task of an agent's conversation, from what the caller said; None while two tasks match
        alike (with `sure_only`; else the best match)."""
        heard = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        if not heard:
            return None if sure_only else self.entries[0]
        first = words(heard[0])
        since = words(" ".join(heard))

        share = {e.name: len(first & e.opening_words) / max(len(e.opening_words), 1) for e in self.entries}
        best = max(share.values())
        near = [e for e in self.entries if share[e.name] >= best - AMBIGUOUS_MARGIN]
        if best < MIN_OPENING_SHARE:
            near = self.entries  # the opening told nothing: what was said since must
        ranked = sorted(near, key=lambda e: (len(since & e.known_words), share[e.name]), reverse=True)
        if not sure_only or len(ranked) == 1:
            return ranked[0]
        if len(since & ranked[0].known_words) >= len(since & ranked[1].known_words) + 2:
            return ranked[0]  # its name and number heard since, the other's not
        return None
