"""Each rule class measured on its own labelled sentences (DESIGN §7b), as a recognizer is.

A class's patterns are done when, on the sentences its pack labels, they find the breaking ones
(recall) and nothing else (precision), and no keeping sentence is found at all: a keeping sentence
that fails is a right agent failed. `callm prove` prints these figures; the same sentences are the
judge's calibration set (`callm judge-check`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_callm.scoring.words import normalized
from pytest_callm.task.pack import Pack
from pytest_callm.task.words_spec import RuleClass

MIN_PRECISION = 0.95
MIN_RECALL = 0.9


@dataclass(frozen=True)
class ClassFigures:
    pack: str
    rule: str
    breaks: int
    keeps: int
    missed: tuple[str, ...]  # breaking sentences not found
    wrongly_found: tuple[str, ...]  # keeping sentences found

    @property
    def precision(self) -> float:
        found = self.breaks - len(self.missed) + len(self.wrongly_found)
        return (self.breaks - len(self.missed)) / found if found else 1.0

    @property
    def recall(self) -> float:
        return (self.breaks - len(self.missed)) / self.breaks if self.breaks else 1.0

    def problems(self) -> list[str]:
        out = [f"{self.pack} {self.rule}: a keeping sentence is found as breaking the rule: {s!r}"
               for s in self.wrongly_found]
        if self.breaks == 0 or self.keeps == 0:
            out.append(f"{self.pack} {self.rule}: the class needs labelled sentences of both sides "
                       f"({self.breaks} breaking, {self.keeps} keeping)")
        if self.recall < MIN_RECALL:
            out.append(f"{self.pack} {self.rule}: recall {self.recall:.2f} under {MIN_RECALL} "
                       f"(missed: {'; '.join(repr(s) for s in self.missed)})")
        if self.precision < MIN_PRECISION:
            out.append(f"{self.pack} {self.rule}: precision {self.precision:.2f} under {MIN_PRECISION}")
        return out

    def line(self) -> str:
        return (f"{self.pack:<17} {self.rule:<34} breaking {self.breaks:>3}  keeping {self.keeps:>3}  "
                f"precision {self.precision:.2f}  recall {self.recall:.2f}")


def measure(pack: Pack, rc: RuleClass) -> ClassFigures:
    missed = tuple(s for s in rc.breaks if not rc.hit(normalized(s)))
    wrong = tuple(s for s in rc.keeps if rc.hit(normalized(s)))
    return ClassFigures(pack.name, rc.rule, len(rc.breaks), len(rc.keeps), missed, wrong)


def measure_pack(pack: Pack) -> list[ClassFigures]:
    return [measure(pack, rc) for rc in pack.words.classes]
