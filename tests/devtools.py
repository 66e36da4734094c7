"""Headless Chromium driven over its DevTools pipe, for tests that click, type and measure in a page.

`--remote-debugging-pipe`: JSON messages ended by a NUL byte, commands on the browser's fd 3, replies on
its fd 4. Waits are on the page's own state (a condition polled in the page), never on a fixed time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-default-apps", "--disable-sync", "--no-first-run"]
WAIT_S = 120.0  # how long a condition may take on a loaded machine before the test fails


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Navigated(AssertionError):
    """The page navigated while a command ran in it: asked again, the command runs in the new page."""


class DevTools:
    def __init__(self, chromium: str, profile: Path):
        commands_r, self._commands = os.pipe()
        self._replies, replies_w = os.pipe()

        def pipes():  # in the browser's process, before it starts: its fds 3 and 4
            os.dup2(commands_r, 3)
            os.dup2(replies_w, 4)

        self.proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", "--hide-scrollbars",
                                      "--remote-debugging-pipe", "about:blank"], preexec_fn=pipes, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_r)
        os.close(replies_w)
        self._buffer, self._id, self.session = b"", 0, None

    def send(self, method: str, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:  # replies and events, in order, until this command's reply
            while b"\0" not in self._buffer:
                chunk = os.read(self._replies, 65536)
                assert chunk, "Chromium closed its DevTools pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "navigated" in str((reply.get("error") or {}).get("message")):
                    raise Navigated(reply)
                assert "error" not in reply, reply
                return reply["result"]

    def open(self, url: str, width: int | None = None, height: int = 1000) -> None:
        """Open `url` in a new tab (at `width` CSS pixels when given) and wait for its load."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        if width is not None:
            self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
        self.send("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def evaluate(self, expression: str):
        return self.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def wait_for(self, condition: str, what: str = "") -> None:
        """Poll a JavaScript condition in the page until it holds (the page's own work, however long)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                if self.evaluate(f"Boolean({condition})"):
                    return
            except Navigated:  # mid-navigation: the condition is asked of the next page
                pass
            assert time.monotonic() < deadline, f"waited {WAIT_S:.0f} s for {what or condition}"
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """Follow the first element matching `selector` as a click does (a link navigates, wait for its load)."""
        before = self.evaluate("location.href")
        href = self.evaluate(f"document.querySelector({json.dumps(selector)}).href")
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
        if href and href.split("#")[0] != before.split("#")[0]:
            self.wait_for(f"location.href === {json.dumps(href)} && document.readyState === 'complete'",
                          f"the page {href}")
        elif href:
            self.wait_for(f"location.href === {json.dumps(href)}", f"the anchor {href}")

    def type_into(self, field: str, text: str) -> None:
        """Focus the field, select what it holds, and type `text` over it, as a keyboard does."""
        self.evaluate(f"document.getElementById({field!r}).focus(); document.getElementById({field!r}).select()")
        self.send("Input.insertText", text=text)

    def clear(self, field: str) -> None:
        self.evaluate(f"const f = document.getElementById({field!r}); f.value = '';"
                      "f.dispatchEvent(new Event('input', {bubbles: true}))")

    def overflow(self) -> dict:
        """How the page sits in the window: the page's width past the window's, and each table box (a
        table's own scrolling frame) whose table is wider than the box."""
        return self.evaluate("""(() => ({
            page: document.documentElement.scrollWidth - window.innerWidth,
            window: window.innerWidth,
            boxes: [...document.querySelectorAll('.table-box')].filter(b => b.scrollWidth > b.clientWidth + 1)
                     .map(b => (b.querySelector('table') || {}).id + ': ' + b.scrollWidth + ' > ' + b.clientWidth),
        }))()""")

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except AssertionError:
            pass
        self.proc.wait(timeout=60)
