"""A run says whether it is comparable to the pinned benchmark release (the root conftest.py's job)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from pytest_callm.saved.release import check_release
from pytest_callm.saved.rundir import line_identity, verifier_hash

ORACLE = "--callm-model=oracle"


def pins(**changed) -> dict:
    return {"name": "test-release", "caller": "offline",
            "line_profile_sha256": line_identity("default")["profile_sha256"],
            "verifier_sha256": verifier_hash(), "attempts": 5, **changed}


@pytest.fixture
def project(pytester, example_tools):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / "C2-E2", pytester.path / "tasks" / "vet_clinic" / "C2-E2")
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def pin_release(project, release: dict) -> None:
    project.makeconftest(f"def pytest_callm_release(config):\n    return {release!r}\n")


def test_a_run_with_the_pinned_settings_is_comparable_in_summary_and_manifest(project, tmp_path):
    pin_release(project, pins())
    result = project.runpytest(ORACLE, f"--callm-out={tmp_path / 'run'}")
    result.assert_outcomes(passed=5)
    assert "callm: comparable to release test-release" in result.stdout.str()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["release"] == {"release": "test-release", "comparable": True, "differs": []}


def test_a_run_off_the_pins_says_what_differs(project, tmp_path):
    pin_release(project, pins(verifier_sha256="0" * 64))
    result = project.runpytest(ORACLE, "--callm-attempts=2", "--callm-line=clean",
                               f"--callm-out={tmp_path / 'run'}")
    result.assert_outcomes(passed=2)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["release"]["comparable"] is False
    assert [d.split(" ")[0] for d in manifest["release"]["differs"]] == [
        "line_profile_sha256", "verifier_sha256", "attempts"]
    assert "callm: NOT comparable to release test-release: line_profile_sha256 None" in result.stdout.str()


def test_no_release_pinned_no_release_line(project, tmp_path):
    result = project.runpytest(ORACLE, f"--callm-out={tmp_path / 'run'}")
    assert "comparable to release" not in result.stdout.str()
    assert "release" not in json.loads((tmp_path / "run" / "manifest.json").read_text())


def test_a_pin_of_something_not_pinnable_is_refused():
    with pytest.raises(ValueError, match="model are not pinnable"):
        check_release({"name": "x", "model": "gpt-4.1"}, {})


def test_the_repositorys_root_conftest_compares_a_benchmark_run_with_the_published_release(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest", ORACLE, "-k", "C1-E1", "--callm-attempts=1", "-q",
                           "-p", "no:cacheprovider", f"--callm-out={tmp_path / 'run'}"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    release = json.loads((tmp_path / "run" / "manifest.json").read_text())["release"]
    # The oracle's caller is the offline one, and one attempt is not the release's five: both named.
    assert release["release"] == "callm-2026.12.5" and release["comparable"] is False
    assert [d.split(" ")[0] for d in release["differs"]] == ["caller", "attempts"]
