"""Where a study's runs execute: this process, a local process pool, or a Dask scheduler.

Each yields the jobs' records as the runs finish (not in input order), so the caller can append
each to its results file at once. On a Dask cluster every run is one task: the robot files go to
the workers once (scattered), a task whose worker dies is moved to another by the scheduler (and
one that raises outside the run is retried ``retries`` times); a run that still cannot finish
comes back as a ``lost`` record, never as an exception that ends the study.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from robot_control.sim.batch import local_workers
from robot_control.sim.jobs import Job, RobotFile, lost_record, run_job

#: times Dask resubmits a task that raised (a run's own failure is a record, not an exception)
RETRIES = 3
#: seconds to wait for the scheduler to answer before giving up
CONNECT_TIMEOUT_S = 20


class ClusterError(RuntimeError):
    """The cluster cannot be used: Dask missing, or the scheduler unreachable."""


def run_local(jobs: list[Job], files: dict[str, RobotFile], workers: int | None,
              series: bool = False) -> Iterator[dict]:
    """Records of ``jobs`` run in this process (1 worker) or a process pool, as they finish."""
    if not jobs:
        return
    n = local_workers(workers, len(jobs))
    if n == 1:
        for job in jobs:
            yield run_job(job, files, series)
        return
    pool = ProcessPoolExecutor(max_workers=n)
    try:
        futures = {pool.submit(run_job, job, files, series): job for job in jobs}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # the pool's process died (e.g. killed): record it
                yield lost_record(futures[fut], exc)
    finally:  # stopped early (Ctrl-C): the runs not started are dropped, not waited for
        pool.shutdown(wait=True, cancel_futures=True)


def dask_client(address: str):
    """A Dask client connected to the scheduler at ``address`` (ClusterError if it cannot be)."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("--cluster needs Dask distributed: pip install 'dask[distributed]' "
                           "(or bash scripts/setup.sh cluster)") from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def run_batch(jobs: list[Job], files: dict[str, RobotFile] | None = None,
              series: bool = False) -> list[dict]:
    """The records of several runs made one after the other (one Dask task)."""
    return [run_job(job, files, series) for job in jobs]


def run_dask(jobs: list[Job], files: dict[str, RobotFile], address: str, series: bool = False,
             retries: int = RETRIES, batch: int = 1) -> Iterator[dict]:
    """Records of ``jobs`` run as tasks of the Dask scheduler at ``address`` (``batch`` runs a
    task: fewer tasks when runs are short against the scheduler's ~1 ms a task), as they finish."""
    if not jobs:
        return
    if batch < 1:
        raise ValueError(f"--batch must be ≥ 1, got {batch}")
    client = dask_client(address)
    from distributed import as_completed as dask_completed

    try:
        shared = client.scatter([files], broadcast=True)[0] if files else None
        chunks = [jobs[i:i + batch] for i in range(0, len(jobs), batch)]
        # pure=False: a run is a fresh task each time (its wall time is part of the record)
        futures = client.map(run_batch, chunks, files=shared, series=series, retries=retries,
                             pure=False)
        chunk_of = {fut.key: chunk for fut, chunk in zip(futures, chunks)}
        for fut in dask_completed(futures, loop=client.loop):
            try:
                yield from fut.result()
            except Exception as exc:  # KilledWorker after the scheduler's allowed failures
                for job in chunk_of[fut.key]:
                    yield lost_record(job, exc)
            fut.release()
    finally:
        client.close()


def run_jobs(jobs: list[Job], files: dict[str, RobotFile], cluster: str | None = None,
             workers: int | None = None, series: bool = False, batch: int = 1) -> Iterator[dict]:
    """Records of ``jobs`` on the Dask scheduler ``cluster`` (``batch`` runs a task), else on
    ``workers`` local processes."""
    if cluster:
        return run_dask(jobs, files, cluster, series, batch=batch)
    return run_local(jobs, files, workers, series)
