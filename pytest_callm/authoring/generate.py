"""Training tasks that are not the test: `callm generate PACK --n N --seed S [--out DIR]`.

The locked tasks are the evaluation set. A generated task takes one of them as its skeleton (the
same category, caller behaviour, agents and tools) and redraws every person and fact the skeleton's
caller brings, consistently, wherever it appears:

- the people records the skeleton touches (rows of the tables the pack lists in `generate.json`
  whose name, phone, email or identifier the task mentions), and every row tied to them (an order,
  an appointment, a matter), are copied into the task's own `records` (rows the call's database
  gets on top of the pack's seed) with fresh names, dates of birth, phones, emails, ids and digits;
- each value of a redrawn kind the caller brings that no seed row holds (a new caller's name and
  phone, an incident date, the other side's name) is drawn afresh too;
- the caller's script, traits, scripted responses, answer key, routes and traps say the new values
  in the spellings the skeleton used (a phone with dashes, a date of birth in words, "Ms. Lastname").

What the business owns (slots, products, fees, staff, policy) is kept, and what the agent reads off
a tool (a hold token) is taken from the new key's own replay. Fresh values come from the pack's
`generate.json` pools, drawn by `random.Random` seeded with the pack, `--seed`, the task's index
and the try (so a seed always writes the same bytes), never from a locked task: a drawn name,
phone, date of birth or id that any locked task or the pack's seed holds is drawn again.

The answer key's expected state is what replaying it leaves (`lock`), and a drawn task is kept only
when the oracle passes it, `callm prove` finds no problem in it and `callm split-check` finds no
clash with the locked suite; otherwise it is drawn again (another try), and a skeleton that never
yields a keepable task is left out and named.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
import sqlite3
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.authoring.lock import expected_state, find_task_files
from pytest_callm.normalize import CORPORATE_SUFFIXES, phone as phone_digits
from pytest_callm.phone.spoken_numbers import ordinal_words, year_words
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import TaskError, load_task, read_task_json

PREFIX = "gen"  # generated task ids start so: never a locked id, and `-k gen` picks them
TRIES = 4  # draws per task before its skeleton is given up for that slot
REDRAWN = ("person", "phone", "email", "date", "identifier", "digits", "party", "organization")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
# Trait names of the public task format that carry a caller's fact of a redrawn kind.
TRAIT_KINDS = {"full_name": "person", "name": "person", "caller_name": "person", "phone": "phone",
               "email": "email", "date_of_birth": "date", "dob": "date"}


PHONE_IN_TEXT = re.compile(r"(?<![\w-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])")
EMAIL_IN_TEXT = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


class GenerateError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# what the pack says

@dataclass
class Spec:
    """A pack's `generate.json`: per people table, column -> kind; and the pools names come from."""

    records: dict[str, dict[str, str]]
    first_names: list[str]
    last_names: list[str]
    organizations: list[str]  # first words of a business's name
    organization_words: list[str]  # words that say a party is a business, not a person

    @classmethod
    def load(cls, pack: Pack) -> Spec:
        path = pack.root / "generate.json"
        if not path.exists():
            raise GenerateError(f"pack {pack.name!r} has no generate.json: it says which columns of its people "
                                "records are redrawn, and the pools of fresh names (see docs/generate.md)")
        raw = json.loads(path.read_text(encoding="utf-8"))
        spec = cls(raw["records"], raw["first_names"], raw["last_names"], raw.get("organizations", []),
                   raw.get("organization_words", []))
        for table, columns in spec.records.items():
            for column, kind in columns.items():
                if kind not in REDRAWN:
                    raise GenerateError(f"{path}: records.{table}.{column}: kind {kind!r} is not one generate "
                                        f"redraws ({', '.join(REDRAWN)})")
        return spec


@dataclass
class Seed:
    """The pack's seeded database, in memory, with what identifies each row."""

    db: sqlite3.Connection
    tables: list[str]
    columns: dict[str, list[str]]
    rowid: dict[str, str | None]  # the INTEGER PRIMARY KEY column: a copy gets a fresh one
    text_keys: dict[str, list[str]]  # a one-column TEXT primary key: a copy gets a fresh id
    text: str  # every value of the seed, for "does the seed hold this value?"
    digits: set[str]  # every run of digits the seed holds (phones and ids, however written)

    @classmethod
    def load(cls, pack: Pack) -> Seed:
        db = sqlite3.connect(":memory:")
        db.row_factory = sqlite3.Row
        db.executescript(pack.schema_sql)
        db.executescript(pack.seed_sql)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
        columns, rowid, text_keys, values = {}, {}, {}, []
        for t in tables:
            info = list(db.execute(f'PRAGMA table_info("{t}")'))
            columns[t] = [c[1] for c in info]
            pk = [c for c in info if c[5]]
            rowid[t] = pk[0][1] if len(pk) == 1 and pk[0][2].upper() == "INTEGER" else None
            # A table's own text id (one column): a copied row needs a fresh one. A key of several
            # columns names other tables' rows (a carrier and a member id): its kinds are declared.
            text_keys[t] = [pk[0][1]] if len(pk) == 1 and pk[0][2].upper() != "INTEGER" else []
            for row in db.execute(f'SELECT * FROM "{t}"'):
                values.extend(str(v) for v in row if v is not None)
        text = "\n".join(values)
        return cls(db, tables, columns, rowid, text_keys, text, set(re.findall(r"\d{4,}", text)))

    def rows(self, table: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute(f'SELECT * FROM "{table}" ORDER BY rowid')]

    def holds(self, kind: str, value: str) -> bool:
        if kind == "phone":
            return phone_digits(value) in self.digits
        if kind == "date":
            return value[:10] in self.text
        return value.lower() in self.text.lower()


