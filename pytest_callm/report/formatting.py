"""How values read on the report's pages (also the templates' filters), and where the pages are."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PAGE_NAME = "report.html"
STYLESHEET = "style.css"  # the task pages' one stylesheet, in the folder of their industry folders


def show(value: Any) -> str:
    """A value as a person reads it: text as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def interval(iv: dict[str, Any] | None) -> str:
    if not iv or iv.get("low") is None or iv.get("high") is None:
        return ""
    return f"[{iv['low'] * 100:.1f}, {iv['high'] * 100:.1f}]"


def ms(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else ("n/a" if value is None else str(value))


def slug(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts)


def task_page(page_name: str, industry: str, task_id: str) -> str:
    """A task's page, relative to the main page: `report/<industry>/<task>.html` beside `report.html`."""
    return f"{Path(page_name).stem}/{slug(industry)}/{slug(task_id)}.html"


def flat_settings(config: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A config as (dotted name, value) rows."""
    if not isinstance(config, dict):
        return [(prefix or "value", show(config))]
    rows: list[tuple[str, str]] = []
    for k, v in config.items():
        name = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            rows.extend(flat_settings(v, name))
        elif v not in (None, "", {}, []):
            rows.append((name, show(v)))
    return rows
