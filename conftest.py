"""The repository's own pytest settings: the benchmark release that runs here are compared with.

The CALLM paper: "Caller, recognizer, and verifier versions are fixed for a leaderboard release".
These are the pins of the published release. Every run of the benchmark from this repository says,
in its run directory's manifest.json (`release`) and at the end of its summary, whether it used
exactly these, so that its figures can stand beside the release's, or what differs.

A change to the verifier or to the recognizer's error profile makes runs incomparable with this
release, as it should: publishing a new release means new pins here. A team that keeps its own
leaderboard copies this file and pins its own; to change a part of the call instead (a caller or a
phone line of its own), it overrides the `callm_caller` or `callm_line` fixture in its conftest.py
(docs/write-tasks.md, "Fixtures").
"""

# callm-2026.12.2: the verifier of "rules, not traps": every identity try and every look at a record
# kept and compared (a failed try forgiven only when the caller was heard saying it), free text read
# for what a rule forbids, generated row ids never compared, names with accents or as "Last, First".
# callm-2026.12.1's verdicts are not comparable with it.
RELEASE = {
    "name": "callm-2026.12.2",
    "caller": "gpt-5",  # the caller model config every published result was played against
    # the shipped phone-line error profile (pytest_callm/phone/data/line_profile.json)
    "line_profile_sha256": "bbed6cf8d6c9f1edcd3d226ebef200eba35688803b9059bb1064fba4e17999d6",
    # scoring/verify.py, verdict.py, heard.py, free_text.py, metrics.py, stats.py and normalize.py
    "verifier_sha256": "cabb20eb9840ff55579c0017ca44960763cc6a6ec82e47271bb1f95f9d325eb3",
    "attempts": 5,
}


def pytest_callm_release(config):
    return RELEASE
