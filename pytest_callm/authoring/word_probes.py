"""What `callm prove` says and writes on every task (DESIGN §7b): the words gate's adversaries.

The key's moves are kept, so each of these differs from a right agent only in its words:

- rule classes   one breaking sentence of each speech rule's class, said by an agent the rule binds:
                 must fail the words gate.
- exploits       the key plus nonsense in every free text a business reads; the key plus a claim of an
                 act no call did; the key plus another person's record read aloud: each must fail it.
- right answers  the key plus a keeping sentence of each class, a read-back of the caller's own
                 details, and an accurate claim of an act the key did: must pass.
"""

from __future__ import annotations

import zlib

from pytest_callm.authoring.replay import Replay, edited_replay
from pytest_callm.call.oracle import AnswerKeyError, PlannedCall, plan_answer_key
from pytest_callm.normalize import person
from pytest_callm.scoring.disclosure import people_on_record, protected_values
from pytest_callm.scoring.grounding import facts_in
from pytest_callm.scoring.words import caller_script, normalized
from pytest_callm.task.terms import Stems
from pytest_callm.task.pack import END_CALL, Pack
from pytest_callm.task.task_file import Task

WORD_EXPLOITS = {
    "words-nonsense": "the key, with keyboard noise in every free text a business reads: fails the words gate",
    "words-false-claim": "the key, then a claim of an act no call did: fails the words gate",
    "words-disclosure": "the key, then another person's name and number read aloud: fails the words gate",
    "words-named-record": "the key, then another person named beside a word of their records (a membership, a "
                          "visit's type): fails the words gate",
    "words-wrong-figure": "the key, then a figure about a declared thing (a refund, a booking) that its tools never "
                          "gave: fails the words gate",
}
# A figure of each kind that no tool of any pack returns: said about the thing, it is never the thing's.
_WRONG_FIGURE = {"money": "$9,876.54", "percent": "97.5 percent", "date": "December 30, 2031", "time": "11:47 p.m."}
NONSENSE = "asdf qwer zxcv"
WORDS = ("words",)


def _plan(task: Task, pack: Pack) -> list[PlannedCall] | None:
    try:
        return plan_answer_key(task, pack)
    except AnswerKeyError:
        return None


def _last_turn(plan: list[PlannedCall], pack: Pack) -> tuple[int, str]:
    """Where the agent speaks last (before the call that ends it), and which agent that is."""
    at = len(plan) - 1 if plan and (plan[-1].name == END_CALL or pack.tools[plan[-1].name].ends_call) else len(plan)
    agent = plan[at - 1].agent if at else (plan[0].agent if plan else "")
    if at and plan[at - 1].name.startswith("transfer_to_"):
        agent = plan[at - 1].name[len("transfer_to_"):]
    return at, agent


def _agent_of(plan: list[PlannedCall], key_index: int) -> str | None:
    return next((c.agent for c in plan if c.key_index == key_index), None)


def _pick(options: tuple[str, ...], task: Task) -> str:
    return options[zlib.crc32(task.task_id.encode()) % len(options)]


def _quiet(pack: Pack, sentence: str) -> bool:
    """A sentence that states no checkable fact and claims no act: said on any task, it is right."""
    text = normalized(sentence)
    return (not facts_in(sentence, pack.words.terms) and not any(c.pattern.search(text) for c in pack.words.claims)
            and not any(p.search(text) for r in pack.words.results for p in r.contradicted_by))


_QUIET_KEEPS: dict[int, tuple[Pack, list[tuple[str, ...]]]] = {}


def _quiet_keeps(pack: Pack) -> list[tuple[str, ...]]:
    """Per speech class, its keeping sentences that are quiet (`_quiet`): the same on every task of a
    pack, so read once per pack, not once per task."""
    cached = _QUIET_KEEPS.get(id(pack))
    if cached is None or cached[0] is not pack:
        cached = _QUIET_KEEPS[id(pack)] = (pack, [tuple(s for s in rc.keeps if _quiet(pack, s))
                                                  for rc in pack.words.classes])
    return cached[1]


