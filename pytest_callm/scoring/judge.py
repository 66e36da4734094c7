"""An optional judge model for the words no pattern reads (DESIGN §7b).

The words gate is deterministic where the call holds the evidence. What is left (an opinion worded
in a way no class foresaw, a reassurance, a rule that stays speech-only) a model can read, as aiewf
and tau2-bench read words. Here a judge is any model config, spoken to through the benchmark's own
client: it gets the pack's speech rules and the agent's words, numbered, and answers in JSON which
words break which rule. Its findings are reported beside the deterministic verdict
(`verdict.words.details["judge"]`) and fail the words gate only with `--callm-judge-gate`.

`callm judge-check MODEL` asks the judge about every labelled sentence of every rule class and prints
its precision, recall and Cohen's kappa per class: a judge is trusted as far as those figures go.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from pytest_callm.call.trajectory import Trajectory
from pytest_callm.model.protocol import Model, ModelRequest
from pytest_callm.scoring.words import agent_words
from pytest_callm.task.pack import Pack

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class JudgeFinding:
    rule: str
    where: str
    said: str

    def line(self) -> str:
        return f"judge: {self.where}: {self.said!r} breaks {self.rule}"


def _rules_text(pack: Pack) -> str:
    return "\n".join(f"- {rule_id}: {statement}" for rule_id, statement in sorted(pack.words.speech_rules.items()))


def _system(pack: Pack) -> str:
    return (f"You audit what a phone agent of {pack.company} said to a caller and wrote into the business's "
            "records. Judge only these house rules:\n" + _rules_text(pack) +
            '\nAnswer with one JSON object and nothing else: {"findings": [{"rule": "<rule id>", "item": <number>, '
            '"said": "<the words that break it>"}]}. List only clear breaks; an empty list when there are none.')


def _parse(text: str) -> dict[str, Any]:
    m = _OBJECT.search(text or "")
    if not m:
        return {}
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class Judge:
    """A model that reads an attempt's words against the pack's speech rules."""

    def __init__(self, model: Model):
        self.model = model
        self.name = getattr(model, "name", "judge")

    async def read(self, pack: Pack, traj: Trajectory) -> list[JudgeFinding]:
        texts = agent_words(pack, traj)
        if not texts or not pack.words.speech_rules:
            return []
        listing = "\n".join(f"[{n}] {t.where}: {t.text}" for n, t in enumerate(texts, 1))
        reply = await self.model.respond(ModelRequest("judge", _system(pack),
                                                      [{"role": "user", "content": listing}], []))
        out = []
        for f in _parse(reply.text).get("findings") or []:
            if not isinstance(f, dict) or f.get("rule") not in pack.words.speech_rules:
                continue
            item = f.get("item")
            where = texts[item - 1].where if isinstance(item, int) and 0 < item <= len(texts) else "the call"
            out.append(JudgeFinding(str(f["rule"]), where, str(f.get("said") or "")[:300]))
        return out

    async def breaks(self, pack: Pack, rule_id: str, sentence: str) -> bool:
        """Whether the judge says one sentence, said by the agent, breaks one rule (calibration)."""
        statement = pack.words.speech_rules.get(rule_id, rule_id)
        system = (f"You audit what a phone agent of {pack.company} said. The house rule: {rule_id}: {statement}\n"
                  'Answer with one JSON object and nothing else: {"breaks": true} or {"breaks": false}.')
        reply = await self.model.respond(ModelRequest("judge", system, [{"role": "user", "content": sentence}], []))
        return _parse(reply.text).get("breaks") is True


def judge_reader(config, api_key: str | None, retry):
    """A function of (pack, trajectory) that asks the judge model, on a client of its own: attempts are
    scored in worker threads, each with no event loop of its own running."""
    import asyncio

    from pytest_callm.model.client import OpenAIChatModel

    async def read(pack: Pack, traj: Trajectory) -> list[JudgeFinding]:
        model = OpenAIChatModel(config, api_key, retry)
        try:
            return await Judge(model).read(pack, traj)
        finally:
            await model.aclose()

    return lambda pack, traj: asyncio.run(read(pack, traj))


def apply(verdict, findings: list[JudgeFinding], gate: bool) -> None:
    """Put a judge's findings beside the words gate's own; with `gate`, they fail it."""
    words = verdict.words
    if words is None:
        return
    words.details["judge"] = [asdict(f) for f in findings]
    if gate and findings:
        words.passed = False
        words.problems.extend(f.line() for f in findings)


# --- calibration -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    pack: str
    rule: str
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of the judge against the labels."""
        n = self.tp + self.fp + self.fn + self.tn
        if not n:
            return None
        observed = (self.tp + self.tn) / n
        expected = ((self.tp + self.fp) * (self.tp + self.fn) + (self.fn + self.tn) * (self.fp + self.tn)) / (n * n)
        return 1.0 if expected == 1 else (observed - expected) / (1 - expected)

    def line(self) -> str:
        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.2f}"
        return (f"{self.pack:<17} {self.rule:<34} labelled {self.tp + self.fp + self.fn + self.tn:>3}  "
                f"precision {f(self.precision)}  recall {f(self.recall)}  kappa {f(self.kappa)}")


async def agreement(judge: Judge, pack: Pack) -> list[Agreement]:
    out = []
    for rc in pack.words.classes:
        counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
        for sentence, label in [*((s, True) for s in rc.breaks), *((s, False) for s in rc.keeps)]:
            said = await judge.breaks(pack, rc.rule, sentence)
            counts[("t" if said == label else "f") + ("p" if said else "n")] += 1
        out.append(Agreement(pack.name, rc.rule, **counts))
    return out


def main(argv: list[str], industries: list) -> int:
    """`callm judge-check MODEL`: the judge's agreement with every pack's labelled sentences."""
    import argparse
    import asyncio
    import os
    from pathlib import Path

    from pytest_callm.model.client import OpenAIChatModel
    from pytest_callm.model.config import ModelConfigError, api_key_for, resolve
    from pytest_callm.task.pack import PackRegistry

    parser = argparse.ArgumentParser(prog="callm judge-check",
                                     description="a judge model's agreement with the rule classes' labelled sentences")
    parser.add_argument("model", help="the judge: a model config (bundled or --model-configs)")
    parser.add_argument("--model-configs", action="append", default=[], type=Path,
                        help="folder holding model configs NAME.toml (repeatable)")
    parser.add_argument("--industry", action="append", default=[], help="only these packs (repeatable)")
    args = parser.parse_args(argv)
    try:
        config = resolve(args.model, list(args.model_configs))
        key = api_key_for(config, dict(os.environ))
    except ModelConfigError as e:
        print(f"callm judge-check: {args.model}: {e}")
        return 2
    except KeyError as e:
        print(f"callm judge-check: {args.model} reads its API key from ${e.args[0]}, which is not set")
        return 2
    packs = PackRegistry(industries)
    names = args.industry or packs.names()

    async def check() -> list[Agreement]:
        model = OpenAIChatModel(config, key)
        try:
            out = []
            for name in names:
                out.extend(await agreement(Judge(model), packs.get(name)))
            return out
        finally:
            await model.aclose()

    rows = asyncio.run(check())
    print(f"judge {config.name}: agreement with each rule class's labelled sentences (breaking and keeping)")
    for row in rows:
        print("  " + row.line())
    if not rows:
        print("  no pack declares a rule class")
    return 0
