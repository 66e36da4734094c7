"""Is a free text made of words? (DESIGN §7b, "free text carries what it is for")

A summary a business reads that is empty or keyboard noise ("asdf", "x x x") carries nothing, however
right the tool calls around it are. A text is words when at least half of its words are English (the
`english-words` package's lists, read once a process) or the business's own (its prompts and tool descriptions:
names of products, drugs, places). Inflections count as their stem: "cancelled" is "cancel".
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import metadata

from pytest_callm import user_cache
from pytest_callm.normalize import fold_accents
from pytest_callm.task.pack import Pack

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SUFFIXES = ("'s", "ies", "ied", "ing", "ed", "es", "s", "ly", "er", "est")
KNOWN_SHARE = 0.5
MIN_CONTENT_WORDS = 1


_LISTS = ("web2", "gcide")


@lru_cache(maxsize=1)
def english() -> frozenset[str]:
    """The word lists, lower-case and letters only: built from the package once (0.17 s of CPU), then
    read from the user's cache by every process that scores free text (0.07 s)."""
    try:
        release = metadata.version("english-words")
    except metadata.PackageNotFoundError:
        release = "missing"
    cached = user_cache.cache_file("english-words", f"{release} {_LISTS} lower alpha".encode())
    words = user_cache.read(cached)
    if isinstance(words, frozenset):
        return words
    from english_words import get_english_words_set

    words = frozenset(get_english_words_set(list(_LISTS), lower=True, alpha=True))
    user_cache.write(cached, words)
    return words


_PACK_WORDS: dict[int, tuple[Pack, frozenset[str]]] = {}


def pack_words(pack: Pack) -> frozenset[str]:
    cached = _PACK_WORDS.get(id(pack))
    if cached is None or cached[0] is not pack:
        texts = pack.published_texts()
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


# Words that carry no content of their own: a text of these alone says nothing.
_FILLER = frozenset("the and for with from this that was are has have had but not you your our she her his him "
                    "they them its it's any all can will would test okay yes".split())


def content_words(text: str) -> list[str]:
    """The words of a text that could carry content: three letters or more, no filler."""
    return [w for w in _WORD.findall(fold_accents(text or "").lower()) if len(w) >= 3 and w not in _FILLER]


def is_nonsense(text: str, pack: Pack) -> bool:
    """Empty, keyboard noise, or words that say nothing: at least half its words must be known, and at
    least one a known content word ("Complaint." is words; "test test 123" and "ok ok ok asdf" are
    not)."""
    found = _WORD.findall(fold_accents(text or "").lower())
    if not found:
        return True
    extra = pack_words(pack)
    if sum(known(w, extra) for w in found) < KNOWN_SHARE * len(found):
        return True
    return len({w for w in content_words(text) if known(w, extra)}) < MIN_CONTENT_WORDS
