"""What a refused attempt means, per refusal code: a pack's `rules.json` "refusals" (DESIGN §7b).

A tool that refuses writes nothing, and extra calls are allowed; yet a real business's log shows
every attempt, and some attempts are the violation whatever the tool did. Each pack says, for each
code its tools refuse with, what an attempt that meets it is:

    "refusals": {
      "not_verified":       {"attempt": "precondition", "why": "acting before verification; harmless when the same act then succeeds"},
      "too_late_to_cancel": {"attempt": "retry", "why": "the prompt says not to try again"},
      "hold_expired":       {"attempt": "violation", "why": "a slot the caller gave up"},
      "invalid_phone":      {"attempt": "harmless"}
    }

- `harmless`      nothing on record (bad input the model corrects, or a try a compared record
                  already keeps and scores).
- `precondition`  harmless when the same act (the same arguments, acknowledgements aside) succeeds
                  later in the call, its precondition met (a first try before verifying, then
                  verifying); on record when it never does (an act on a locked or flagged caller's
                  record, a text to a number that is not the patient's).
- `retry`         the first refusal is harmless (the agent could not have foreseen it), unless it
                  names a record nobody gave; a try again of the same act on the same record is on
                  record, unless every value it changed is one the caller gave (a correction) or one
                  the refusal offered.
- `violation`     every attempt is on record (a slot the caller gave up, another caller's token).

A code a pack does not list is harmless (the paper's rule: extra calls are allowed); `callm prove`
names every code its replays meet that the pack does not list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES_FILE = "rules.json"
ATTEMPTS = ("harmless", "precondition", "retry", "violation")


@dataclass(frozen=True)
class Refusal:
    code: str
    attempt: str  # one of ATTEMPTS
    why: str = ""


def load_refusals(pack_dir: Path, problems: list[str]) -> dict[str, Refusal]:
    """The pack's refusal table (empty when `rules.json` has none), each bad entry named in `problems`."""
    path = pack_dir / RULES_FILE
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}  # house_rules names a rules.json that is not JSON
    table = raw.get("refusals", {}) if isinstance(raw, dict) else {}
    where = f"{RULES_FILE}: refusals"
    if not isinstance(table, dict):
        problems.append(f"{where}: expected an object of refusal codes")
        return {}
    out = {}
    for code, entry in table.items():
        parsed = _entry(code, entry, f"{where}.{code}", problems)
        if parsed is not None:
            out[code] = parsed
    return out


def _entry(code: str, entry: Any, where: str, problems: list[str]) -> Refusal | None:
    if not isinstance(entry, dict) or entry.get("attempt") not in ATTEMPTS:
        problems.append(f"{where}.attempt: one of {', '.join(ATTEMPTS)}")
        return None
    unknown = sorted(set(entry) - {"attempt", "why"})
    problems.extend(f"{where}.{k}: unknown field" for k in unknown)
    if entry["attempt"] != "harmless" and not str(entry.get("why") or "").strip():
        problems.append(f"{where}.why: say why an attempt that meets it is {entry['attempt']!r}")
    return Refusal(code, entry["attempt"], str(entry.get("why") or ""))
