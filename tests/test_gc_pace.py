"""The collector's pace (gc_pace.py): raised in a benchmark run, left alone in a session that only has the plugin."""

from __future__ import annotations

import gc

import pytest

from pytest_callm import gc_pace


@pytest.fixture
def threshold():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.parametrize("given, paced", [((700, 10, 10), (10_000, 10, 10)), ((5, 3, 2), (10_000, 3, 2)),
                                          ((50_000, 10, 10), (50_000, 10, 10)), ((0, 10, 10), (0, 10, 10))])
def test_a_lower_first_threshold_is_raised_and_a_higher_or_disabled_one_kept(threshold, given, paced):
    gc.set_threshold(*given)
    gc_pace.pace()
    assert gc.get_threshold() == paced


@pytest.mark.parametrize("options, first", [(["--callm-model=oracle"], gc_pace.FIRST_THRESHOLD), ([], 700)])
def test_a_benchmark_run_paces_its_process_and_a_plain_session_keeps_the_default(pytester, options, first):
    pytester.makeconftest("import gc\n\ndef pytest_sessionfinish(session):\n"
                          "    open('threshold.txt', 'w').write(str(gc.get_threshold()[0]))\n")
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", *options)
    assert int((pytester.path / "threshold.txt").read_text()) == first