# ----------------------------------------------------------------------------------------------
# how a value is written: every spelling of an old value, paired with the same spelling of the new

def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def phone_forms(digits: str) -> list[str]:
    d = digits[-10:]
    a, b, c = d[:3], d[3:6], d[6:]
    return [f"{a}-{b}-{c}", f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"{a} {b} {c}", d]


def date_forms(iso: str) -> list[str]:
    day = dt.date.fromisoformat(iso[:10])
    month = MONTHS[day.month - 1]
    return [iso, f"{month} {ordinal_words(day.day)}, {year_words(day.year)}", f"{month} {day.day}, {day.year}",
            f"{day.month:02d}/{day.day:02d}/{day.year}", f"{day.month}/{day.day}/{day.year}",
            f"{month} {ordinal_words(day.day)}", f"{month} {day.day}"]


def forms(kind: str, value: str) -> list[str]:
    """The spellings of `value` a task may hold (the old value's and the new value's line up by index)."""
    if kind == "phone":
        return phone_forms(phone_digits(value))
    if kind == "date":
        return date_forms(value)
    if kind == "email":
        return [value, value.lower()]
    return [value]


@dataclass
class Drawn:
    """One task's map from old values to new ones, and the names among them (replaced word by word)."""

    values: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, old) -> new
    words: dict[str, str] = field(default_factory=dict)  # a first or last name -> its new one

    def new(self, kind: str, old: str) -> str | None:
        return self.values.get((kind, old))

    def pairs(self) -> list[tuple[str, str]]:
        out = []
        for (kind, old), new in self.values.items():
            if kind == "person":
                out.append((old, new))
                o, n = old.split(), new.split()
                if len(o) >= 2 and len(n) >= 2:
                    out.append((f"{o[-1]}, {' '.join(o[:-1])}", f"{n[-1]}, {' '.join(n[:-1])}"))
            else:
                out.extend(zip(forms(kind, old), forms(kind, new)))
        # A name spelled out letter by letter ("If asked to spell it, say: S O L B E R G."), as the
        # locked tasks spell them: the new name spelled the same way.
        out.extend((" ".join(old.upper()), " ".join(new.upper())) for old, new in self.words.items()
                   if len(old) >= 3 and old.isalpha() and new)
        return out


