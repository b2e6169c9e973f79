"""A study's results file (JSON Lines): one record per run, appended and flushed as it finishes.

A study that stops (killed, machine down) keeps every run that finished; ``--resume`` reads the
file back and skips the runs whose key has an ``ok`` or ``failed`` record (a failure is a result:
the same run fails again). A ``lost`` run (its workers kept dying) is run again, and a line cut
short by a stop mid-write is ignored.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from robot_control.sim.jobs import FAILED, OK

#: most seconds a written record waits for its fsync (to survive a power cut, not just a kill)
FSYNC_S = 1.0


def read_records(path: str | Path) -> tuple[list[dict], int]:
    """The records of a results file (none if it does not exist) and how many lines were unreadable."""
    path = Path(path)
    if not path.is_file():
        return [], 0
    records, bad = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(record, dict) and "key" in record:
            records.append(record)
        else:
            bad += 1
    return records, bad


def finished(records: list[dict]) -> dict[str, dict]:
    """The latest ``ok`` or ``failed`` record of each run key (what ``--resume`` skips)."""
    return {r["key"]: r for r in records if r.get("status") in (OK, FAILED)}


class ResultsWriter:
    """Appends records to a JSON Lines file, each flushed to disk when written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        last = b"\n"
        if self.path.is_file() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                last = fh.read(1)
        self.fh = open(self.path, "a", encoding="utf-8")
        self.synced = time.monotonic()
        if last != b"\n":  # a line cut short by a stop mid-write: start on a line of our own
            self.fh.write("\n")

    def write(self, record: dict) -> None:
        """Append one record: in the OS's hands at once (a killed study keeps it), on the disk
        within FSYNC_S (an fsync a record, ~3 ms, would cap a study at ~300 runs/s)."""
        self.fh.write(json.dumps(record) + "\n")
        self.fh.flush()
        now = time.monotonic()
        if now - self.synced >= FSYNC_S:
            os.fsync(self.fh.fileno())
            self.synced = now

    def close(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
