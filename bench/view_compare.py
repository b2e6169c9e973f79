"""Is the page cheaper than before? One composed 1 kHz stack (``robot-control launch
composed:=true``, rclpy-free), and on it, one at a time in alternation, the view of an older
commit and the view of this checkout, each with one headless Chromium page (Debian's chromium via
Playwright, 1400 × 900): per run the page's 3D frames/s and the browser's CPU per 3D frame.

    python bench/view_compare.py --old 4f50a1a [--rounds 3] [--span 10] [--query '?fixedDpr=0.5']

Alternating on one stack is the fair comparison on a shared machine (docs/view.md, "Cost"):
separate bench runs scatter as much as a change. The older view is that commit's
``robot_control`` package (``git archive``) run against the same stack; the page's console line
from viser's AdaptiveDpr (``[Performance] Setting DPR to …``) is printed when it came.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
sys.path.insert(0, str(ROOT / "bench"))

from view_helpers import Browser, browser_cpu_seconds, browser_missing, free_port  # noqa: E402
from view_load import COUNT_FRAMES_JS, FRAMES_JS  # noqa: E402


def package_of(commit: str, into: Path) -> Path:
    """The robot_control package of ``commit``, unpacked under ``into``."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "robot_control"],
                         capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into)  # (our own repository's files)
    return into


def started(cmd: list[str], env: dict[str, str], line: str, cwd: Path = ROOT) -> subprocess.Popen:
    """A process, once it printed ``line`` (its output then drained, so it never blocks)."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    for out in proc.stdout:
        if line in out:
            break
    else:
        raise RuntimeError(f"{cmd[2:4]} ended before printing {line!r}")
    subprocess.Popen(["cat"], stdin=proc.stdout, stdout=subprocess.DEVNULL)
    return proc


def measure(package_root: Path, env: dict[str, str], query: str, span_s: float) -> dict:
    """One view process (the package under ``package_root``) and one page on the stack: frames
    and browser CPU over ``span_s``."""
    port = free_port()
    view = started([sys.executable, "-m", "robot_control.view.app", "--port", str(port)],
                   {**env, "PYTHONPATH": str(package_root)}, "robot-control view:",
                   cwd=package_root)  # (python -m puts the working directory first)
    browser = Browser()
    try:
        dpr: list[str] = []
        browser.page.on("console", lambda m: "[Performance]" in m.text and dpr.append(m.text))
        browser.page.add_init_script(COUNT_FRAMES_JS)
        browser.open(f"http://127.0.0.1:{port}/{query}")
        browser.wait_text(r"t = [\d.]+ s", 150)
        time.sleep(3.0)  # past the page's start
        cpu0, n0, t0 = browser_cpu_seconds(), browser.page.evaluate(FRAMES_JS), time.monotonic()
        time.sleep(span_s)
        n1 = browser.page.evaluate(FRAMES_JS)
        cpu = (browser_cpu_seconds() - cpu0) / (time.monotonic() - t0)
        seconds = (n1[2] - n0[2]) / 1000.0
        drawn = (n1[1] - n0[1]) / seconds
        return {"drawn_fps": drawn, "cpu": cpu, "ms": 1000.0 * cpu / drawn if drawn else None,
                "dpr": dpr[-1] if dpr else "", "load": os.getloadavg()[0]}
    finally:
        browser.close()
        view.terminate()
        view.wait(15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the commit whose view is compared")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--span", type=float, default=10.0, help="seconds of frames a run")
    parser.add_argument("--query", default="", help="the page's URL query, e.g. '?fixedDpr=0.5'")
    parser.add_argument("--domain", type=int, default=172)
    args = parser.parse_args()
    if (why := browser_missing()) is not None:
        print(f"view_compare: {why}", file=sys.stderr)
        return 1
    base = {**os.environ, "ROS_DOMAIN_ID": str(args.domain), "ROBOT_CONTROL_BUS": "dds",
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        old = package_of(args.old, Path(tmp))
        stack = started([sys.executable, "-m", "robot_control.cli", "launch", "composed:=true",
                         "--duration", "86400", "--startup-timeout", "300"], base,
                        "control loop running")
        try:
            print("round  view  3D fps  browser CPU s/s  ms/3D frame  load  AdaptiveDpr")
            for r in range(args.rounds):
                for label, path in ((args.old, old), ("this", ROOT)):
                    m = measure(path, base, args.query, args.span)
                    ms = f"{m['ms']:11.0f}" if m["ms"] is not None else f"{'—':>11}"
                    print(f"{r:5d}  {label[:8]:8s}  {m['drawn_fps']:6.1f}  {m['cpu']:15.2f}  "
                          f"{ms}  {m['load']:4.1f}  {m['dpr']}", flush=True)
        finally:
            stack.terminate()
            try:
                stack.wait(30)
            except subprocess.TimeoutExpired:
                stack.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