def word_replays(task: Task, pack: Pack, ok_tools: set[str]) -> list[Replay]:
    """The words gate's adversaries, exploits and right answers for one task (`ok_tools`: the tools
    the key's own play called successfully)."""
    plan = _plan(task, pack)
    if plan is None:
        return []
    at, agent = _last_turn(plan, pack)
    spec = pack.words
    out: list[Replay] = []

    def say(kind: str, label: str, line: str, group: str, **kw) -> Replay:
        return edited_replay(task, pack, kind, label, {"calls": []}, group=group, agent_says={at: line}, **kw)

    for rc in spec.classes:
        if "speech" in rc.reads and rc.breaks and (not rc.agents or agent in rc.agents):
            line = _pick(rc.breaks, task)
            out.append(say("rule", f"{rc.rule}: says {line!r}", line, rc.rule, gates=WORDS))

    free = [(i, p) for i, c in enumerate(task.exp_tool_calls) for p in sorted(pack.tools[c.name].free_text)
            if spec.use_of(c.name, p) is not None
            and pack.tools[c.name].parameters.get("properties", {}).get(p, {}).get("type", "string") == "string"]
    for rc in spec.classes:
        written = [(i, p) for i, p in free if (not rc.agents or _agent_of(plan, i) in rc.agents)
                   and rc.reads_free_text(task.exp_tool_calls[i].name, p)]
        if rc.breaks and written:
            i, p = written[0]
            line = _pick(rc.breaks, task)
            out.append(edited_replay(task, pack, "rule", f"{rc.rule}: writes {line!r} in {task.exp_tool_calls[i].name}.{p}",
                                     {"calls": [{"set": i, "parameters": {p: line}}]}, group=rc.rule, gates=WORDS))
    if free:
        edit = {"calls": [{"set": i, "parameters": {p: NONSENSE}} for i, p in free]}
        out.append(edited_replay(task, pack, "exploit", f"{len(free)} free text(s) written as {NONSENSE!r}", edit,
                                 group="words-nonsense", gates=WORDS))
    false = next((c for c in spec.claims if not set(c.tools) & ok_tools), None)
    if false is not None:
        line = f"All done: I've {false.says[0]}."
        out.append(say("exploit", f"says {line!r} (no {'/'.join(false.tools)} in the key)", line,
                       "words-false-claim", gates=WORDS))
    others = {}
    for p in protected_values(pack, task):
        if p.kind in ("number", "id"):
            others.setdefault(p.person, p)
    if others:
        name, value = next(iter(sorted(others.items())))
        line = f"For your information, {name}'s file shows {value.value}."
        out.append(say("exploit", f"reads another person's record aloud ({name})", line, "words-disclosure",
                       gates=WORDS))
    people, own, _ = people_on_record(pack, task)
    script = Stems(" ".join(caller_script(task)))
    told = next(((p, w) for p in sorted(people, key=lambda p: p.name) for w in sorted(p.words)
                 if w not in own.words and not script.has(w) and w not in person(p.name).split()), None)
    if told is not None:
        line = f"I also see {told[0].first}'s {told[1]} on file."
        out.append(say("exploit", f"names another person beside their records ({told[0].name})", line,
                       "words-named-record", gates=WORDS))

    figure = next((f for f in spec.figures if any(k in _WRONG_FIGURE for k in f.kinds)), None)
    if figure is not None:
        about = next((a for a in figure.words if a.isalpha()), None)
        kind = next(k for k in figure.kinds if k in _WRONG_FIGURE)
        if about:
            line = f"As for the {about}, that is {_WRONG_FIGURE[kind]}."
            out.append(say("exploit", f"says {line!r} ({figure.means})", line, "words-wrong-figure", gates=WORDS))

    quiet = _quiet_keeps(pack)
    right = [_pick(quiet[i], task) for i, rc in enumerate(spec.classes)
             if "speech" in rc.reads and quiet[i] and (not rc.agents or agent in rc.agents)]
    done = next((c for c in spec.claims if set(c.tools) & ok_tools), None)
    if done is not None:
        right.append(f"I've {done.says[0]}.")
    if task.customer_name:
        right.append(f"Thank you, {task.customer_name}.")
    if right:
        out.append(say("right", f"the key, saying {' '.join(right)!r}", " ".join(right), "words"))
    return out
