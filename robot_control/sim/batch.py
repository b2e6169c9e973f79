"""Many offline runs at once: scenarios or parameter sets spread over worker processes.

Every run is the same ``simulate.run`` a one-by-one loop would make (each worker loads its
scenario from the document, builds its own models and plant), so the results are equal to
one-by-one runs; only the wall-clock fields of the summaries differ.
"""

from __future__ import annotations

import copy
import itertools
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from robot_control.foundation.safe_yaml import load_file
from robot_control.sim.scenario import Scenario, ScenarioError, resolve_scenario_path


def scenario_document(source) -> tuple[str, dict]:
    """(name, mapping) of a scenario file, bundled name, mapping or loaded Scenario."""
    if isinstance(source, Scenario):
        return source.name, copy.deepcopy(source.raw)
    if isinstance(source, dict):
        return "scenario", copy.deepcopy(source)
    path = resolve_scenario_path(source)
    doc = load_file(path, ScenarioError)
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: a scenario must be a YAML mapping")
    return Path(path).stem, doc


def with_overrides(doc: dict, overrides: dict) -> dict:
    """A copy of a scenario mapping with dotted keys replaced ("controller.params.kp": [...])."""
    out = copy.deepcopy(doc)
    for key, value in overrides.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ScenarioError(f"override '{key}': '{part}' is not a mapping")
            node = child
        node[parts[-1]] = copy.deepcopy(value)
    return out


def parameter_grid(grid: dict[str, list]) -> list[dict]:
    """Every combination of the values of ``grid`` (key → list of values), as override dicts."""
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def _run_one(job: tuple[str, dict]):
    from robot_control.sim.scenario import load_scenario
    from robot_control.sim.simulate import run

    name, doc = job
    try:
        sc = load_scenario(doc)
        sc.name = name
        return run(sc)
    except Exception as exc:  # not every error pickles back from a worker: send its text
        raise ScenarioError(f"{name}: {type(exc).__name__}: {exc}") from None


def local_workers(workers: int | None, jobs: int) -> int:
    """Worker processes for ``jobs`` local runs: ``workers``, or every CPU this process may use."""
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(int(workers or 1), jobs))


def simulate_batch(scenarios, overrides: list[dict] | None = None, workers: int | None = None):
    """Results of every scenario (× every override set, if given), in input order.

    ``scenarios``: files, bundled names, mappings or Scenario objects; ``overrides``: dotted-key
    replacements applied to each scenario in turn (see ``parameter_grid``). ``workers``: worker
    processes (default: the CPUs this process may use; 1 runs in this process).
    """
    jobs = []
    for source in scenarios:
        name, doc = scenario_document(source)
        for ov in overrides or [{}]:
            jobs.append((name, with_overrides(doc, ov)))
    workers = local_workers(workers, len(jobs))
    if workers == 1:
        return [_run_one(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_run_one, jobs))
