"""The HTML report of a run: built from the run directory, self-contained, readable in a browser.

The page of an oracle run and that of a rescored run with one deliberately wrong call are generated,
checked as HTML, then opened in headless Chromium (Debian's `chromium`, installed here when missing
and possible): the rendered DOM must still show the failing call's differing argument and the
database row it changed, and a screenshot of each page is kept under pytest's temporary folder.
"""

from __future__ import annotations

from html import escape
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.report.report_html import main, render_report, write_html_report
from pytest_callm.saved.rundir import RunDir

pytestmark = pytest.mark.xdist_group("report_html")  # its module fixture plays runs once, on one worker

ORACLE = "--callm-model=oracle"
SECRET_VAR = "CALLM_TEST_SECRET"
SECRET = "sk-planted-4c1d9e7a0b3f4e21-do-not-print"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"]


def pytest_run(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory, tool_server) -> Path:
    out = tmp_path_factory.mktemp("oracle") / "run"
    pytest_run(str(EXAMPLE_TASKS), ORACLE, f"--callm-out={out}", "-n", "2", f"--callm-tool-server={tool_server.url}")
    return out


@pytest.fixture(scope="module")
def failing_run(oracle_run, tmp_path_factory) -> Path:
    """The oracle run with attempt 2 of C2-E2 changed as if the model had booked another slot
    (S-106, not the earliest S-101), rescored into a new folder with today's verifier."""
    base = tmp_path_factory.mktemp("failing")
    played = base / "played"
    for part in ("trajectories", "seeds"):
        shutil.copytree(oracle_run / part, played / part)
    shutil.copy(oracle_run / "manifest.json", played / "manifest.json")
    path = played / "trajectories/vet_clinic/C2-E2/attempt-2.json"
    saved = RunDir(played).read_attempt(path)  # its final state in full, written back so (still readable)
    trajectory = saved["trajectory"]
    call = next(c for c in trajectory["tool_calls"] if c["name"] == "book_appointment")
    call["arguments"]["slot_id"] = "S-106"
    call["raw_arguments"] = json.dumps(call["arguments"])
    row = next(r for r in trajectory["final_state"]["appointments"] if r["slot_id"] == "S-101")
    row["slot_id"], row["starts_at"] = "S-106", "2026-05-16T10:00"
    path.write_text(json.dumps(saved))
    out = base / "rescored"
    proc = pytest_run(str(EXAMPLE_TASKS), f"--callm-rescore={played}", f"--callm-out={out}")
    assert "1 failed, 39 passed" in proc.stdout
    return out


def task_page(run: Path, task: str, page: str = "report") -> str:
    return (run / page / "vet_clinic" / f"{task}.html").read_text(encoding="utf-8")


def attempt_links(page: str) -> list[str]:
    """The passing attempts' lines of a main page: links to an attempt on its task's page."""
    return re.findall(r'<a href="(report/vet_clinic/[^"#]+\.html#vet_clinic-[^"]+-attempt-\d)">', page)