class Draw:
    """Fresh values for one try of one task: deterministic in (pack, seed, index, try)."""

    def __init__(self, rng: random.Random, spec: Spec, seed: Seed, blocked: Blocked, today: dt.date):
        self.rng, self.spec, self.seed, self.blocked, self.today = rng, spec, seed, blocked, today
        self.drawn = Drawn()
        self.taken: set[str] = set()
        self.owner: str | None = None  # the new name of the person whose row is being drawn (their email)
        # A pool name any locked task or the seed holds is never drawn ("Castellanos" alone is a person).
        self.first_names = [w for w in spec.first_names if not blocked.holds("person", w)]
        self.last_names = [w for w in spec.last_names if not blocked.holds("person", w)]

    def value(self, kind: str, old: Any) -> Any:
        if not isinstance(old, str) or not old.strip():
            return old
        have = self.drawn.new(kind, old)
        if have is not None:
            return have
        if kind == "phone":  # one number, however written: the digits decide
            for (k, o), n in self.drawn.values.items():
                if k == "phone" and phone_digits(o) == phone_digits(old):
                    new = _respell_phone(old, phone_digits(n))
                    self.drawn.values[(kind, old)] = new
                    return new
        new = self._fresh(kind, old)
        self.drawn.values[(kind, old)] = new
        return new

    def _fresh(self, kind: str, old: str) -> str:
        for _ in range(200):
            new = {"person": self._person, "phone": self._phone, "email": self._email, "date": self._date,
                   "identifier": self._identifier, "digits": self._identifier, "party": self._organization,
                   "organization": self._organization}[kind](old)
            if new != old and new not in self.taken and not self.blocked.holds(kind, new):
                self.taken.add(new)
                return new
        raise GenerateError(f"no fresh {kind} for {old!r} after 200 draws")

    def _name_word(self, old: str, pool: list[str]) -> str:
        if old not in self.drawn.words:
            free = [w for w in pool if w not in self.drawn.words.values()]
            self.drawn.words[old] = self.rng.choice(free)
        return self.drawn.words[old]

    def _person(self, old: str) -> str:
        parts = old.split()
        if len(parts) == 1:
            return self._name_word(parts[0], self.last_names)
        first = [self._name_word(p, self.first_names) for p in parts[:-1]]
        return " ".join([*first, self._name_word(parts[-1], self.last_names)])

    def _phone(self, old: str) -> str:
        digits = phone_digits(old)[-10:]
        # 555-0100 to 555-0199: the numbers set aside for fiction; the area code stays the caller's.
        new = f"{digits[:3]}5550{self.rng.randrange(100, 200)}" if len(digits) == 10 else \
            "".join(str(self.rng.randrange(10)) for _ in digits)
        return _respell_phone(old, new)

    def _email(self, old: str) -> str:
        person = self.owner or next((n for (k, _), n in self.drawn.values.items() if k == "person"), None)
        local = _ascii(person).lower().replace(" ", ".").replace("'", "") if person else \
            f"caller{self.rng.randrange(1000, 10000)}"
        local = re.sub(r"[^a-z0-9.]", "", local) + (str(self.rng.randrange(10, 100)) if self.rng.random() < 0.5 else "")
        return f"{local}@example.com"

    def _date(self, old: str) -> str:
        day = dt.date.fromisoformat(old[:10])
        if self.seed.holds("date", old) or day.year < self.today.year - 10:
            # A date of birth: the same year (age rules stay as the skeleton meant), another day.
            new = dt.date(day.year, 1, 1) + dt.timedelta(days=self.rng.randrange(365))
        else:  # an event the caller reports: days away, so the rules that count from it still apply
            new = day + dt.timedelta(days=self.rng.choice([d for d in range(-12, 13) if d]))
        return new.isoformat() + old[10:]

    def _identifier(self, old: str) -> str:
        # The same shape: letters, separators and length kept, every digit drawn again.
        return "".join(str(self.rng.randrange(10)) if c.isdigit() else c for c in old)

    def _organization(self, old: str) -> str:
        # A business keeps what it is ("... Family Clinic"), under a name of its own; a person stays a person.
        words = old.split()
        trade = {w.lower() for w in self.spec.organization_words}
        if not any(w.lower().strip(",.") in trade or w.lower().strip(",.") in CORPORATE_SUFFIXES for w in words[1:]) \
                or not self.spec.organizations:
            return self._person(old)
        if len(words[0]) >= 5:  # "Voltra's battery": the name alone, said as the skeleton said it
            self.drawn.words.setdefault(words[0], "")
        new = " ".join([self.rng.choice(self.spec.organizations), *words[1:]])
        if words[0] in self.drawn.words:
            self.drawn.words[words[0]] = new.split()[0]
        return new


def _same_slip(old: str, new: str, slipped: str) -> str | None:
    """`slipped` is `old` with its digits moved about: `new` with its digits moved the same way."""
    old_d, new_d = [c for c in old if c.isdigit()], [c for c in new if c.isdigit()]
    slipped_d = [c for c in slipped if c.isdigit()]
    if sorted(old_d) != sorted(slipped_d) or len(old_d) != len(new_d):
        return None
    free = list(range(len(old_d)))
    moved = []
    for c in slipped_d:  # each digit of the slip comes from the first unused place of old that holds it
        i = next(i for i in free if old_d[i] == c)
        free.remove(i)
        moved.append(new_d[i])
    it = iter(moved)
    return "".join(next(it) if c.isdigit() else c for c in slipped)


def _respell_phone(old: str, digits: str) -> str:
    """`digits` written the way `old` was written (dashes, brackets, bare digits)."""
    it = iter(digits[-10:] if len(phone_digits(old)) >= 10 else digits)
    head = ""
    if len(phone_digits(old)) > 10:  # a +1 stays
        head, old = old[: len(old) - len(old.lstrip("+1 "))], old.lstrip("+1 ")
    return head + "".join(next(it, "0") if c.isdigit() else c for c in old)


