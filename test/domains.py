"""ROS domain ids for multi-process tests that no other run on this machine is using.

Domain ids derived from a pid collide now and then between two pytest runs (CI and a developer,
or two xdist workers), and then the tests hear each other's nodes. Here every id is claimed
with an exclusive ``flock`` on a file in a directory all runs share; the lock lives as long as
the claiming process (or until ``release``), so a crashed run frees its ids by itself.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import zlib
from pathlib import Path

FIRST, LAST = 1, 200  # rmw_cyclonedds accepts 0…232; 0 is everybody's default domain
LOCK_DIR = Path(tempfile.gettempdir()) / "robot_control_test_domains"

_held: dict[int, int] = {}  # domain id -> open lock file descriptor
_by_tag: dict[str, int] = {}


def claim(tag: str = "") -> int:
    """A domain id held by this process alone (the same one again for the same tag)."""
    if tag and tag in _by_tag:
        return _by_tag[tag]
    LOCK_DIR.mkdir(exist_ok=True)
    span = LAST - FIRST + 1
    start = (os.getpid() + zlib.crc32(tag.encode())) % span
    for i in range(span):
        domain = FIRST + (start + i) % span
        if domain in _held:
            continue
        fd = os.open(LOCK_DIR / f"{domain}.lock", os.O_CREAT | os.O_RDWR, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held[domain] = fd
        if tag:
            _by_tag[tag] = domain
        return domain
    raise RuntimeError(f"every test ROS domain {FIRST}…{LAST} is in use on this machine")


def held() -> set[int]:
    """The ids this process holds."""
    return set(_held)


def release(domain: int) -> None:
    """Give a claimed id back (tags that named it forget it)."""
    fd = _held.pop(domain, None)
    if fd is not None:
        os.close(fd)  # closing drops the flock
    for tag in [t for t, d in _by_tag.items() if d == domain]:
        del _by_tag[tag]
