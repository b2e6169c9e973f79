"""Sweeps on a Dask cluster (issue 38): a sweep of 8 PUMA runs on 1 and on 2 Dask workers, and
what the scheduler costs a task.

    python bench/cluster.py [--duration S] [--tasks N] [--json out.json]

Each case starts its own scheduler and workers over TCP on 127.0.0.1 (distributed.LocalCluster,
one thread a worker process), warms every worker (its first run loads the compiled kernels from
the cache), then times the sweep end to end as ``robot-control sweep --cluster`` runs it
(jobs built, robot files scattered, tasks submitted, records gathered). The same 8 runs one by one
in this process give the per-run cost. The scheduler's cost: ``--tasks`` no-op tasks submitted
at once on the 2-worker cluster, wall time / tasks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from distributed import Client, LocalCluster  # noqa: E402
from simulate import puma_10s  # noqa: E402

from robot_control.sim.batch import parameter_grid  # noqa: E402
from robot_control.sim.dispatch import dask_client, run_dask, run_local  # noqa: E402
from robot_control.sim.jobs import make_jobs, run_job  # noqa: E402

GRID = {"controller.params.kp": [80, 120], "controller.params.kd": [15, 25],
        "plant.noise": [{"position": 1e-5, "seed": 1}, {"position": 1e-5, "seed": 2}]}


def noop(x: int) -> int:
    return x


def timed_sweep(jobs, files, workers: int) -> tuple[float, float, list[dict]]:
    """Wall seconds of the sweep on a fresh cluster of ``workers`` processes (warmed first), of
    which a client's connection to the scheduler and its close, and the records."""
    with LocalCluster(processes=True, n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        warm = make_jobs([jobs[0].document | {"duration": 0.05}], [{}])[0][0]
        with Client(cluster.scheduler_address, set_as_default=False) as client:
            client.run(run_job, warm, files)  # on every worker: kernels loaded from the cache
        t0 = time.perf_counter()
        dask_client(cluster.scheduler_address).close()
        connect = time.perf_counter() - t0
        t0 = time.perf_counter()
        records = list(run_dask(jobs, files, cluster.scheduler_address))
        return time.perf_counter() - t0, connect, records


def task_overhead(tasks: int) -> float:
    """Seconds per no-op task of a batch submitted at once (2 workers)."""
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster, \
            Client(cluster.scheduler_address, set_as_default=False) as client:
        client.gather(client.map(noop, range(50), pure=False))
        t0 = time.perf_counter()
        client.gather(client.map(noop, range(tasks), pure=False))
        return (time.perf_counter() - t0) / tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds a run")
    parser.add_argument("--tasks", type=int, default=2000, help="no-op tasks for the overhead")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    doc = puma_10s() | {"duration": args.duration}
    jobs, files = make_jobs([doc], parameter_grid(GRID))
    list(run_local(jobs[:1], files, workers=1))  # compile / load the kernels here
    t0 = time.perf_counter()
    serial = list(run_local(jobs, files, workers=1))
    serial_s = time.perf_counter() - t0
    per_run = statistics.mean(r["summary"]["wall_time_s"] for r in serial)
    rows = {"runs": len(jobs), "duration_s": args.duration, "serial_s": serial_s,
            "per_run_s": per_run}
    print(f"{len(jobs)} puma560 runs of {args.duration:g} s: one by one in this process "
          f"{serial_s:.2f} s ({per_run * 1e3:.0f} ms a run, {args.duration / per_run:.0f}× real time)")
    for workers in (1, 2):
        wall, connect, records = timed_sweep(jobs, files, workers)
        assert all(r["status"] == "ok" for r in records), records
        rows[f"dask_{workers}_s"], rows[f"connect_{workers}_s"] = wall, connect
        print(f"  Dask, {workers} worker{'s' if workers > 1 else ''}: {wall:.2f} s "
              f"({len(jobs) / wall:.2f} runs/s; of which {connect:.2f} s connecting and closing)")
    rows["speedup_2_vs_1"] = rows["dask_1_s"] / rows["dask_2_s"]
    rows["scheduler_s_per_task"] = task_overhead(args.tasks)
    print(f"  2 workers vs 1: {rows['speedup_2_vs_1']:.2f}×; scheduler: "
          f"{rows['scheduler_s_per_task'] * 1e6:.0f} µs a no-op task ({args.tasks} at once)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
