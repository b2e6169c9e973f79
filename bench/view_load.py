"""Does the browser view disturb the loop? The composed 1 kHz stack (``robot-control launch
composed:=true realtime_priority:=50``, the rclpy-free route) run in alternation without and with
the view open: the launch file's own view (``view:=true``) and a headless Chromium page on it
(Debian's chromium driven by Playwright), the page's frames per second counted meanwhile.

    python bench/view_load.py [--duration 20] [--rounds 2] [--screenshot docs/view.png]

Prints, per run, the achieved rate and the missed deadlines from the launch summary (the plant's
own counts), the page's frames/s (requestAnimationFrame callbacks over the run), the CPU the
browser used meanwhile (all its processes: seconds per second, and milliseconds per frame — the
page's cost, which the machine's load changes less than its frames/s) and the load average: the
machine is shared, so compare runs of the same round (same window), not with other days. Each
run is on its own ROS domain.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from view_helpers import Browser, browser_cpu_seconds, browser_missing, free_port  # noqa: E402

FPS_JS = """ms => new Promise(done => { let n = 0; const t0 = performance.now();
  function tick() { n++; if (performance.now() - t0 < ms) requestAnimationFrame(tick);
                    else done(n * 1000 / (performance.now() - t0)); }
  requestAnimationFrame(tick); })"""


def run_stack(duration: float, with_view: bool, domain: int, screenshot: str | None) -> dict:
    """One launch; with the view, a browser page open on it while the loop runs."""
    port = free_port()
    summary = Path(tempfile.mkdtemp()) / "summary.json"
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE":
           "LOCALHOST", "ROBOT_CONTROL_BUS": "dds"}
    cmd = [sys.executable, "-m", "robot_control.cli", "launch", "composed:=true",
           "realtime_priority:=50", f"view:={str(with_view).lower()}", f"view_port:={port}",
           "--duration", str(duration), "--summary", str(summary), "--startup-timeout", "300"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    fps = cpu = None
    browser = None
    try:
        for line in proc.stdout:
            if "control loop running" in line:
                break
        if with_view:
            browser = Browser()
            browser.open(f"http://127.0.0.1:{port}/")
            browser.wait_text(r"t = [\d.]+ s", 150)
            if screenshot:  # while the stack runs (the page says "Connecting..." once it ends)
                browser.page.screenshot(path=screenshot)
            started, cpu0 = time.monotonic(), browser_cpu_seconds()
            fps = browser.page.evaluate(FPS_JS, 1000 * max(1.0, duration - 12.0))
            cpu = (browser_cpu_seconds() - cpu0) / (time.monotonic() - started)
        proc.communicate(timeout=duration + 120)
    finally:
        if browser is not None:
            browser.close()
        if proc.poll() is None:
            proc.kill()
    s = json.loads(summary.read_text())
    missed, commands = s.get("missed_deadlines"), s.get("commands")
    return {"view": with_view, "rate_hz": s.get("rate_hz"), "missed": missed,
            "missed_pct": None if s.get("missed_deadline_ratio") is None
            else 100.0 * s["missed_deadline_ratio"], "commands": commands,
            "p99_us": (s.get("latency_us") or {}).get("p99"), "page_fps": fps, "cpu": cpu,
            "load": os.getloadavg()[0], "outcome": s.get("outcome")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--domain", type=int, default=171)
    parser.add_argument("--screenshot", help="save the page (with the view) here")
    args = parser.parse_args()
    if (why := browser_missing()) is not None:
        print(f"view_load: {why}", file=sys.stderr)
        return 1
    print("round  view  rate Hz  missed (%)        p99 µs  page fps  browser CPU s/s  ms/frame  "
          "load  outcome")
    for r in range(args.rounds):
        for with_view in (False, True):
            m = run_stack(args.duration, with_view, args.domain, args.screenshot)
            print(f"{r:5d}  {'yes' if with_view else 'no ':4s}  {_f(m['rate_hz'], 7, 1)}  "
                  f"{m['missed']!s:>6} ({_f(m['missed_pct'], 5, 2)})  {_f(m['p99_us'], 7, 0)}  "
                  f"{_f(m['page_fps'], 8, 1)}  {_f(m['cpu'], 15, 2)}  {_f(per_frame(m), 8, 0)}  "
                  f"{m['load']:4.1f}  {m['outcome']}", flush=True)
            time.sleep(1.0)
    return 0


def per_frame(m: dict) -> float | None:
    """The browser's CPU milliseconds per frame drawn."""
    return 1000.0 * m["cpu"] / m["page_fps"] if m["cpu"] is not None and m["page_fps"] else None


def _f(v, width: int, digits: int) -> str:
    return f"{v:{width}.{digits}f}" if isinstance(v, int | float) else f"{'—':>{width}}"


if __name__ == "__main__":
    sys.exit(main())