def test_the_page_of_an_oracle_run_shows_every_task_passing(oracle_run):
    page_path = write_html_report(oracle_run)
    assert page_path == oracle_run / "report.html"
    page = page_path.read_text(encoding="utf-8")
    tasks = sorted(p.name for p in EXAMPLE_TASKS.iterdir() if (p / "task.json").is_file())
    assert "<b>0</b> failing attempts" in page
    assert "100.0%" in page and "[100.0, 100.0]" in page  # pass@1, pass^k and their intervals
    assert 'class="badge fail"' not in page
    # A category code is shown with its name, from the task files (this pack lists no suite).
    names = {json.loads((EXAMPLE_TASKS / t / "task.json").read_text())["metadata"]["category_slug"]:
             json.loads((EXAMPLE_TASKS / t / "task.json").read_text())["metadata"]["category"] for t in tasks}
    for code, name in names.items():
        assert f"<td>category {code} {escape(name)}</td>" in page, code
        assert f"<td>{code} <span class=\"muted\">{escape(name)}</span></td>" in page, code
    # The main page: a line per passing attempt, linking to the attempt on its task's page.
    assert "<details class=\"attempt" not in page and "<svg" not in page
    links = attempt_links(page)
    assert sorted(links) == sorted(f"report/vet_clinic/{t}.html#vet_clinic-{t}-attempt-{n}" for t in tasks
                                   for n in range(1, 6))
    for link in links:
        target, anchor = link.split("#")
        assert f'id="{anchor}"' in (oracle_run / target).read_text(encoding="utf-8")
    # Each task's page: every attempt in full, collapsed, drawn on the pack's graph, with a way back.
    for task in tasks:
        own = task_page(oracle_run, task)
        assert own.startswith("<!doctype html>") and own.rstrip().endswith("</html>")
        assert f'<section class="task passing" id="vet_clinic-{task}">' in own and '<a href="../../report.html">' in own
        assert own.count('<details class="attempt pass"') == 5
        assert not re.search(r'<details class="attempt[^>]*open>', own)  # passing attempts collapsed
        assert own.count("<svg") == 1 and "Expected handoff path, for every attempt below" in own  # drawn once
        # A passing attempt in brief: what equals the expected in a line, the transcript (calls and all) in full.
        assert own.count("Handoff path as expected: ") == 5 and own.count("Final database state as expected.") == 5
        assert '<table class="calls">' not in own and "Output of #" not in own
        assert own.count('<table class="transcript">') == 5 and own.count("<tr class=\"tool\"><td>") >= 5
    # Nothing loaded from elsewhere, no script: the task pages link the one stylesheet beside them.
    stylesheet = oracle_run / "report" / "style.css"
    assert ".badge.pass" in stylesheet.read_text(encoding="utf-8")
    for html in [page_path, *(oracle_run / "report").rglob("*.html")]:
        text = html.read_text(encoding="utf-8")
        links = re.findall(r"<link\b[^>]*>", text)
        assert links == ([] if html == page_path else ['<link rel="stylesheet" href="../style.css">'])
        assert not re.search(r"<(script|img|iframe)\b", text)
        assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert not list(oracle_run.rglob(".*.html.*")) and not list(oracle_run.rglob(".*.css.*"))


def test_the_page_of_a_failing_run_shows_the_differing_argument_and_the_changed_row(failing_run):
    page = write_html_report(failing_run).read_text(encoding="utf-8")
    assert "rescored the trajectories of" in page
    assert "<b>1</b> failing attempts" in page
    # The main page: the failing task's section with its failing attempt, in full and open; a line for
    # each of the 39 passing attempts.
    assert re.findall(r'<section class="task (\w+)" id="([^"]+)"', page) == [("failing", "vet_clinic-C2-E2")]
    assert re.findall(r'<details class="attempt (\w+)" id="([^"]+)"( open)?>', page) == [
        ("fail", "vet_clinic-C2-E2-attempt-2", " open")]
    assert len(attempt_links(page)) == 39 and "report/vet_clinic/C2-E2.html#vet_clinic-C2-E2-attempt-2" not in page
    # The task's page: all five attempts, the failing one first and open.
    own = task_page(failing_run, "C2-E2")
    attempts = re.findall(r'<details class="attempt (\w+)" id="vet_clinic-C2-E2-attempt-(\d)"( open)?>', own)
    assert attempts[0] == ("fail", "2", " open") and all(a[2] == "" for a in attempts[1:]) and len(attempts) == 5
    assert own.split('id="vet_clinic-C2-E2-attempt-2"')[1].split("</details>\n<details")[0] in page
    failing = page.split('id="vet_clinic-C2-E2-attempt-2"')[1].split("</section>")[0]
    assert "This attempt fails because tools and final database state did not match." in failing
    # The tool gate: book_appointment's slot_id differs, highlighted on both sides.
    assert re.search(r'<tr class="call mismatch"><td><span class="callstate mismatch">mismatch</span></td>\s*'
                     r'<td class="mono"><b>book_appointment</b>', failing)
    assert ('<tr class="differs"><td class="param mono">slot_id</td><td class="exp mono"><mark>S-101</mark></td>'
            '<td class="act mono"><mark>S-106</mark></td>') in failing
    assert '<td class="param mono">pet_name</td><td class="exp mono">Biscuit</td>' in failing  # equal: not marked
    # The database gate: the appointment row changed, column by column.
    assert '<span class="kind changed">changed</span> · <code>appointments</code> · <code>pet_id = p1</code>' in failing
    assert ('<tr><td class="mono">slot_id</td><td class="db mono differs"><mark>S-101</mark></td>'
            '<td class="db mono differs"><mark>S-106</mark></td></tr>') in failing
    assert "2026-05-16T10:00" in failing
    # The handoff gate passed: both paths drawn on the vet clinic's graph.
    assert failing.count("<svg") == 2 and "reception → appointments" in failing


