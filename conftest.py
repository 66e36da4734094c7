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

# callm-2026.12.5: the words gate reads a day of the month said alone ("delivered on the sixth") as a
# date the call must ground, and a clause that names another person on record beside something of their
# records (a visit's type or provider, a date, an amount) as a disclosure, though those words name no one alone;
# a rule class's `read_back` tools (a result stated back is no promise); "nothing has been cancelled" is
# no claim of a cancellation, "Kowalski's" names Kowalski, a "third-party seller" states no third, and an
# offer ("I can take a message for Nina Patel") states no figure of what was done.
# callm-2026.12.4: every attempt on the record (issue 37): each pack's rules.json "refusals" says what a
# refusal means (a violation, a precondition the agent then meets, a retry, harmless), and a refused
# attempt the business's log shows as wrong fails the tools gate. The words gate (issue 36) reads a
# figure against its own source (words.json "figures": the booked date, the refund, the recipient),
# times with their half of the day, lengths of time, claims in summaries and terms the caller denied.
# callm-2026.12.4 and earlier releases are not comparable with it.
RELEASE = {
    "name": "callm-2026.12.5",
    "caller": "gpt-5",  # the caller model config every published result was played against
    # the shipped phone-line error profile (pytest_callm/phone/data/line_profile.json)
    "line_profile_sha256": "bbed6cf8d6c9f1edcd3d226ebef200eba35688803b9059bb1064fba4e17999d6",
    # saved/rundir.py VERIFIER_MODULES: the gates, the words gate's readers, metrics, stats, normalize.py
    # (2026-12-07: scoring/heard.py finds a value one edit away by searching, the same answers: tests/test_heard.py)
    "verifier_sha256": "b25dc70090f694df17f585a3642f563fdb09456bd3ed9a1cb9e83d68e1c673fd",
    "attempts": 5,
}


def pytest_callm_release(config):
    return RELEASE
