"""Is a run comparable to a benchmark release?

The CALLM paper: "Caller, recognizer, and verifier versions are fixed for a leaderboard release".
A release names what it fixed (its pins); a run compares what it used with them, and its manifest
and summary say whether its figures can stand beside the release's, and if not, what differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PINNED = ("caller", "line_profile_sha256", "verifier_sha256", "attempts")


@dataclass
class ReleaseCheck:
    release: str
    differs: list[str] = field(default_factory=list)  # "what: release value, this run's value"

    @property
    def comparable(self) -> bool:
        return not self.differs

    def to_json(self) -> dict[str, Any]:
        return {"release": self.release, "comparable": self.comparable, "differs": self.differs}

    def describe(self) -> str:
        if self.comparable:
            return f"callm: comparable to release {self.release} (caller, recognizer, verifier and attempts as pinned)"
        return f"callm: NOT comparable to release {self.release}: " + "; ".join(self.differs)


def check_release(pins: dict[str, Any], used: dict[str, Any]) -> ReleaseCheck:
    """Compare the run's settings (`used`, keyed like PINNED) with a release's pins."""
    unknown = sorted(set(pins) - set(PINNED) - {"name"})
    if unknown:
        raise ValueError(f"release pins {', '.join(unknown)} are not pinnable (pinnable: {', '.join(PINNED)})")
    check = ReleaseCheck(str(pins.get("name", "unnamed")))
    for key in PINNED:
        if key in pins and pins[key] != used.get(key):
            check.differs.append(f"{key} {used.get(key)!r}, release {pins[key]!r}")
    return check
