"""The repository's own pytest settings: the benchmark release that runs here are compared with.

The CALLM paper: "Caller, recognizer, and verifier versions are fixed for a leaderboard release".
These are the pins of the published release. Every run of the benchmark from this repository says,
in its run directory's manifest.json (`release`) and at the end of its summary, whether it used
exactly these, so that its figures can stand beside the release's, or what differs.

A change to the verifier or to the recognizer's error profile makes runs incomparable with this
release, as it should: publishing a new release means new pins here. A team that keeps its own
leaderboard copies this file and pins its own; to change a part of the call instead (a caller or a
phone line of its own), it overrides the `callm_caller` or `callm_line` fixture in its conftest.py
(README: "Fixtures").
"""

# callm-2026.12.1: the verifier of "every verdict earned" (post-nominals, abbreviations, contact and
# medication names, routes and either-calls); callm-2026.12's verdicts are not comparable with it.
RELEASE = {
    "name": "callm-2026.12.1",
    "caller": "gpt-5",  # the caller model config every published result was played against
    # the shipped phone-line error profile (pytest_callm/phone/data/line_profile.json)
    "line_profile_sha256": "bbed6cf8d6c9f1edcd3d226ebef200eba35688803b9059bb1064fba4e17999d6",
    # scoring/verify.py, scoring/verdict.py, normalize.py, scoring/metrics.py, scoring/stats.py
    "verifier_sha256": "781930d51e64fd7d617dcc5dffc07615ffc484d99cd3c99915545a9b8744f833",
    "attempts": 5,
}


def pytest_callm_release(config):
    return RELEASE
