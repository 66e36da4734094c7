"""The documentation site builds strictly, reads offline, and opens in a browser; the README's front door
points at pages and anchors that exist, and names every `callm` command.

The site is built once per session into a temporary folder with `mkdocs build --strict` (the `docs`
extra), as CI builds it; without mkdocs those tests skip, and the browser test also skips where there
is no Chromium (Debian's `chromium`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.xdist_group("docs_site")  # its module fixture plays runs once, on one worker

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"]


def hook_module():
    """docs/hooks/reference.py, the site's own renderer of the reference parts."""
    spec = importlib.util.spec_from_file_location("callm_docs_reference", REPO / "docs" / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    for package in ("mkdocs", "material"):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


class Loads(HTMLParser):
    """Every URL a page would load by itself (scripts, stylesheets, images, frames, fonts), not links."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.classes: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.classes += (attrs.get("class") or "").split()
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed"):
            self.urls.append(attrs.get("src") or "")
        if tag == "link" and not {"canonical", "alternate"} & set((attrs.get("rel") or "").split()):
            self.urls.append(attrs.get("href") or "")


def test_the_site_builds_strictly_and_loads_nothing_from_elsewhere(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        loads = Loads()
        loads.feed(page.read_text(encoding="utf-8"))
        remote = [u for u in loads.urls if re.match(r"(https?:)?//", u)]
        assert not remote, f"{page.name} loads {remote}"
        # Material's script fetches mermaid from a CDN only for a page with a mermaid diagram
        assert "mermaid" not in loads.classes, page.name
    for css in site.rglob("*.css"):
        assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", css.read_text(encoding="utf-8")), css.name
    assert (site / "search" / "search_index.json").is_file()  # built here, read by the page's own script


def test_the_reference_pages_are_rendered_from_the_code(site):
    cli = (site / "cli.html").read_text(encoding="utf-8")
    _, commands = hook_module().command_parsers()
    for name in commands:
        assert f'id="callm-{name}"' in cli, name
    assert "--max-live-calls" in cli and "--write-tables" in cli  # a command's own and a delegated one's
    configuration = (site / "configuration.html").read_text(encoding="utf-8")
    for option in ("--callm-model", "--callm-shard", "--callm-keep-calls", "--callm-industries"):
        assert option in configuration
    assert "callm_request_deadline" in configuration
    architecture = (site / "architecture.html").read_text(encoding="utf-8")
    assert "pytest_callm/report/" in architecture and "Why these modules are long" in architecture


def readme_links() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"\]\((docs/[\w-]+\.md)(?:#([\w-]+))?\)", text)


def test_the_readme_links_to_pages_and_anchors_that_exist(site):
    links = readme_links()
    assert len(links) > 15
    for path, anchor in links:
        page = site / Path(path).relative_to("docs").with_suffix(".html")
        assert page.is_file(), path
        if anchor:
            assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), f"{path}#{anchor}"


def test_the_readme_names_every_callm_command():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## The `callm` command", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    listed = re.findall(r"^callm ([\w-]+)", block, re.M)
    _, commands = hook_module().command_parsers()
    assert listed == list(commands)


def test_the_callm_modules_docstring_names_every_command():
    from pytest_callm import cli

    listed = re.findall(r"^    callm ([\w-]+)", cli.__doc__, re.M)
    _, commands = hook_module().command_parsers()
    assert sorted(listed) == sorted(commands)


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    command = "pytest tests -n 3 -q -p no:cacheprovider"
    assert command in lines
    assert command in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()  # CI runs what it says


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


@pytest.mark.parametrize("page", ["index.html", "configuration.html"])
def test_a_page_opens_in_headless_chromium_with_its_navigation_and_search_box(site, page, tmp_path):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian's chromium package)")
    proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=5000", "--dump-dom", (site / page).as_uri()],
                          capture_output=True, text=True, timeout=120)
    dom = proc.stdout
    assert "</html>" in dom, proc.stderr[-2000:]
    assert 'class="md-search__input"' in dom  # the search box, in the page as the browser built it
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?md-sidebar--secondary', dom, re.S)
    assert nav, "no primary navigation"
    for target in ("run.html", "write-tasks.html", "rl.html", "cli.html", "architecture.html"):
        assert f'href="{target}' in nav[0], target
    assert "md-sidebar--primary" in dom


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on loopback: the search reads its index with fetch, which file:// refuses."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


SEARCHES = {  # what a reader types -> the page that must come first (and its section, among the first two hits)
    "pass^k": "scoring.html#pass1-and-passk",
    "pass@1": "scoring.html#pass1-and-passk",
    "resume": "compare-and-publish.html#resume",
    "choose": "leaderboard.html",
    "choose a model": "leaderboard.html",
}


def test_the_search_box_finds_the_headline_figures_and_the_jobs_at_the_top(served, tmp_path):
    """Typed into the search box of a page in headless Chromium (the theme's own search, over its index):
    "pass^k", whose caret the search engine would read as an operator, finds the section that defines it
    first, as do "pass@1", "resume", "choose" and "choose a model"."""
    from urllib.parse import quote

    from devtools import DevTools

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("Chromium is not installed (Debian's chromium package)")
    browser = DevTools(chromium, tmp_path / "profile")
    meta = "document.querySelector('.md-search-result__meta')"
    try:
        for query, wanted in SEARCHES.items():
            browser.open(f"{served}/index.html?q={quote(query)}", width=1280)
            browser.wait_for(f"{meta} && /matching document/.test({meta}.textContent)", f"results for {query}")
            assert browser.evaluate("document.querySelector('.md-search__input').value") == query
            hits = browser.evaluate("[...document.querySelectorAll('.md-search-result__item > a')]"
                                    ".map(a => a.getAttribute('href').replace(/^.*\\//, '').replace(/\\?h=[^#]*/, ''))")
            assert hits and hits[0] == wanted.split("#")[0], (query, browser.evaluate(f"{meta}.textContent"), hits[:6])
            assert wanted in hits[:2], (query, hits[:6])
    finally:
        browser.close()
