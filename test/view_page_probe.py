"""A page of ``robot-control view`` checked in headless Chromium from another Python (the ROS 2
suite runs on the system Python, Playwright is in the project's venv):

    python test/view_page_probe.py URL PATTERN [TIMEOUT_S]

Prints the page's first match of the regular expression and exits 0; else what the page shows
instead (or why no browser can run) and exits 1. Console errors and requests leaving the machine
fail it too."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from view_helpers import Browser, browser_missing  # noqa: E402


def main(argv: list[str]) -> int:
    url, pattern = argv[0], argv[1]
    timeout_s = float(argv[2]) if len(argv) > 2 else 120.0
    if (why := browser_missing()) is not None:
        print(f"view_page_probe: {why}")
        return 1
    browser = Browser()
    try:
        browser.open(url)
        try:
            found = browser.wait_text(pattern, timeout_s)
        except AssertionError as exc:
            print(exc)
            return 1
        print(f"found: {found[0]}")
        problems = browser.errors + sorted(h for h in browser.hosts if h not in ("127.0.0.1", ""))
        if problems:
            print(f"console errors or requests off the machine: {problems}")
            return 1
        return 0
    finally:
        browser.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
