"""A pack's domain terms, found in words in any inflection (DESIGN §7b).

Packs declare the terms a business checks (injuries, symptoms, hazards: `words.json` "terms"). A term
stands in a text when each of its words does, close together, in any inflection: "broken hip" in "I
broke my hip", "burning" in "it burned my hand". One reader, used by the words gate and by the oracle
that writes a summary carrying them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pytest_callm.normalize import fold_accents

_TERM_WORD = re.compile(r"[a-z0-9]+")
_NEGATIONS = frozenset({"no", "not", "without", "never", "nor", "denies", "deny", "deni", "noth"})  # stems too: "deni" (denies), "noth" (nothing)


# Verbs whose past is no suffix: "I fell" holds "a fall", "it broke" holds "broken".
_IRREGULAR = {"fell": "fall", "fallen": "fall", "broke": "break", "broken": "break", "bit": "bite", "bitten": "bite",
              "stung": "sting", "tore": "tear", "torn": "tear", "slid": "slide", "struck": "strike",
              "swollen": "swell", "burnt": "burn", "froze": "freeze", "frozen": "freeze", "shook": "shake",
              "caught": "catch", "threw": "throw", "thrown": "throw", "ran": "run", "hit": "hit"}


@lru_cache(maxsize=65536)  # a call's words repeat: each is stemmed once
def _stem(word: str) -> str:
    word = _IRREGULAR.get(word, word)
    for suffix in ("ing", "ed", "en", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def stems(text: str) -> list[str]:
    return [_stem(w) for w in _TERM_WORD.findall(fold_accents(text).lower())]


@lru_cache(maxsize=4096)
def _term_stems(term: str) -> tuple[str, ...]:
    return tuple(stems(term))


class Stems:
    """A text's word stems with where each stands, so a term is found without a scan of the text."""

    def __init__(self, text: str = ""):
        self.words: list[str] = []
        self.at: dict[str, list[int]] = {}
        if text:
            self.extend(text)

    def extend(self, text: str) -> None:
        for w in stems(text):
            self.at.setdefault(w, []).append(len(self.words))
            self.words.append(w)
        self.words.append("|")  # no term spans two texts

    def has_affirmed(self, term: str) -> bool:
        """Like `has`, but not where it is denied: "no swelling, no rash, no fever" holds none of them."""
        wanted = _term_stems(term)
        if not wanted or any(w not in self.at for w in wanted):
            return False
        window = len(wanted) + 2
        return any(set(wanted) <= set(self.words[max(i - window, 0):i + window])
                   and not _NEGATIONS & set(self.words[max(i - 4, 0):i]) for i in self.at[wanted[0]])

    def has(self, term: str) -> bool:
        """Whether a domain term stands here, its words in any inflection and close together:
        "broken hip" in "I broke my hip", "rear-ended" in "got rear ended"."""
        wanted = _term_stems(term)
        if not wanted or any(w not in self.at for w in wanted):
            return False
        # In either order: "broken hip" also stands in "her hip was broken".
        window = len(wanted) + 2
        return any(set(wanted) <= set(self.words[max(i - window, 0):i + window]) for i in self.at[wanted[0]])
