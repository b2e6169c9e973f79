"""Does the browser view disturb the loop? The composed 1 kHz stack (``robot-control launch
composed:=true realtime_priority:=50``, the rclpy-free route) run in alternation without and with
the view open: the launch file's own view (``view:=true``) and a headless Chromium page on it
(Debian's chromium driven by Playwright), the page's frames per second counted meanwhile.

    python bench/view_load.py [--duration 30] [--rounds 2] [--screenshot docs/view.png]
                              [--query '?fixedDpr=1']

Prints, per run, the achieved rate and the missed deadlines from the launch summary (the plant's
own counts), the page's frames/s (requestAnimationFrame callbacks over the run: frames the
browser could show) and its 3D frames/s (those frames in which the 3D view was drawn — viser
draws on demand, so this is the frame rate of the moving arm), the CPU the browser used meanwhile
(all its processes: seconds per second, and milliseconds per 3D frame — the page's cost, which
the machine's load changes less than its frames/s), the load average, and what the page set
itself up for (view/software_webgl.js: "software WebGL, ?fixedDpr=0.5" here, or "GPU"): the
machine is shared, so compare runs of the same round (same window), not with other days. Each
run is on its own ROS domain. The frames are counted over the run's last ``duration - 12`` s
after the page shows the stack's time: ``--duration 30`` (18 s) rather than 15 (3 s, mostly the
page's start).
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

#: counts, from the page's start, the animation frames (requestAnimationFrame callbacks: frames
#: the browser could show) and the frames in which the 3D view was drawn (a WebGL draw call in
#: the frame): viser renders on demand, so an idle page can run its animation frames at 60/s
#: while drawing nothing new; the drawn frames are the honest frame rate of the 3D view
COUNT_FRAMES_JS = """(() => { const w = window; w.__frames = 0; w.__drawn = 0; let drew = false;
  for (const C of [WebGLRenderingContext, WebGL2RenderingContext])
    for (const m of ['drawArrays', 'drawElements', 'drawArraysInstanced', 'drawElementsInstanced',
                     'drawRangeElements']) {
      const f = C.prototype[m]; if (!f) continue;
      C.prototype[m] = function () { drew = true; return f.apply(this, arguments); }; }
  const tick = () => { w.__frames++; if (drew) { w.__drawn++; drew = false; }
                       requestAnimationFrame(tick); };
  requestAnimationFrame(tick); })();"""
FRAMES_JS = "[window.__frames, window.__drawn, performance.now()]"
#: what the view's page script chose (view/software_webgl.js) and the page's address query
PAGE_SETTINGS_JS = """(() => { const w = window.__robotControlWebGL;
  return (w ? (w.software ? 'software WebGL' : 'GPU') : 'no page script') +
    (location.search ? ', ' + location.search : ''); })()"""


def run_stack(duration: float, with_view: bool, domain: int, screenshot: str | None,
              query: str = "") -> dict:
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
    fps = drawn = cpu = settings = None
    browser = None
    try:
        for line in proc.stdout:
            if "control loop running" in line:
                break
        if with_view:
            browser = Browser()
            browser.page.add_init_script(COUNT_FRAMES_JS)
            browser.open(f"http://127.0.0.1:{port}/{query}")
            browser.wait_text(r"t = [\d.]+ s", 150)
            if screenshot:  # while the stack runs (the page says "Connecting..." once it ends)
                browser.page.screenshot(path=screenshot)
            started, cpu0 = time.monotonic(), browser_cpu_seconds()
            n0 = browser.page.evaluate(FRAMES_JS)
            time.sleep(max(1.0, duration - 12.0))
            n1 = browser.page.evaluate(FRAMES_JS)
            cpu = (browser_cpu_seconds() - cpu0) / (time.monotonic() - started)
            span_s = (n1[2] - n0[2]) / 1000.0
            fps, drawn = (n1[0] - n0[0]) / span_s, (n1[1] - n0[1]) / span_s
            settings = browser.page.evaluate(PAGE_SETTINGS_JS)
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
            "p99_us": (s.get("latency_us") or {}).get("p99"), "page_fps": fps, "drawn_fps": drawn,
            "cpu": cpu,
            "load": os.getloadavg()[0], "outcome": s.get("outcome"), "settings": settings}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--domain", type=int, default=171)
    parser.add_argument("--screenshot", help="save the page (with the view) here")
    parser.add_argument("--query", default="", help="the page's URL query, e.g. '?fixedDpr=1' "
                        "(viser's fixed device pixel ratio; without one, the page draws at 0.5 "
                        "where WebGL is software: view/software_webgl.js)")
    args = parser.parse_args()
    if (why := browser_missing()) is not None:
        print(f"view_load: {why}", file=sys.stderr)
        return 1
    print("round  view  rate Hz  missed (%)        p99 µs  page fps  3D fps  browser CPU s/s  "
          "ms/3D frame  load  outcome  page")
    for r in range(args.rounds):
        for with_view in (False, True):
            m = run_stack(args.duration, with_view, args.domain, args.screenshot, args.query)
            print(f"{r:5d}  {'yes' if with_view else 'no ':4s}  {_f(m['rate_hz'], 7, 1)}  "
                  f"{m['missed']!s:>6} ({_f(m['missed_pct'], 5, 2)})  {_f(m['p99_us'], 7, 0)}  "
                  f"{_f(m['page_fps'], 8, 1)}  {_f(m['drawn_fps'], 6, 1)}  {_f(m['cpu'], 15, 2)}  "
                  f"{_f(per_frame(m), 11, 0)}  "
                  f"{m['load']:4.1f}  {m['outcome']}  {m['settings'] or ''}", flush=True)
            time.sleep(1.0)
    return 0


def per_frame(m: dict) -> float | None:
    """The browser's CPU milliseconds per frame of the 3D view drawn."""
    return 1000.0 * m["cpu"] / m["drawn_fps"] if m["cpu"] is not None and m["drawn_fps"] \
        else None


def _f(v, width: int, digits: int) -> str:
    return f"{v:{width}.{digits}f}" if isinstance(v, int | float) else f"{'—':>{width}}"


if __name__ == "__main__":
    sys.exit(main())
