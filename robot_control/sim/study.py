"""A study: many jobs run (locally or on a Dask cluster), each record appended as it finishes,
the runs a results file already holds skipped, progress shown on a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from robot_control.sim.dispatch import run_jobs
from robot_control.sim.jobs import Job, RobotFile
from robot_control.sim.results_file import ResultsWriter, finished, read_records


def previous_records(jobs: list[Job], path: str | Path | None) -> dict[str, dict]:
    """The finished records of ``jobs`` a results file holds (key → record)."""
    if path is None:
        return {}
    records, _ = read_records(path)
    wanted = {job.key for job in jobs}
    return {key: rec for key, rec in finished(records).items() if key in wanted}


def run_study(jobs: list[Job], files: dict[str, RobotFile], out: str | Path | None = None,
              resume: bool = False, cluster: str | None = None, workers: int | None = None,
              series: bool = False, progress: bool = True, batch: int = 1,
              on_record: Callable[[dict], None] | None = None) -> list[dict]:
    """The record of every job, in input order: runs ``out`` already holds (with ``resume``)
    are taken from it, the others run and are appended to ``out`` (JSON Lines) as they finish
    (on a cluster, ``batch`` runs a task)."""
    done = previous_records(jobs, out) if resume else {}
    todo, seen = [], set(done)
    for job in jobs:  # a run twice in the list (same key) runs once
        if job.key not in seen:
            seen.add(job.key)
            todo.append(job)
    writer = ResultsWriter(out) if out is not None else None
    bar = None
    if progress and sys.stderr.isatty() and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(seen), initial=len(done), unit="run", file=sys.stderr,
                   dynamic_ncols=True, smoothing=0.1)
    try:
        for record in run_jobs(todo, files, cluster, workers, series, batch):
            if writer is not None:
                writer.write(record)
            done[record["key"]] = record
            if bar is not None:
                bar.update(1)
            if on_record is not None:
                on_record(record)
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    return [done[job.key] for job in jobs]
