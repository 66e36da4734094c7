"""Where a run's report page is, said at the end of the run: a path, clickable where the terminal can.

Terminals that support OSC 8 hyperlinks (most current ones) show the path as a link to the file;
the escape is only written when pytest writes markup, so logs and pipes get the plain path.
"""

from __future__ import annotations

from pathlib import Path

REPORT_PAGE = "report.html"


def hyperlink(text: str, target: Path) -> str:
    """`text` as an OSC 8 link to the local file `target`."""
    return f"\x1b]8;;{target.resolve().as_uri()}\x1b\\{text}\x1b]8;;\x1b\\"


def report_page_line(run_dir: Path, markup: bool) -> str | None:
    """`callm: report page <path>` for the run's HTML report, or None when the run wrote none."""
    page = Path(run_dir) / REPORT_PAGE
    if not page.is_file():
        return None
    return f"callm: report page {hyperlink(str(page), page) if markup else page}"