@dataclass
class Blocked:
    """Every person, phone, date of birth and id of the locked suite and the seed: never drawn."""

    text: str
    digits: set[str]
    words: set[str]

    @classmethod
    def of(cls, locked: list[dict[str, Any]], seed: Seed) -> Blocked:
        text = "\n".join([seed.text, *(json.dumps(d, ensure_ascii=False) for d in locked)])
        return cls(text.lower(), set(re.findall(r"\d{4,}", re.sub(r"[^\d\n ]", "", text))) | seed.digits,
                   {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ'-]+", text)})

    def holds(self, kind: str, value: str) -> bool:
        if kind == "phone":
            return phone_digits(value)[-10:] in self.digits or phone_digits(value)[-7:] in self.digits
        if kind == "person":
            return any(w.lower() in self.words for part in value.split() for w in part.split("-"))
        if kind == "date":
            return value[:10] in self.text
        if kind == "digits":
            return value in self.digits
        return value.lower() in self.text


# ----------------------------------------------------------------------------------------------
# one generated task

def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def _mentions(text: str, kind: str, value: Any) -> bool:
    if not isinstance(value, str) or len(value) < 3:
        return False
    if kind == "phone":
        return any(f in text for f in phone_forms(phone_digits(value))) if len(phone_digits(value)) >= 10 else False
    if kind in ("person", "email", "identifier"):
        return re.search(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-])", text, re.IGNORECASE) is not None
    return False


def touched_records(skeleton: dict[str, Any], spec: Spec, seed: Seed) -> dict[str, list[dict[str, Any]]]:
    """The people rows the skeleton mentions, and every row tied to them by an id, name or phone."""
    text = "\n".join(_strings({k: v for k, v in skeleton.items() if k not in ("exp_db_state", "metadata")}))
    picked: dict[str, list[dict[str, Any]]] = {}
    follow: set[str] = set()

    def take(table: str, row: dict[str, Any]) -> None:
        if row in picked.setdefault(table, []):
            return
        picked[table].append(row)
        kinds = spec.records.get(table, {})
        for column, value in row.items():
            if isinstance(value, str) and (kinds.get(column) in ("identifier", "person", "phone", "email")
                                           or column in seed.text_keys[table]):
                follow.add(value)

    for table, kinds in spec.records.items():
        for row in seed.rows(table):
            if any(_mentions(text, kind, row.get(column)) for column, kind in kinds.items()
                   if kind in ("person", "phone", "email", "identifier")):
                take(table, row)
    done: set[str] = set()
    while follow - done:
        value = sorted(follow - done)[0]
        done.add(value)
        for table in seed.tables:
            for row in seed.rows(table):
                if value in (v for v in row.values() if isinstance(v, str)):
                    take(table, row)
    return {t: picked[t] for t in seed.tables if picked.get(t)}


def _caller_facts(skeleton: dict[str, Any], pack: Pack) -> list[tuple[str, str]]:
    """(kind, value) of each value of a redrawn kind the skeleton's caller brings: the key's
    constrained values (main key, routes and trap edits), the customer's name and traits."""
    out = [("person", skeleton["customer_name"])]
    for trait in skeleton.get("traits", []):
        kind = TRAIT_KINDS.get(trait["trait_name"])
        if kind and isinstance(trait["value"], str):
            out.append((kind, trait["value"]))
    calls = list(skeleton["exp_tool_calls"])
    for route in skeleton.get("routes", []):
        calls.extend(route["exp_tool_calls"])
    for trap in skeleton.get("traps", []):
        for change in (trap.get("edit") or {}).get("calls", []):
            if "call" in change:
                calls.append(change["call"])
    for call in calls:
        for option in [call, *call.get("either", [])]:
            spec = pack.tools.get(option["name"])
            for param, value in (option.get("parameters") or {}).items():
                kind = spec.kinds.get(param) if spec else None
                if kind in REDRAWN and param not in spec.free_text and isinstance(value, str):
                    out.append((kind, value))
    return out


def _replacer(pairs: list[tuple[str, str]], words: dict[str, str]) -> Callable[[str], str]:
    """One pass over a string: every old spelling becomes the new one (longest first, never twice)."""
    table = {}
    for old, new in sorted(pairs, key=lambda p: -len(p[0])):
        table.setdefault(old.lower(), new)
    # A first or last name alone ("Ms. Kowalski", "this is Ellen"), unless it starts another
    # person's full name the task also mentions (a staff member who shares a first name).
    for old, new in words.items():
        table.setdefault(old.lower(), new)
    if not table:
        return lambda s: s
    # Not after an "@" (a domain), but before one: a name in an address's own part ("lucia.villanueva@")
    # is the person's name too.
    pattern = re.compile("|".join(rf"(?<![\w@]){re.escape(k)}(?!\w)" for k in sorted(table, key=len, reverse=True)),
                         re.IGNORECASE)

    def one(m: re.Match) -> str:
        found = m.group(0)
        new = table[found.lower()]
        if found.lower() in {w.lower() for w in words} and re.match(r"\s+[A-Z][a-z]", m.string[m.end():]) \
                and found.lower() not in {o.lower().split()[0] for o, _ in pairs if " " in o and "," not in o}:
            return found  # "Daniel Reed" (a staff member), not the caller Daniel
        return new

    return lambda s: pattern.sub(one, s)


def _rewrite(node: Any, fix: Callable[[str], str]) -> Any:
    if isinstance(node, str):
        return fix(node)
    if isinstance(node, dict):
        return {k: _rewrite(v, fix) for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite(v, fix) for v in node]
    return node


def _draw_values(draw: Draw, records: dict[str, list[dict[str, Any]]], skeleton: dict[str, Any], pack: Pack,
                 spec: Spec, seed_db: Seed) -> None:
    """New values for the records' people (names first: they decide the emails), then for what the
    caller brings that no seed row holds."""
    def kinds_of(table: str, row: dict[str, Any]) -> Iterable[tuple[str, Any]]:
        declared = spec.records.get(table, {})
        for column, value in row.items():
            kind = declared.get(column) or ("identifier" if column in seed_db.text_keys[table] else None)
            if kind:
                yield kind, value

    for table, rows in records.items():
        for row in rows:
            for kind, value in kinds_of(table, row):
                if kind == "person":
                    draw.value(kind, value)
    for table, rows in records.items():
        for row in rows:
            draw.owner = next((draw.value(k, v) for k, v in kinds_of(table, row) if k == "person" and v), None)
            for kind, value in kinds_of(table, row):
                draw.value(kind, value)
    draw.owner = None
    for kind, value in _caller_facts(skeleton, pack):
        if kind == "date" and value[:10] >= pack.now.date().isoformat():
            continue  # a day the caller asks the business for (a delivery, a visit): the calendar's, kept
        if draw.drawn.new(kind, value) is None and not seed_db.holds(kind, value):
            draw.value(kind, value)  # a seed value the task names but no record of its people holds: the business's
    # A phone number or an address the script gives that neither the seed nor the pack's prompts hold
    # (a work line not to use, an assistant's number): the locked task's person's, so drawn afresh too.
    business = "\n".join([seed_db.text, *(a.prompt for a in pack.agents.values())])
    business_digits, business_lower = re.sub(r"\D", "", business), business.lower()
    said = "\n".join(_strings({k: v for k, v in skeleton.items() if k not in ("exp_db_state", "metadata")}))
    for found in PHONE_IN_TEXT.findall(said):
        if draw.drawn.new("phone", found) is None and phone_digits(found)[-10:] not in business_digits:
            draw.value("phone", found)
    for found in EMAIL_IN_TEXT.findall(said):
        if draw.drawn.new("email", found) is None and found.lower() not in business_lower:
            draw.value("email", found)
    # An id written like a drawn one but not it (the caller misreads "HR-25-0519" as "HR-25-0591"): the
    # same slip made on the new id, so the script still misreads the caller's own number.
    for (kind, old), new in list(draw.drawn.values.items()):
        if kind not in ("identifier", "digits") or not re.search(r"\d.*\d", old):
            continue
        shape = re.compile(r"(?<![\w-])" + re.sub(r"\d", r"\\d", re.escape(old)) + r"(?![\w-])")
        for found in set(shape.findall(said)):
            if found != old and draw.drawn.new(kind, found) is None and found not in business:
                draw.drawn.values[(kind, found)] = _same_slip(old, new, found) or draw._fresh(kind, found)


@dataclass
class Candidate:
    index: int
    attempt: int
    skeleton: Path
    data: dict[str, Any] | None  # None: the skeleton cannot be redrawn
    why: str = ""


def draw_task(index: int, attempt: int, skeleton_path: Path, skeleton: dict[str, Any], pack: Pack, spec: Spec,
              seed_db: Seed, blocked: Blocked, seed: int, player: KeyPlayer) -> Candidate:
    rng = random.Random(f"callm-generate/{pack.name}/{seed}/{index}/{attempt}")
    draw = Draw(rng, spec, seed_db, blocked, pack.now.date())
    records = touched_records(skeleton, spec, seed_db)
    copies: dict[str, list[dict[str, Any]]] = {}
    try:
        _draw_values(draw, records, skeleton, pack, spec, seed_db)
    except (GenerateError, ValueError) as e:
        return Candidate(index, attempt, skeleton_path, None, f"cannot redraw: {e}")
    exact = {old: new for (kind, old), new in draw.drawn.values.items()}
    for table, rows in records.items():
        for row in rows:
            copy = {c: exact.get(v, v) if isinstance(v, str) else v for c, v in row.items()
                    if c != seed_db.rowid[table]}
            copies.setdefault(table, []).append(copy)
    fix = _replacer(draw.drawn.pairs(), draw.drawn.words)
    body = {k: v for k, v in skeleton.items() if k not in ("exp_db_state", "records", "generated")}
    out = _rewrite(body, fix)
    for route in out.get("routes", []):
        route.pop("exp_db_state", None)
    # Whatever the skeleton said of its people that no spelling above reached: this skeleton cannot be
    # generated from faithfully (its script would name a locked person).
    said = "\n".join(_strings(out)).lower()
    left = sorted({old for old, _ in draw.drawn.pairs() if len(old) >= 4 and
                   re.search(rf"(?<![\w@]){re.escape(old.lower())}(?![\w@])", said)})
    if left:
        return Candidate(index, attempt, skeleton_path, None, f"still says {', '.join(left[:3])}")
    # What the agent reads off a tool's result (a hold token, an offered slot) is what the new records
    # make the tools return: each key is played through the tools with those values taken as it goes.
    keys = [(skeleton["exp_tool_calls"], out["exp_tool_calls"])]
    keys += [(a["exp_tool_calls"], b["exp_tool_calls"]) for a, b in zip(skeleton.get("routes", []), out.get("routes", []))]
    try:
        for old_calls, new_calls in keys:
            old_statuses, learned = player.skeleton(old_calls)

            def derive(i: int, params: dict[str, Any], results: list[Any], learned=learned) -> dict[str, Any]:
                return {p: _at(results[learned[(i, p)][0]], learned[(i, p)][1]) if (i, p) in learned else v
                        for p, v in params.items()}

            player.results(new_calls, copies or None, derive)
            if player.statuses != old_statuses:
                changed = next(f"{a} where the skeleton's got {b}" for a, b in zip(player.statuses, old_statuses) if a != b)
                return Candidate(index, attempt, skeleton_path, None, f"changes a result: {changed}")
        for old_trap, new_trap in zip(skeleton.get("traps", []), out.get("traps", [])):
            _relearn_trap(old_trap, new_trap, skeleton["exp_tool_calls"], out["exp_tool_calls"], copies, pack, player)
    except (KeyError, IndexError, TypeError) as e:
        return Candidate(index, attempt, skeleton_path, None, f"changes a result: a tool's result lacks {e!r}")
    skeleton_id = skeleton["task_name"].split(":", 1)[0].strip()
    title = out["task_name"].split(":", 1)[1].strip()
    task_id = f"{PREFIX}-{seed}-{index:05d}-{skeleton_id}"
    meta = dict(out["metadata"])
    meta["industry"] = pack.name
    meta.pop("source", None)
    generated = {"pack": pack.name, "seed": seed, "skeleton": skeleton_id}
    data = {"task_name": f"{task_id}: {title}", **{k: v for k, v in out.items() if k != "task_name"},
            "metadata": meta, "generated": generated}
    if copies:
        data["records"] = copies
    return Candidate(index, attempt, skeleton_path, data)


# ----------------------------------------------------------------------------------------------
# values the agent learns from a tool: recomputed by playing the new key through the pack's tools

def _leaves(node: Any, path: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    else:
        yield path, node


def _at(node: Any, path: tuple) -> Any:
    for step in path:
        node = node[step]
    return node


class KeyPlayer:
    """Plays an answer key's calls straight through the pack's tools (as the tool server runs them), in
    a call database of its own: each call's result, for the values a later call takes from it."""

    def __init__(self, pack: Pack):
        import asyncio

        from pytest_callm.toolserver.in_process import InProcessTools

        self.pack = pack
        self.loop = asyncio.new_event_loop()
        self.tools = InProcessTools({pack.name: pack})
        self.count = 0
        self._skeletons: dict[str, tuple[list[str | None], dict[tuple[int, str], tuple[int, tuple]]]] = {}

    def results(self, calls: list[dict[str, Any]], records: dict[str, list[dict[str, Any]]] | None,
                derive: Callable[[int, dict[str, Any], list[Any]], dict[str, Any]] | None = None) -> list[Any]:
        """Each call's result data (None for a handoff or a session tool); `derive(i, params, results so
        far)` gives the parameters call i is played with."""
        self.count += 1
        call_id = f"gen{self.count}"
        agent = self.pack.entry_agent
        out: list[Any] = []
        self.statuses: list[str | None] = []  # each industry call's status, in order

        async def play() -> None:
            nonlocal agent
            await self.tools.start_call(self.pack.name, call_id, records)
            for i, call in enumerate(calls):
                spec = self.pack.tools.get(call["name"])
                params = dict(call.get("parameters") or {})
                if derive is not None:
                    params = derive(i, params, out)
                    if params:
                        call["parameters"] = params
                if spec is None or spec.kind != "industry":
                    if spec is not None and spec.kind == "handoff":
                        agent = spec.handoff_target
                    out.append(None)
                    continue
                desk = agent if call["name"] in self.pack.agents[agent].tools else \
                    (self.pack.owner_agents(call["name"]) or [agent])[0]
                result, _ = await self.tools.call_audited(self.pack.name, call_id, call["name"], params, agent=desk)
                out.append(result.get("data") if result.get("ok") else None)
                self.statuses.append("ok" if result.get("ok") else result.get("error_code"))
            await self.tools.remove_call(self.pack.name, call_id)

        self.loop.run_until_complete(play())
        return out

    def skeleton(self, calls: list[dict[str, Any]]) -> tuple[list[str | None], dict[tuple[int, str], tuple[int, tuple]]]:
        """A skeleton key's statuses and what it learns from its tools (played once, then remembered)."""
        at = json.dumps(calls, sort_keys=True)
        if at not in self._skeletons:
            results = self.results(json.loads(at), None)
            self._skeletons[at] = (self.statuses, learned_from_tools(calls, results, self.pack))
        return self._skeletons[at]

    def close(self) -> None:
        self.loop.run_until_complete(self.tools.aclose())
        self.loop.close()


def learned_from_tools(calls: list[dict[str, Any]], results: list[Any], pack: Pack) -> dict[tuple[int, str], tuple[int, tuple]]:
    """(call, parameter) -> (earlier call, path in its result) for each identifier of the key that an
    earlier call returned (a hold token, an appointment the lookup found): the agent's to read off, so
    a redrawn task takes it from its own replay, never from the skeleton."""
    found = {}
    for i, call in enumerate(calls):
        spec = pack.tools.get(call["name"])
        for param, value in (call.get("parameters") or {}).items():
            if spec is None or spec.kinds.get(param) != "identifier" or not isinstance(value, str):
                continue
            for j in range(i - 1, -1, -1):
                hit = next((path for path, leaf in _leaves(results[j]) if leaf == value and path), None)
                if hit is not None:
                    found[(i, param)] = (j, hit)
                    break
    return found


def _edited(calls: list[dict[str, Any]], changes: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int | None]]:
    """A trap's edit made to a key (as `replay.apply_edit` makes it), each call with the change that
    made it (None: the key's own, untouched)."""
    current: list[tuple[dict[str, Any], int | None] | None] = [(json.loads(json.dumps(c)), None) for c in calls]
    current.append(None)
    before: list[list[tuple[dict[str, Any], int | None]]] = [[] for _ in current]
    for n, change in enumerate(changes):
        if "drop" in change:
            current[change["drop"]] = None
        elif "set" in change:
            old = current[change["set"]][0]
            params = {k: v for k, v in {**(old.get("parameters") or {}), **change["parameters"]}.items() if v is not None}
            current[change["set"]] = ({"name": old["name"], "parameters": params}, n)
        elif "replace" in change:
            current[change["replace"]] = (json.loads(json.dumps(change["call"])), n)
        else:
            before[change["insert"]].append((json.loads(json.dumps(change["call"])), n))
    return [c for extra, one in zip(before, current) for c in [*extra, *([one] if one else [])]]


def _relearn_trap(old_trap: dict[str, Any], new_trap: dict[str, Any], old_key: list[dict[str, Any]],
                  new_key: list[dict[str, Any]], records: dict[str, list[dict[str, Any]]], pack: Pack,
                  player: KeyPlayer) -> None:
    """A trap's wrong move names what the tools would return to it (the token of the quote it should
    not have made): played on the new records, so that the wrong move is still the one it was."""
    old_changes = (old_trap.get("edit") or {}).get("calls", [])
    new_changes = (new_trap.get("edit") or {}).get("calls", [])
    if not any("set" in c or "call" in c for c in old_changes):
        return
    old_seq = _edited(old_key, old_changes)
    learned = learned_from_tools([c for c, _ in old_seq], player.results([c for c, _ in old_seq], None), pack)
    learned = {k: v for k, v in learned.items() if old_seq[k[0]][1] is not None}  # only what the edit wrote
    if not learned:
        return
    new_seq = _edited(new_key, new_changes)

    def derive(i: int, params: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        return {p: _at(results[learned[(i, p)][0]], learned[(i, p)][1]) if (i, p) in learned else v
                for p, v in params.items()}

    player.results([c for c, _ in new_seq], records or None, derive)
    for (i, param) in learned:
        call, n = new_seq[i]
        change = new_changes[n]
        target = change["parameters"] if "set" in change else change["call"].setdefault("parameters", {})
        if param in target:
            target[param] = call["parameters"][param]


# ----------------------------------------------------------------------------------------------
# the whole set

@dataclass
class Generated:
    written: list[Path]
    dropped_skeletons: dict[str, str]  # skeleton id -> why none of its draws was kept
    redrawn: int  # draws that were rejected and drawn again
    seconds: float
    rejected: dict[str, int] = field(default_factory=dict)  # why -> how many draws
    phases: dict[str, float] = field(default_factory=dict)  # draw, lock and oracle, prove, split-check: seconds


def _task_dir(out: Path, data: dict[str, Any]) -> Path:
    return out / data["task_name"].split(":", 1)[0]


def _write(path: Path, data: dict[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "task.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _lock_and_play(files: list[Path], packs: PackRegistry) -> dict[Path, str | None]:
    """Lock each task (its expected state, and each route's, is what replaying that key leaves), and
    score that replay as the oracle's call: None when it passes, else why not."""
    from pytest_callm.call.oracle import AnswerKeyError
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.scoring.verify import verify

    out: dict[Path, str | None] = {}
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        for f in files:
            try:
                data, task, pack = load_task(f, packs, unlocked=True)
                played = runtime.play(task, pack, attempt=1)
            except (AnswerKeyError, TaskError) as e:
                out[f] = f"the oracle cannot play the key: {e}"
                continue
            data["exp_db_state"] = expected_state(played, pack)
            for raw, key in zip(data.get("routes", []), task.keys()[1:]):
                raw["exp_db_state"] = expected_state(runtime.play(key, pack, attempt=1), pack)
            f.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            verdict = verify(load_task(f, packs)[1], pack, played)
            out[f] = None if verdict.passed else "the oracle fails: " + verdict.explain().splitlines()[0]
    finally:
        runtime.close()
    return out


# A check of staged task files against the evaluation set: file -> why it leaks (`callm split-check`,
# which lives downstream of authoring: the command line passes it in).
Leaks = Callable[[list[Path]], dict[Path, str]]


def generate(pack_name: str, n: int, seed: int, out: Path, industries: list[Path], *, leaks: Leaks,
             locked: Path = Path("tasks"), workers: int | None = None, log=print) -> Generated:
    """Write `n` generated tasks of `pack_name` under `out/<pack>/seed-<seed>/` (replacing what an
    earlier run of the same pack and seed left there): see the module's doc."""
    from pytest_callm.authoring.prove import prove_run

    started = time.perf_counter()
    packs = PackRegistry(industries)
    pack = packs.get(pack_name)
    spec = Spec.load(pack)
    seed_db = Seed.load(pack)
    locked_files = [f for f in find_task_files([locked / pack_name])]
    if not locked_files:
        raise GenerateError(f"no locked tasks of {pack_name!r} under {locked}: they are the skeletons")
    skeletons = {f: read_task_json(f) for f in locked_files}
    # Every locked task of every pack: a fresh value is never one of theirs.
    every_locked = [read_task_json(f) for f in find_task_files([locked])]
    blocked = Blocked.of(every_locked, seed_db)
    by_category: dict[str, list[Path]] = {}
    for f, d in skeletons.items():
        by_category.setdefault(d["metadata"].get("category_slug") or d["task_name"].split("-")[0], []).append(f)
    categories = sorted(by_category)

    root = out / pack_name / f"seed-{seed}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    given_up: dict[str, str] = {}  # skeleton id -> why its draws were rejected
    tally: dict[Path, list[int]] = {}  # skeleton -> [kept, rejected]
    rejected: dict[str, int] = {}
    redrawn = 0
    kept: dict[int, Path] = {}
    pending = {i: 0 for i in range(n)}  # index -> its try

    def pick(index: int, attempt: int) -> Path:
        # The category by the index (an even spread over the six), the skeleton by the draw, among
        # the category's skeletons not given up.
        category = categories[index % len(categories)]
        choices = [f for f in sorted(by_category[category]) if skeletons[f]["task_name"].split(":")[0] not in given_up]
        return random.Random(f"callm-generate/skeleton/{pack_name}/{seed}/{index}/{attempt}").choice(
            choices or sorted(by_category[category]))

    def reject(skeleton: Path, why: str) -> None:
        rejected[why.split(":")[0]] = rejected.get(why.split(":")[0], 0) + 1
        counts = tally.setdefault(skeleton, [0, 0])
        counts[1] += 1
        if counts[0] == 0 and counts[1] >= 2:  # never kept, twice rejected: leave it out from now on
            given_up[skeletons[skeleton]["task_name"].split(":")[0]] = why

    player = KeyPlayer(pack)
    phases = {"draw": 0.0, "lock and oracle": 0.0, "prove": 0.0, "split-check": 0.0}
    clock = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[phase] += now - clock
        clock = now

    while pending:
        staging = Path(tempfile.mkdtemp(prefix="callm-generate-"))
        try:
            # Drawing and the cheap judge (a key that leaks into the test is not worth proving) try
            # again at once; locking, the oracle and prove judge the round's draws together.
            drawn: dict[int, tuple[Path, Path]] = {}  # index -> (skeleton, staged file)
            for index in sorted(pending):
                while pending[index] < TRIES and index not in drawn:
                    path = pick(index, pending[index])
                    cand = draw_task(index, pending[index], path, skeletons[path], pack, spec, seed_db, blocked,
                                     seed, player)
                    why = cand.why
                    if cand.data is not None:
                        target = _task_dir(staging, cand.data)
                        _write(target, cand.data)
                        lap("draw")
                        leak = leaks([target / "task.json"])
                        lap("split-check")
                        if not leak:
                            drawn[index] = (path, target / "task.json")
                            continue
                        why = f"split-check: {next(iter(leak.values()))}"
                        shutil.rmtree(target)
                    reject(path, why)
                    pending[index] += 1
                    redrawn += 1
            lap("draw")
            staged = [f for _, f in drawn.values()]
            bad = {f: why for f, why in (_lock_and_play(staged, packs) if staged else {}).items() if why}
            fine = [f for f in staged if f not in bad]
            lap("lock and oracle")
            if fine:
                proof = prove_run(fine, industries, workers=workers)
                for p in proof.tasks:
                    if p.problems:
                        bad[Path(p.task.path)] = "prove: " + p.problems[0].splitlines()[0]
                for pack_problem in proof.pack_problems.get(pack_name, []):
                    log(f"pack problem seen while proving: {pack_problem}")
                lap("prove")
            for index, (skeleton, f) in sorted(drawn.items()):
                if f in bad:
                    reject(skeleton, bad[f])
                    pending[index] += 1
                    redrawn += 1
                    continue
                tally.setdefault(skeleton, [0, 0])[0] += 1
                final = _task_dir(root, read_task_json(f))
                final.mkdir(parents=True)
                shutil.copyfile(f, final / "task.json")
                kept[index] = final / "task.json"
                del pending[index]
            for index in [i for i, tries in pending.items() if tries >= TRIES]:
                log(f"task {index}: no keepable draw in {TRIES} tries")
                del pending[index]
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    player.close()
    return Generated([kept[i] for i in sorted(kept)], given_up, redrawn, time.perf_counter() - started, rejected,
                     {k: round(v, 1) for k, v in phases.items()})
