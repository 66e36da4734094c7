"""Value normalization shared by the tool gate and the database gate (DESIGN §7).

Two values are equal when their normal forms are: case and inner whitespace never matter, phone
numbers compare as digits (the paper's rule: `206-555-0220` equals `2065550220`), so does any whole
number of seven or more digits; other numbers compare by value, "true"/"false" as booleans (never
equal to 1 or 0), and a pack alias table maps every variant to its canonical value. Date-times
compare to the minute.
"""

from __future__ import annotations

import re
from typing import Any

_PHONE = re.compile(r"\+?\(?\d[\d\s().-]*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


def normalize(value: Any, aliases: dict[str, str] | None = None) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)  # tagged, so True never equals 1
    if isinstance(value, (int, float)):
        if value >= 1_000_000 and float(value).is_integer():
            return str(int(value))  # long numbers compare as digit strings, like phone numbers
        return float(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v, aliases) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, normalize(v, aliases)) for k, v in value.items()))
    text = " ".join(str(value).split()).casefold()
    if aliases and text in aliases:
        return ("alias", aliases[text].casefold())
    if text in ("true", "false"):
        return ("bool", text == "true")
    if _ISO_DATE.fullmatch(text):
        return text
    dt = _ISO_DATETIME.fullmatch(text.upper())
    if dt:
        return f"{dt.group(1)}T{dt.group(2)}"
    if _NUMBER.fullmatch(text) and "." in text:
        return float(text)
    if _PHONE.fullmatch(text) and sum(c.isdigit() for c in text) >= 7:
        return re.sub(r"\D", "", text)
    if _NUMBER.fullmatch(text):
        return float(text)
    return text


def same(expected: Any, actual: Any, aliases: dict[str, str] | None = None) -> bool:
    return normalize(expected, aliases) == normalize(actual, aliases)
