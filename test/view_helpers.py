"""Headless Chromium (Debian's ``chromium``, driven by Playwright) on pages of ``robot-control
view``, and the view's processes, for test/test_view*.py and bench/view_load.py."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

from launch_run import Collected

CHROMIUM = os.environ.get("ROBOT_CONTROL_CHROMIUM", "/usr/bin/chromium")
#: software WebGL (SwiftShader: no GPU in CI) as Chromium allows it headless; --use-angle=swiftshader
#: measured slower (0.2 against 16–20 frames/s on one page, bench/view_load.py's machine)
CHROMIUM_ARGS = ["--enable-unsafe-swiftshader"]


def browser_missing() -> str | None:
    """Why no browser test can run here, or None."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) \
            and shutil.which("chromium") is None:
        return (f"no Chromium at {CHROMIUM} nor on PATH (Debian: apt-get install chromium; "
                ".ci/run installs it where apt-get can)")
    try:
        import playwright.sync_api  # noqa: F401
    except ModuleNotFoundError:
        return "playwright is not installed (pip install -e .[test])"
    return None


def chromium_path() -> str:
    return CHROMIUM if os.path.isfile(CHROMIUM) else shutil.which("chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class View(Collected):
    """``robot-control view ARGS`` in a subprocess, its output collected."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.port = int(args[args.index("--port") + 1]) if "--port" in args else 8080
        super().__init__([sys.executable, "-m", "robot_control.cli", "view", *args], env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def wait_serving(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            if any("robot-control view: http" in line for line in self.lines):
                return
            time.sleep(0.1)
        raise AssertionError("the view did not start:\n" + "\n".join(self.lines[-20:]))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(2)
        try:
            code = self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(5)
        self.reader.join(5)
        return code


class Browser:
    """One headless Chromium page; every console error and every request's host recorded."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=chromium_path(),
                                                args=CHROMIUM_ARGS)
        self.page = self.browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.hosts: set[str] = set()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda r: self.hosts.add(_host(r.url)))

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="load", timeout=60_000)

    def text(self, timeout_s: float = 60.0) -> str:
        return self.page.inner_text("body", timeout=timeout_s * 1000.0)

    def wait_text(self, pattern: str, timeout_s: float = 30.0) -> re.Match:
        """The first match of a regular expression in the page's text, waiting for it.

        A page whose renderer is busy (software WebGL on a loaded CI machine) can leave a single
        read of its text unanswered for tens of seconds: such a read counts as "not yet", and
        only the deadline decides.
        """
        from playwright.sync_api import TimeoutError as PageBusy

        deadline = time.monotonic() + timeout_s
        shown, found = "(the page never answered a read of its text)", None
        while True:
            try:
                shown = self.text(max(deadline - time.monotonic(), 5.0))
                found = re.search(pattern, shown)
            except PageBusy:
                pass
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert found, (f"no /{pattern}/ on the page in {timeout_s} s; it shows:\n{shown[:2000]}"
                       + (f"\n…\n{shown[-1500:]}" if len(shown) > 2000 else ""))
        return found

    def click_in_view(self, locator, timeout_s: float = 30.0) -> None:
        """Click an element the page may still be laying out: under load the panel can move it
        out of the viewport between Playwright's scrolling and its click ("Element is outside
        of the viewport"); scrolled to and clicked again until the deadline."""
        from playwright.sync_api import Error as PageError

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                locator.scroll_into_view_if_needed(timeout=10_000)
                locator.click(force=True, timeout=10_000)
                return
            except PageError as exc:
                if "outside of the viewport" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def field(self, label: str):
        """The input of the row a viser label names (its ``for`` is not always the input's id)."""
        visible = "input[not(@type='hidden')]"
        return self.page.locator("label").filter(has_text=label).first.locator(
            f"xpath=ancestor::div[.//{visible}][1]//{visible}").first

    def canvas_png(self) -> bytes:
        """The 3D view as shown (a clip of the page: an element screenshot waits for the canvas
        to be 'stable', which a page redrawing at its own rate under load may never be)."""
        box = self.page.locator("canvas").first.bounding_box()
        return self.page.screenshot(clip=box, timeout=90_000)

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()


def _host(url: str) -> str:
    """The host a request goes to ('' for data:, blob: and such that leave nothing)."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about", "chrome-error"):
        inner = urlparse(parsed.path) if parsed.scheme == "blob" else None
        return inner.hostname or "" if inner else ""
    return parsed.hostname or ""


def browser_cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by every Chromium process below this one: the
    browser's cost, which a shared machine's load does not change (its frames/s it does)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
        except OSError:  # ended meanwhile
            continue
        fields = raw.rsplit(")", 1)[1].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
        if "chrom" in raw[raw.index("(") + 1:raw.rindex(")")]:
            cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), []):
            total += cpu.get(pid, 0.0)
            todo.append(pid)
    return total


def png_pixels(png: bytes):
    """An RGB array of a PNG."""
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)
