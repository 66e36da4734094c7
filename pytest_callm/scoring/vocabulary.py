"""Is a free text made of words? (DESIGN §7b, "free text carries what it is for")

A summary a business reads that is empty or keyboard noise ("asdf", "x x x") carries nothing, however
right the tool calls around it are. A text is words when at least half of its words are English (the
`english-words` package's lists, read once) or the business's own (its prompts and tool descriptions:
names of products, drugs, places). Inflections count as their stem: "cancelled" is "cancel".
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from pytest_callm.normalize import fold_accents
from pytest_callm.task.pack import Pack

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SUFFIXES = ("'s", "ies", "ied", "ing", "ed", "es", "s", "ly", "er", "est")
KNOWN_SHARE = 0.5


@lru_cache(maxsize=1)
def english() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2", "gcide"], lower=True, alpha=True))


_PACK_WORDS: dict[int, tuple[Pack, frozenset[str]]] = {}


def pack_words(pack: Pack) -> frozenset[str]:
    cached = _PACK_WORDS.get(id(pack))
    if cached is None or cached[0] is not pack:
        texts = [pack.greeting, *(a.prompt for a in pack.agents.values()),
                 *(json.dumps(t.schema) for t in pack.tools.values())]
        found = frozenset(_WORD.findall(fold_accents(" ".join(texts)).lower()))
        cached = _PACK_WORDS[id(pack)] = (pack, found)
    return cached[1]


def _stems(word: str) -> list[str]:
    out = [word]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            stem = word[: -len(suffix)]
            out.extend([stem, stem + "e", stem + "y"])
            if len(stem) > 2 and stem[-1] == stem[-2]:
                out.append(stem[:-1])  # "cancelled" -> "cancel"
    return out


def known(word: str, extra: frozenset[str]) -> bool:
    vocabulary = english()
    return any(s in vocabulary or s in extra for s in _stems(word))


def is_nonsense(text: str, pack: Pack) -> bool:
    found = _WORD.findall(fold_accents(text or "").lower())
    if not found:
        return True
    extra = pack_words(pack)
    return sum(known(w, extra) for w in found) < KNOWN_SHARE * len(found)