def test_without_the_pack_the_paths_are_listed_as_text(oracle_run, tmp_path):
    write_html_report(oracle_run, [tmp_path], out=tmp_path / "report.html")  # a folder without packs
    page = task_page(tmp_path, "C2-E2")
    assert "<svg" not in page
    assert "Handoff graph not drawn: the industry pack was not found." in page
    assert '<p class="pathtext">appointments</p></figure>' in page  # the expected path, once
    assert page.count('Handoff path as expected: <span class="pathtext">appointments</span>') == 5


def test_everything_from_the_run_is_escaped(oracle_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(oracle_run, run)
    path = run / "trajectories/vet_clinic/C2-E1/attempt-1.json"
    saved = json.loads(path.read_text())
    saved["trajectory"]["transcript"][0]["said"] = "<script>alert('said')</script> & <b>bold</b>"
    path.write_text(json.dumps(saved))
    write_html_report(run)
    page = task_page(run, "C2-E1")
    assert "<script" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(&#39;said&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page


def test_a_page_stays_bounded_whatever_the_model_wrote(oracle_run, tmp_path, monkeypatch):
    """A failing attempt whose agent spoke 210,000 characters (ten times what a reply may hold: a
    hand-edited run folder) and wrote 100,000 into an argument: each is cut where it is shown, saying
    so, and every page stays within PAGE_CHARS. (1.5 million characters proved the same at eight
    seconds of rescoring more: the words gate reads every character.)"""
    from pytest_callm.report import report_html

    played = tmp_path / "played"
    for part in ("trajectories", "seeds"):
        shutil.copytree(oracle_run / part, played / part)
    shutil.copy(oracle_run / "manifest.json", played / "manifest.json")
    path = played / "trajectories/vet_clinic/C2-E2/attempt-2.json"
    saved = RunDir(played).read_attempt(path)
    spoke = next(t for t in reversed(saved["trajectory"]["transcript"]) if t["role"] != "caller")
    spoke["said"] = "la " * 70_000  # 210,000 characters
    call = next(c for c in saved["trajectory"]["tool_calls"] if c["name"] == "book_appointment")
    call["arguments"]["slot_id"] = "S" * 100_000
    call["raw_arguments"] = json.dumps(call["arguments"])
    path.write_text(json.dumps(saved))
    run = tmp_path / "rescored"
    assert "1 failed, 39 passed" in pytest_run(str(EXAMPLE_TASKS), f"--callm-rescore={played}",
                                               f"--callm-out={run}").stdout
    cut = "more characters, cut from the page; the attempt&#39;s trajectory file holds them all]"
    page, main = task_page(run, "C2-E2"), (run / "report.html").read_text(encoding="utf-8")
    assert "200,000 more characters" in page and "90,000 more characters" in page and cut in main
    assert max(len(page), len(main)) < report_html.SHOWN_CHARS * 10
    # A page over its bound even so: values cut shorter, and the main page leaves full attempts to task pages.
    monkeypatch.setattr(report_html, "PAGE_CHARS", 60_000)
    write_html_report(run)
    page, main = task_page(run, "C2-E2"), (run / "report.html").read_text(encoding="utf-8")
    assert "209,500 more characters" in page and len(page) <= 60_000 and 'class="task failing"' in main
    monkeypatch.setattr(report_html, "PAGE_CHARS", len(main) - 1)
    write_html_report(run)
    shorter = (run / "report.html").read_text(encoding="utf-8")
    assert "Every attempt is on its task&#39;s page only" in shorter and 'class="task failing"' not in shorter
    assert len(shorter) < len(main)


def test_an_unscored_attempt_shows_its_error_and_a_run_without_a_report_still_has_a_page(oracle_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(oracle_run, run)
    report = json.loads((run / "report.json").read_text())
    entry = next(a for a in report["attempts"] if a["task_id"] == "C2-M1" and a["attempt"] == 3)
    entry.update(passed=None, gates={}, error_kind="infrastructure", error="InfrastructureError: the model <timed out>")
    (run / "report.json").write_text(json.dumps(report))
    (run / "trajectories/vet_clinic/C2-M1/attempt-3.json").unlink()
    page = render_report(run)
    assert '<details class="attempt unscored" id="vet_clinic-C2-M1-attempt-3" open>' in page
    assert "<b>infrastructure:</b> InfrastructureError: the model &lt;timed out&gt;" in page
    assert re.findall(r'<section class="task (\w+)" id="([^"]+)"', page)[0] == ("failing", "vet_clinic-C2-M1")

    (run / "report.json").unlink()  # a run killed before its end: the figures come from the trajectories
    page = render_report(run)
    assert "There is no report.json (the run did not finish): the figures below come from the 39 saved" in page
    assert len(attempt_links(page)) == 39


def test_the_command_writes_the_page_or_says_why_not(oracle_run, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main([str(oracle_run), "-o", str(out), "--industries", str(EXAMPLE_PACK.parent)]) == 0
    assert len(re.findall(r'href="page/vet_clinic/[^"]+\.html#', out.read_text(encoding="utf-8"))) == 40
    assert sum(p.read_text(encoding="utf-8").count("<svg") for p in (tmp_path / "page").rglob("*.html")) == 8
    assert (tmp_path / "page" / "style.css").is_file()  # the pages' stylesheet, beside them
    assert main([str(tmp_path / "empty")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_a_report_that_is_not_json_is_named_as_the_run_reader_names_it(tmp_path, capsys):
    (tmp_path / "report.json").write_text("{", encoding="utf-8")  # saved/reader.py's wording, as compare says it
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"callm report: {tmp_path / 'report.json'}: not JSON (")


# --- secrets -------------------------------------------------------------------------------------

@pytest.fixture
def model_run(pytester, openai_server, monkeypatch) -> Path:
    """A run of C2-E2 with a configured model whose key comes from $CALLM_TEST_SECRET (the scripted
    server insists on it), a scripted caller and the default phone line: a run with usage, prices
    and recognizer errors."""
    monkeypatch.setenv(SECRET_VAR, SECRET)
    lines = ["Hi, I'd like to book a check-up for my dog Biscuit.",
             "It's Dana Whitfield, and my number is five oh three, five five five, oh one four two.",
             "Yes, the earliest one works.", "Perfect, thank you."]
    server = openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent,
                                                      end_call=False),
                                 caller=ScriptCaller(lines), models=("agent-model", "caller-model"), api_key=SECRET)
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\n")
    (pytester.path / "models").mkdir()
    (pytester.path / "models" / "agent.toml").write_text(
        f'model = "agent-model"\nbase_url = "{server.base_url}"\napi_key_env = "{SECRET_VAR}"\n\n'
        "[prices]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n")
    (pytester.path / "models" / "caller.toml").write_text(
        f'model = "caller-model"\nbase_url = "{server.base_url}"\napi_key_env = "{SECRET_VAR}"\n')
    out = pytester.path / "run"
    result = pytester.runpytest("--callm-model=agent", "--callm-caller-model=caller", f"--callm-out={out}",
                                "-k", "C2-E2")
    result.assert_outcomes(passed=5)
    return out


def test_no_key_reaches_the_page_or_any_file_of_the_run(model_run):
    main_page = write_html_report(model_run).read_text(encoding="utf-8")
    assert f"{SECRET_VAR} (names only)" in main_page and "api_key_env" in main_page
    assert re.search(r"\d+ requests · TTFT [\d.]+ ms · [\d,]+ in / [\d,]+ out tokens · \$0\.\d{4}", main_page)
    page = task_page(model_run, "C2-E2")
    for path in model_run.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    # What a real call adds to the task's page: cost, latency, and the line's recognizer errors.
    # (a passing attempt's in one line, its model requests one click away)
    assert re.search(r"\d+ requests · TTFT [\d.]+ ms · [\d,]+ input \([\d,]+ cached\) / [\d,]+ output tokens · "
                     r"\$0\.\d{4}", page) and "<summary>Model requests (" in page
    assert re.search(r'<span class="err">digits dropped: ', page) and "<ins>" in page and "<del>" in page


def test_a_key_that_found_its_way_into_the_run_is_struck_from_the_page(model_run):
    manifest = json.loads((model_run / "manifest.json").read_text())
    manifest["comparable"]["model_config"]["api_key"] = "sk-another-0123456789"  # as if a config had kept one
    (model_run / "manifest.json").write_text(json.dumps(manifest))
    path = model_run / "trajectories/vet_clinic/C2-E2/attempt-1.json"
    saved = json.loads(path.read_text())
    saved["trajectory"]["transcript"][0]["said"] = f"My key is {SECRET}."  # as if a model had echoed it
    path.write_text(json.dumps(saved))
    write_html_report(model_run)
    page, own = (model_run / "report.html").read_text(encoding="utf-8"), task_page(model_run, "C2-E2")
    for text in (page, own):
        assert SECRET not in text and "sk-another-0123456789" not in text
    assert "My key is [redacted]." in own and '<td class="mono">[redacted]</td>' in page


# --- in a browser --------------------------------------------------------------------------------

def _find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@pytest.fixture(scope="session")
def chromium() -> str:
    """Headless Chromium from Debian's `chromium` package: installed when missing, where this runs as
    root with apt-get; skipped, saying why, only where it cannot be installed."""
    found = _find_chromium()
    if found:
        return found
    if not shutil.which("apt-get"):
        pytest.skip("Chromium is not installed and apt-get is not available to install it")
    if os.geteuid() != 0:
        pytest.skip("Chromium is not installed, and installing it (apt-get install chromium) needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
        except subprocess.TimeoutExpired:
            pytest.skip(f"Chromium could not be installed: {' '.join(cmd)} timed out")
        if proc.returncode != 0:
            pytest.skip(f"Chromium could not be installed: {' '.join(cmd)} failed: "
                        f"{(proc.stderr or proc.stdout).strip()[-500:]}")
    found = _find_chromium()
    if not found:
        pytest.skip("Chromium could not be installed: apt-get succeeded but no chromium binary is on PATH")
    return found


def browse(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium once, with a fresh profile folder."""
    return subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("which", ["oracle", "failing"])
def test_the_page_opens_in_headless_chromium(which, request, chromium, tmp_path, tmp_path_factory):
    run = request.getfixturevalue(f"{which}_run")
    page = write_html_report(run)

    dom = browse(chromium, tmp_path / "profile-dom", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = dom.stdout
    assert "<h1>CALLM run report: oracle</h1>" in rendered
    assert rendered.count("<svg") == (2 if which == "failing" else 0)  # only the failing attempt's, in full
    if which == "failing":
        # The failing call's differing argument and the changed database row survive the browser's parse,
        # ... inside the failing attempt, which the page opens.
        assert re.search(r'<details class="attempt fail" id="vet_clinic-C2-E2-attempt-2" open(="")?>', rendered)
        failing = rendered.split('id="vet_clinic-C2-E2-attempt-2"')[1].split("</section>")[0]
        assert re.search(r'<td class="param mono">slot_id</td><td class="exp mono"><mark>S-101</mark></td>'
                         r'<td class="act mono"><mark>S-106</mark></td>', failing)
        assert re.search(r'<span class="kind changed">changed</span> · <code>appointments</code> · '
                         r'<code>pet_id = p1</code>', failing)
        assert re.search(r'<td class="mono">slot_id</td><td class="db mono differs"><mark>S-101</mark></td>'
                         r'<td class="db mono differs"><mark>S-106</mark></td>', failing)
    # A task's page, reached by the main page's relative link, opens from file:// too.
    task = run / "report/vet_clinic/C2-E2.html"
    own = browse(chromium, tmp_path / "profile-task", "--dump-dom", task.as_uri())
    assert own.returncode == 0, own.stderr[-2000:]
    # The expected path drawn once; the failing attempt's two paths, in full.
    assert own.stdout.count("<svg") == (3 if which == "failing" else 1)
    assert own.stdout.count('<details class="attempt') == 5
    # ... styled by the stylesheet it links: without it (a copy of the page elsewhere), Chromium paints otherwise.
    bare = tmp_path / "bare" / "vet_clinic" / task.name
    bare.parent.mkdir(parents=True)
    shutil.copy(task, bare)
    shots = {}
    for name, path in (("styled", task), ("bare", bare)):
        shots[name] = tmp_path / f"{name}.png"
        result = browse(chromium, tmp_path / f"profile-{name}", "--hide-scrollbars", "--window-size=1280,1600",
                        f"--screenshot={shots[name]}", path.as_uri())
        assert result.returncode == 0 and png_size(shots[name]) == (1280, 1600), result.stderr[-2000:]
    assert shots["styled"].read_bytes() != shots["bare"].read_bytes()

    shot = tmp_path_factory.mktemp("html-report-screenshots") / f"{which}.png"
    result = browse(chromium, tmp_path / "profile-shot", "--hide-scrollbars", "--window-size=1280,2400",
                    f"--screenshot={shot}", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert png_size(shot) == (1280, 2400)
    request.node.user_properties.append(("screenshot", str(shot)))


def test_every_template_of_the_pages_ships_in_the_package():
    """The pages are drawn from several templates: each must match pyproject's package data, or an
    installed (not editable) package would render no page."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pytest_callm"]
    templates = REPO / "pytest_callm" / "report" / "templates"
    names = [str(p.relative_to(REPO / "pytest_callm")) for p in templates.iterdir() if p.is_file()]
    assert len(names) >= 5
    assert all(any(fnmatch.fnmatch(n, g) for g in globs) for n in names), names


def test_the_arguments_of_a_call_never_made_are_compared_not_free_text():
    """Issue 30: a missing call's constrained arguments read "free text, not compared" and looked equal.
    The verifier compares them (the call is missing, so they fail); only the pack's free text is free."""
    from pytest_callm.report.views import parameter_rows

    expected = {"slot_id": "S-101", "pet_name": "Biscuit", "notes": "first visit"}
    never_made = parameter_rows(expected, None, set(), frozenset({"notes"}))
    assert {r["name"]: r["state"] for r in never_made} == {"slot_id": "differs", "pet_name": "differs",
                                                           "notes": "free"}
    # A call made without an argument the verifier let pass (it names no difference) stays accepted.
    made = parameter_rows(expected, {"slot_id": "S-101", "notes": "x"}, set(), frozenset({"notes"}))
    assert {r["name"]: r["state"] for r in made} == {"slot_id": "same", "pet_name": "accepted", "notes": "free"}
