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

# callm-2026.12.3: the verifier of "every attempt is on the record" (issue 37): a failed try forgiven
# only for what the line did (a value it made of what was said, or one the caller corrected after the
# try), never the same refused act under another name; a number changed one edit from what was said
# fails even on the right answer's row; the caller's own identity checked again is harmless; a
# stated strength or form must agree; a pharmacy is a place. And the words gate beside the paper's three
# gates (issue 36): what the agent says and writes read against what the call established (rule classes,
# claims, results, invented facts, disclosure, free text for its purpose); the paper's three-gate figures
# are printed beside. callm-2026.12.2's verdicts are not comparable with it. The tool-call log is a
# record (issue 37, item 1): refused attempts each pack's rules.json "refusals" keeps on record fail
# the tools gate.
RELEASE = {
    "name": "callm-2026.12.3",
    "caller": "gpt-5",  # the caller model config every published result was played against
    # the shipped phone-line error profile (pytest_callm/phone/data/line_profile.json)
    "line_profile_sha256": "bbed6cf8d6c9f1edcd3d226ebef200eba35688803b9059bb1064fba4e17999d6",
    # saved/rundir.py VERIFIER_MODULES: the gates, the words gate's readers, metrics, stats, normalize.py
    "verifier_sha256": "73b2196c3341236840814bdeaf9958e5cd14e5fbb302c74aeff47decbc76d2c6",
    "attempts": 5,
}


def pytest_callm_release(config):
    return RELEASE
