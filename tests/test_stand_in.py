"""The installed stand-in models (pytest_callm/standin/): one server playing many tasks at once, each
request's task told from the conversation; `callm serve-stand-in` and `callm demo` run for real (the
model client over HTTP, the phone line, the simulated caller, the tool server, the verifier, the
leaderboard), as separate processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request

import pytest

from conftest import REPO
from pytest_callm.call.oracle import plan_answer_key
from pytest_callm.call.simulated_caller import caller_prompt
from pytest_callm.standin.book import TaskBook, opening_line
from pytest_callm.standin.players import ASK_NAME, CARELESS, STRONG, BriefCaller, KeyAgent, planted

pytestmark = pytest.mark.xdist_group("stand-in")

TASKS = REPO / "tasks"
# Two tasks whose callers open with the same words, and one of another pack.
ALIKE = ("customer_support/C5-H3", "customer_support/C5-H4")
OTHER = "legal/C4-H3"


@pytest.fixture(scope="module")
def book() -> TaskBook:
    return TaskBook.load([TASKS, REPO / "examples" / "tasks"], [REPO / "industries", REPO / "examples" / "industries"])


def agent_request(*heard: str, asked: bool = False) -> dict:
    messages = [{"role": "system", "content": "front desk"}, {"role": "assistant", "content": "Hello, how can I help?"},
                {"role": "user", "content": heard[0]}]
    if asked:
        messages += [{"role": "assistant", "content": ASK_NAME}, *({"role": "user", "content": h} for h in heard[1:])]
    return {"model": STRONG.name, "messages": messages}


def test_each_task_is_told_from_its_callers_words_and_from_its_callers_brief(book):
    unsure, mistaken = 0, []
    for entry in book.entries:
        caller = caller_prompt(entry.task, entry.pack.company)
        assert book.for_caller(caller).name == entry.name
        got = book.for_agent(agent_request(entry.opening)["messages"])
        if got is None:  # another task opens alike: who is calling decides
            unsure += 1
            answer = BriefCaller(book).step({"messages": [{"role": "system", "content": caller},
                                                          {"role": "user", "content": "Hello?"},
                                                          {"role": "assistant", "content": entry.opening},
                                                          {"role": "user", "content": ASK_NAME}]})["text"]
            got = book.for_agent(agent_request(entry.opening, answer, asked=True)["messages"], sure_only=False)
        if got.name != entry.name:  # only a task with the same caller opening with the same words
            assert (got.opening_words, got.task.customer_name) == (entry.opening_words, entry.task.customer_name)
            mistaken.append(entry.name)
    assert 0 < unsure < 10  # the two membership callers at least; most tasks open with words of their own
    assert len(mistaken) <= 1, mistaken  # healthcare C2-H4 (Tomasz Nowak cancelling this afternoon, as in C1-H1)


def test_a_recognizer_error_in_the_opening_still_tells_the_task(book):
    entry = next(e for e in book.entries if e.name == OTHER)
    misheard = entry.opening.lower().replace("safety", "safe tea").rstrip(".")
    assert book.for_agent(agent_request(misheard)["messages"]).name == OTHER


def test_two_tasks_that_open_alike_make_the_agent_ask_who_is_calling(book):
    first, second = (next(e for e in book.entries if e.name == n) for n in ALIKE)
    assert first.opening == second.opening
    step = KeyAgent(book, STRONG).step(agent_request(first.opening))
    assert step["text"] == ASK_NAME and "tool_calls" not in step


def test_the_stand_in_caller_opens_answers_from_its_traits_and_hangs_up_after_goodbye(book):
    entry = next(e for e in book.entries if e.name == OTHER)
    system = {"role": "system", "content": caller_prompt(entry.task, entry.pack.company)}
    caller = BriefCaller(book)

    def says(*turns: str) -> dict:
        messages = [system]
        for i, turn in enumerate(turns):
            messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": turn})
        return caller.step({"messages": messages})

    opening = opening_line(entry.task.raw["intent"])
    assert says("Hello, how can I help?") == {"text": opening}
    assert says("Hello?", opening, "Who would this be against?")["text"] == "It's Harborline Industries."
    assert "Clara Whitman" in says("Hello?", opening, "May I have your full name?")["text"]
    bye = says("Hello?", opening, "You're all set. Thank you for calling, goodbye.")
    assert bye["tool_calls"] == [{"name": "hang_up", "arguments": {}}]


def test_planted_mistakes_change_the_key_as_named(book):
    entry = next(e for e in book.entries if e.name == OTHER)
    plan = plan_answer_key(entry.task, entry.pack)
    skipped = planted(plan, entry, "skips_a_call")
    assert len(skipped) == len(plan) - 1 and skipped[-1].name == plan[-1].name == "end_call"
    early = planted(plan, entry, "ends_early")
    assert len(early) < len(skipped) and early[-1].name == "end_call"
    typed = planted(plan, entry, "mistypes_a_value")
    changed = [(a.arguments, b.arguments) for a, b in zip(plan, typed) if a.arguments != b.arguments]
    assert len(typed) == len(plan) and len(changed) == 1
    # The strong stand-in plants none: it plays the oracle's plan.
    agent = KeyAgent(book, STRONG)
    assert list(agent._plan(OTHER, entry.opening)) == plan
    assert STRONG.mistake_share == 0 and CARELESS.mistake_share > 0.5


def callm(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pytest_callm.cli", *args], text=True, **kwargs)


def test_serve_stand_in_plays_tasks_of_two_packs_at_once_through_the_real_harness(tmp_path):
    tasks = [*ALIKE, OTHER]
    server = callm("serve-stand-in", "--port", "0", *(a for t in tasks for a in ("--tasks", str(TASKS / t))),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        line = server.stdout.readline()  # the server says where it listens once it is ready to
        url = re.search(r"(http://[\d.:]+/v1)", line).group(1)
        with urllib.request.urlopen(url + "/models", timeout=30) as response:
            served = sorted(m["id"] for m in json.load(response)["data"])
        assert served == ["stand-in-caller", "stand-in-careless", "stand-in-middling", "stand-in-strong"]
        (tmp_path / "pytest.ini").write_text("[pytest]\n")
        selection = " or ".join(f"({t.split('/')[0]} and {t.split('/')[1]})" for t in tasks)
        run = subprocess.run([sys.executable, "-m", "pytest", "--callm-suite", "-k", selection, "-q", "-p",
                              "no:cacheprovider", "--callm-model=stand-in-strong", f"--callm-base-url={url}",
                              f"--callm-caller-base-url={url}", "--callm-attempts=1", f"--callm-out={tmp_path / 'run'}"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "3 passed" in run.stdout
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "stand-in-caller" in json.dumps(manifest)
    for name in ALIKE:  # the agent asked who was calling, then played that caller's key
        saved = json.loads((tmp_path / "run" / "trajectories" / name / "attempt-1.json").read_text())
        assert ASK_NAME in [t["said"] for t in saved["trajectory"]["transcript"] if t["role"] == "agent"]


def test_serve_stand_in_refuses_tasks_that_do_not_load_in_one_line(tmp_path):
    server = callm("serve-stand-in", "--port", "0", "--tasks", str(tmp_path / "nowhere"),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    out, err = server.communicate(timeout=60)
    assert server.returncode == 2 and out == ""
    assert "nowhere: no such file or folder" in err and "Traceback" not in err


def test_the_keyless_demo_reaches_a_ranked_leaderboard(tmp_path):
    out = tmp_path / "demo"
    demo = callm("demo", "--tasks", "3", "--attempts", "2", "--out", str(out), stdout=subprocess.PIPE,
                 stderr=subprocess.STDOUT, cwd=tmp_path, env={**os.environ, "OPENAI_API_KEY": ""})
    said, _ = demo.communicate(timeout=300)
    assert demo.returncode == 0, said[-3000:]
    board = out / "board"
    assert (board / "index.html").is_file() and (board / "choose.html").is_file()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in (board / "leaderboard.md").read_text().splitlines()
            if line.startswith("| ") and "stand-in-" in line]
    ranks = {row[1]: row[0] for row in rows}
    assert set(ranks) == {"stand-in-strong", "stand-in-middling", "stand-in-careless"}
    assert ranks["stand-in-strong"] == "1" and rows[0][1] == "stand-in-strong"  # planted: no mistake of its own
    assert rows[0][2].startswith("100.0%") and not rows[2][2].startswith("100.0%")  # pass^k: the others plant some
    for name in ranks:  # each a run like any other: the stand-in caller, HTTP to the stand-in server
        manifest = json.loads((out / "runs" / name / "manifest.json").read_text())
        assert "stand-in-caller" in json.dumps(manifest)
