"""Runs that travel: a scenario document with the robot files it names, run anywhere, recorded.

A sweep's or a Monte Carlo study's run may execute on another machine (a Dask worker), which has
the package but none of the user's files. So a job carries the scenario as a mapping (its YAML,
already read) and the robot description files it names by path (their contents); the worker
writes those contents into its cache directory (content-addressed, so every run of a study reuses
one copy and the model cache keeps its entry) and runs the document pointing at them. A run ends
as a record — a JSON-ready dict with the run's key, overrides, seed, summary, saturation counts
and the worker that ran it — whether it succeeded or failed (a refused scenario, a diverging
plant: ``status: failed`` with the reason), so one bad run never stops a study.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_control.sim.batch import scenario_document, with_overrides

#: record status of a run that finished / that raised / whose worker was lost beyond retries
OK, FAILED, LOST = "ok", "failed", "lost"


@dataclass(frozen=True)
class RobotFile:
    """A robot description file's name and contents, and its parameter groups' (if beside it)."""

    name: str
    text: str
    groups: str | None = None

    def digest(self) -> str:
        """Content digest: where the worker stores it, and part of a run's key."""
        return hashlib.sha1(f"{self.name}\0{self.text}\0{self.groups}".encode()).hexdigest()[:16]


@dataclass
class Job:
    """One run: scenario name, its document (overrides applied), the overrides, extra record
    fields (e.g. a Monte Carlo sample's index and seed) and its key."""

    scenario: str
    document: dict
    overrides: dict
    extra: dict = field(default_factory=dict)
    key: str = ""


def robot_references(doc: dict) -> list[tuple[tuple[str, ...], str]]:
    """The (location in the document, text) of every robot reference a scenario may hold."""
    out = []
    if isinstance(doc.get("robot"), str):
        out.append((("robot",), doc["robot"]))
    ctrl = doc.get("controller")
    if isinstance(ctrl, dict) and isinstance(ctrl.get("model"), str):
        out.append((("controller", "model"), ctrl["model"]))
    return out


def robot_files(doc: dict) -> dict[str, RobotFile]:
    """The contents of the robot files a document names by path (bundled names travel as names)."""
    files = {}
    for _, ref in robot_references(doc):
        path = Path(ref)
        if ref.lstrip().startswith("<") or not path.is_file():
            continue  # URDF text or a bundled robot's name: every worker resolves it itself
        groups = path.with_suffix(".groups.yaml")
        files[ref] = RobotFile(path.name, path.read_text(encoding="utf-8"),
                               groups.read_text(encoding="utf-8") if groups.is_file() else None)
    return files


def run_key(scenario: str, document: dict, files: dict[str, RobotFile], extra: dict) -> str:
    """A digest of everything a run is computed from (what ``--resume`` matches on)."""
    used = {ref: files[ref].digest() for _, ref in robot_references(document) if ref in files}
    text = json.dumps([scenario, document, used, extra], sort_keys=True, default=repr)
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def make_jobs(sources, overrides: list[dict], extras: list[dict] | None = None
              ) -> tuple[list[Job], dict[str, RobotFile]]:
    """The jobs of every scenario × every override set (with ``extras[i]`` beside overrides[i]),
    and the robot files they name."""
    jobs, files = [], {}
    for source in sources:
        name, doc = scenario_document(source)
        files |= robot_files(doc)
        for i, ov in enumerate(overrides or [{}]):
            extra = dict(extras[i]) if extras else {}
            final = with_overrides(doc, ov)
            files |= robot_files(final)  # an override may name a robot file too
            jobs.append(Job(name, final, ov, extra, run_key(name, final, files, extra)))
    return jobs, files


def materialise(document: dict, files: dict[str, RobotFile], folder: Path | None = None) -> dict:
    """The document with its robot paths replaced by local copies of the files' contents."""
    if not files:
        return document
    if folder is None:
        from robot_control.dynamics.compile_cache import user_cache_dir

        folder = user_cache_dir() / "job_files"
    doc = copy.deepcopy(document)
    for where, ref in robot_references(doc):
        robot = files.get(ref)
        if robot is None:
            continue
        target = folder / robot.digest() / Path(robot.name).name  # a name, never a path
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            if robot.groups is not None:
                _write_atomic(target.with_suffix(".groups.yaml"), robot.groups)
            _write_atomic(target, robot.text)
        node = doc
        for part in where[:-1]:
            node = node[part]
        node[where[-1]] = str(target)
    return doc


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename: a concurrent reader sees all or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def worker_name() -> str:
    """The Dask worker's address running this, else host:pid of this process."""
    dist = sys.modules.get("distributed")
    if dist is not None:
        try:
            return str(dist.get_worker().address)
        except ValueError:  # not inside a Dask worker
            pass
    return f"{socket.gethostname()}:{os.getpid()}"


def noise_seed(document: dict):
    """The plant's sensor-noise seed of a run (None when the plant has no noise)."""
    noise = (document.get("plant") or {}).get("noise")
    return noise.get("seed", 0) if isinstance(noise, dict) else None


def base_record(job: Job) -> dict:
    """The fields every record of a job has, whatever became of the run."""
    return {"key": job.key, "scenario": job.scenario, "overrides": job.overrides,
            "seed": noise_seed(job.document), **job.extra}


def saturated_periods(result) -> list[int]:
    """Control periods per joint where the plant clipped the law's torque (|τ| limit)."""
    if result.tau_command is None:
        return [0] * result.tau.shape[1]
    clipped = ~np.isclose(result.tau, result.tau_command, rtol=0.0, atol=1e-12)
    return clipped.sum(axis=0).astype(int).tolist()


def run_job(job: Job, files: dict[str, RobotFile] | None = None, series: bool = False) -> dict:
    """Run one job here and return its record (a failed run is a record with the reason)."""
    from robot_control.sim.scenario import load_scenario
    from robot_control.sim.simulate import run

    record = base_record(job) | {"worker": worker_name()}
    try:
        sc = load_scenario(materialise(job.document, files or {}))
        sc.name = job.scenario
        result = run(sc)
    except Exception as exc:  # the run's own failure: recorded, the study goes on
        return record | {"status": FAILED, "error": f"{type(exc).__name__}: {exc}"}
    summary = result.summary
    bad = [k for k in ("rms_error", "max_error", "max_torque")
           if not np.all(np.isfinite(summary[k]))]
    record |= {"summary": summary, "saturated_periods": saturated_periods(result)}
    if bad:
        return record | {"status": FAILED, "error": f"non-finite {', '.join(bad)}"}
    record["status"] = OK
    if series:
        record["series"] = result.series()
    return record


def lost_record(job: Job, exc: BaseException) -> dict:
    """The record of a run whose workers kept dying (Dask gave up after its retries)."""
    return base_record(job) | {"status": LOST, "worker": None,
                               "error": f"{type(exc).__name__}: {exc}"}
