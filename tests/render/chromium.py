"""A headless Chromium driven over the DevTools protocol on a pipe: no packages beyond the standard library.

``chromium --remote-debugging-pipe`` reads commands from fd 3 and writes replies and events to fd 4, one JSON
message per NUL-terminated chunk. :class:`Browser` starts it, :meth:`Browser.page` opens a tab (a flat session),
and :class:`Page` loads a file at a given viewport width, evaluates expressions, and takes screenshots and PDFs.
:func:`find_chromium` names the binary, or says why there is none (the browser tests skip with that reason).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 60.0


class BrowserError(RuntimeError):
    """Chromium could not be started or answered with an error."""


def find_chromium() -> tuple[str | None, str]:
    """(path, "") of a Chromium binary (``$CHROMIUM`` first), or (None, why not)."""
    named = os.environ.get("CHROMIUM")
    for name in ([named] if named else []) + list(CANDIDATES):
        path = shutil.which(name)
        if path:
            return path, ""
    return None, (
        "no Chromium found (looked for $CHROMIUM, "
        + ", ".join(CANDIDATES)
        + "): install Debian's chromium package (apt-get install chromium)"
    )


class Browser:
    """One headless Chromium process; use as a context manager."""

    def __init__(self, binary: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="m0h-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()

        def wire() -> None:  # in the child: fd 3 = commands in, fd 4 = replies out
            os.dup2(cmd_r, 3)
            os.dup2(res_w, 4)

        self._proc = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self.call("Browser.close")
            except (BrowserError, OSError):
                pass
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for fd in (self._cmd_w, self._res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._proc.stderr:
            self._proc.stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _read(self) -> dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._res_r], [], [], TIMEOUT)
            if not ready:
                raise BrowserError(f"Chromium gave no answer in {TIMEOUT:g} s")
            chunk = os.read(self._res_r, 1 << 20)
            if not chunk:
                try:
                    code: object = self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    code = "still running"
                err = ""
                if self._proc.stderr and code != "still running":
                    err = self._proc.stderr.read().decode(errors="replace").strip()[-1500:]
                raise BrowserError(f"Chromium closed its pipe (exit status {code}){': ' + err if err else ''}")
            self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its reply; events received meanwhile go to :attr:`events`."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict[str, Any]:
        """The first event ``method`` of ``session`` (already received, or the next to come)."""
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read())

    def page(self) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, session)


class Page:
    """A tab: load a file at a viewport size, evaluate, screenshot."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable")

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.call(method, params, self.session)

    def resize(self, width: int, height: int = 900) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def load(self, path: Path, width: int, height: int = 900) -> None:
        self.resize(width, height)
        self.browser.events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.browser.wait_for("Page.loadEventFired", self.session)

    def media(self, media: str) -> None:
        """Emulate a CSS media type ("print", or "" for the screen)."""
        self.call("Emulation.setEmulatedMedia", {"media": media})

    def eval(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:80]}...: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def requests(self) -> list[str]:
        """URLs the page asked for since it was loaded (its own file included)."""
        return [
            ev["params"]["request"]["url"]
            for ev in self.browser.events
            if ev.get("method") == "Network.requestWillBeSent" and ev.get("sessionId") == self.session
        ]

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """The whole page (its full height at the current width) as a PNG; ``full_page=False``: the viewport."""
        if full_page:
            width = int(self.eval("window.innerWidth"))
            height = int(self.eval("Math.ceil(document.documentElement.scrollHeight)"))
            self.resize(width, max(height, 1))
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def pdf(self, path: Path) -> Path:
        data = self.call("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True})["data"]
        path.write_bytes(base64.b64decode(data))
        return path
