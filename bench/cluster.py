"""Sweeps on a Dask cluster (issue 38): a sweep of 8 PUMA runs on 1 and on 2 Dask workers, and
what the scheduler costs a task.

    python bench/cluster.py [--duration S] [--repeat N] [--tasks N] [--json out.json]

Two schedulers with their workers over TCP on 127.0.0.1 (distributed.LocalCluster, one thread a
worker process: 1 worker, 2 workers), every worker warmed (its first run loads the compiled
kernels from the cache); then, round after round (``--repeat``), the 8 runs one by one in this
process, on the 1-worker cluster and on the 2-worker cluster, each timed end to end as
``robot-control sweep --cluster`` runs it (client connected, tasks submitted, records gathered):
the cases take turns so that a neighbour's burst of load hits all three. Best and worst of the
rounds are printed. The scheduler's cost: ``--tasks`` no-op tasks submitted at once on a
2-worker cluster, wall time / tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import ExitStack
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


def warmed_cluster(jobs, files, workers: int, stack: ExitStack) -> str:
    """The address of a LocalCluster of ``workers`` processes, each with the kernels loaded."""
    cluster = stack.enter_context(LocalCluster(processes=True, n_workers=workers,
                                               threads_per_worker=1, host="127.0.0.1",
                                               dashboard_address="127.0.0.1:0"))
    warm = make_jobs([jobs[0].document | {"duration": 0.05}], [{}])[0][0]
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.run(run_job, warm, files)  # on every worker: kernels loaded from the cache
    return cluster.scheduler_address


def timed(sweep) -> float:
    """Wall seconds of one sweep (a callable returning its records; every run must be ok)."""
    t0 = time.perf_counter()
    records = list(sweep())
    wall = time.perf_counter() - t0
    assert all(r["status"] == "ok" for r in records), records
    return wall


def task_overhead(tasks: int) -> float:
    """Seconds per no-op task of a batch submitted at once (2 workers)."""
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster.scheduler_address, set_as_default=False) as client:
        client.gather(client.map(noop, range(50), pure=False))
        t0 = time.perf_counter()
        client.gather(client.map(noop, range(tasks), pure=False))
        return (time.perf_counter() - t0) / tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds a run")
    parser.add_argument("--tasks", type=int, default=2000, help="no-op tasks for the overhead")
    parser.add_argument("--repeat", type=int, default=3, help="sweeps a case (best and worst)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    doc = puma_10s() | {"duration": args.duration}
    jobs, files = make_jobs([doc], parameter_grid(GRID))
    list(run_local(jobs[:1], files, workers=1))  # compile / load the kernels here
    walls: dict[str, list[float]] = {"serial": [], "dask_1": [], "dask_2": []}
    with ExitStack() as stack:
        addresses = {w: warmed_cluster(jobs, files, w, stack) for w in (1, 2)}
        t0 = time.perf_counter()
        dask_client(addresses[2]).close()
        connect = time.perf_counter() - t0
        # the cases take turns, round after round: a neighbour's burst of load hits all three
        for _ in range(args.repeat):
            walls["serial"].append(timed(lambda: run_local(jobs, files, workers=1)))
            for w in (1, 2):
                walls[f"dask_{w}"].append(timed(lambda w=w: run_dask(jobs, files, addresses[w])))
    per_run = min(walls["serial"]) / len(jobs)
    rows = {"runs": len(jobs), "duration_s": args.duration, "per_run_s": per_run,
            "connect_s": connect, "walls": walls}
    print(f"{len(jobs)} puma560 runs of {args.duration:g} s, {args.repeat} rounds, best (worst): "
          f"{per_run * 1e3:.0f} ms a run ({args.duration / per_run:.0f}× real time); "
          f"connecting and closing a client {connect:.3f} s")
    for case, label in (("serial", "one by one in this process"), ("dask_1", "Dask, 1 worker"),
                        ("dask_2", "Dask, 2 workers")):
        best, worst = min(walls[case]), max(walls[case])
        rows[f"{case}_s"] = best
        print(f"  {label:28} {best:6.2f} s ({worst:.2f} s)  {len(jobs) / best:.2f} runs/s")
    rows["speedup_2_vs_1"] = rows["dask_1_s"] / rows["dask_2_s"]
    rows["speedup_2_vs_1_rounds"] = [a / b for a, b in zip(walls["dask_1"], walls["dask_2"])]
    rows["scheduler_s_per_task"] = task_overhead(args.tasks)
    rounds = ", ".join(f"{x:.2f}" for x in rows["speedup_2_vs_1_rounds"])
    print(f"  2 workers vs 1: {rows['speedup_2_vs_1']:.2f}× best to best (rounds: {rounds}); "
          f"scheduler: "
          f"{rows['scheduler_s_per_task'] * 1e6:.0f} µs a no-op task ({args.tasks} at once)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
