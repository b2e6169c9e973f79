"""Monte Carlo robustness: a scenario run many times on perturbed plants, and its error statistics.

Each sample perturbs the *plant* (``plant:`` keys of the scenario, sim/plant_config.py): link
inertial parameters scaled (``inertia_scale``), a payload at the last link, friction, sensor
noise; the controller keeps its own model (``controller.model`` or the nominal robot), so the
runs show what model error does to the law. Sample k's draws come from a generator seeded by
(seed, k) alone, all drawn in a fixed order whichever perturbations are asked for: the same seed
gives the same samples on any machine, any cluster, in any order, resumed or not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_control.model.robot_model import RobotModel


@dataclass(frozen=True)
class Perturbation:
    """How far each sample's plant departs from the scenario's."""

    mass_error: float = 0.0  # each link's 10 inertial parameters × U(1 − e, 1 + e)
    payload: float = 0.0  # kg: a point mass U(0, payload) added at the last link's frame
    friction_error: float = 0.0  # the nominal viscous, Coulomb, static × U(1 − e, 1 + e)
    friction: tuple[float, float] = (0.0, 0.0)  # unmodelled viscous, Coulomb: + U(0, b) each
    noise: tuple[float, float] = (0.0, 0.0)  # sensor noise σ of q (rad) and q̇ (rad/s)

    def check(self) -> None:
        """ValueError naming the option out of range."""
        if not 0.0 <= self.mass_error < 1.0:
            raise ValueError(f"--mass-error must be in [0, 1), got {self.mass_error}")
        if not 0.0 <= self.friction_error < 1.0:
            raise ValueError(f"--friction-error must be in [0, 1), got {self.friction_error}")
        for name, values in (("--payload", (self.payload,)), ("--friction", self.friction),
                             ("--noise", self.noise)):
            if not all(np.isfinite(v) and v >= 0.0 for v in values):
                raise ValueError(f"{name} must be ≥ 0, got {', '.join(map(str, values))}")


def sample_generator(seed: int, k: int) -> np.random.Generator:
    """Sample k's generator: PCG64 from the SeedSequence of (seed, k)."""
    return np.random.default_rng([int(seed), int(k)])


def _scaled(value, factor: np.ndarray) -> list[float]:
    """A per-joint value of the scenario (a number or a list) times per-joint factors."""
    return (np.broadcast_to(np.asarray(value, dtype=float), factor.shape) * factor).tolist()


def nominal_friction(plant: dict, model: RobotModel) -> dict:
    """The plant's friction (viscous, coulomb, static, stribeck_velocity per joint): the
    scenario's ``plant.friction`` or else the robot description's."""
    cfg = plant.get("friction")
    n = model.nq
    if cfg is None:
        f = np.asarray(model.friction, dtype=float).reshape(n, 4)
        return {"viscous": f[:, 0].tolist(), "coulomb": f[:, 1].tolist(),
                "static": f[:, 2].tolist(), "stribeck_velocity": f[:, 3].tolist()}

    def column(key, default):
        return np.broadcast_to(np.asarray(cfg.get(key, default), dtype=float), (n,)).tolist()

    coulomb = column("coulomb", 0.0)
    return {"viscous": column("viscous", 0.0), "coulomb": coulomb,
            "static": column("static", coulomb), "stribeck_velocity": column("stribeck_velocity", 0.01)}


def sample_overrides(doc: dict, model: RobotModel, spec: Perturbation, seed: int, k: int) -> dict:
    """The ``plant.*`` overrides of sample k (only the keys ``spec`` perturbs)."""
    rng = sample_generator(seed, k)
    n = model.nq
    # every draw is made, in this order, whatever is asked: sample k's mass draw does not
    # depend on whether a payload is drawn too
    u_mass = rng.uniform(-1.0, 1.0, n)
    u_payload = rng.uniform()
    u_friction = rng.uniform(-1.0, 1.0, (2, n))
    u_added = rng.uniform(0.0, 1.0, (2, n))
    noise_seed = int(rng.integers(2**31 - 1))
    plant = doc.get("plant") or {}
    out: dict = {}
    if spec.mass_error > 0.0:
        out["plant.inertia_scale"] = _scaled(plant.get("inertia_scale", 1.0),
                                             1.0 + spec.mass_error * u_mass)
    if spec.payload > 0.0:
        base = dict(plant.get("payload") or {})
        base["mass"] = float(base.get("mass", 0.0)) + spec.payload * u_payload
        out["plant.payload"] = base
    if spec.friction_error > 0.0 or any(spec.friction):
        f = nominal_friction(plant, model)
        viscous = np.asarray(f["viscous"]) * (1.0 + spec.friction_error * u_friction[0])
        scale = 1.0 + spec.friction_error * u_friction[1]
        extra = spec.friction[1] * u_added[1]
        out["plant.friction"] = {
            "viscous": (viscous + spec.friction[0] * u_added[0]).tolist(),
            "coulomb": (np.asarray(f["coulomb"]) * scale + extra).tolist(),
            "static": (np.asarray(f["static"]) * scale + extra).tolist(),
            "stribeck_velocity": f["stribeck_velocity"],
        }
    if any(spec.noise) or plant.get("noise"):
        noise = dict(plant.get("noise") or {})
        if any(spec.noise):
            noise["position"], noise["velocity"] = spec.noise
        noise["seed"] = noise_seed  # independent sensor noise in every sample
        out["plant.noise"] = noise
    return out


#: the per-joint summary entries the statistics are taken of
MEASURES = ("max_error", "rms_error", "max_torque")


def statistics(records: list[dict]) -> dict:
    """p50 / p95 / max over the samples of each joint's max and rms error and peak torque,
    saturation counts, and the failures with their reasons."""
    ok = [r for r in records if r.get("status") == "ok"]
    failed = [r for r in records if r.get("status") != "ok"]
    out: dict = {"samples": len(records), "ok": len(ok), "failed": len(failed),
                 "failures": sorted({r.get("error", "?") for r in failed})}
    if not ok:
        return out
    out["joints"] = ok[0]["summary"]["joints"]
    for measure in MEASURES:
        a = np.array([r["summary"][measure] for r in ok])
        out[measure] = {"p50": np.percentile(a, 50, axis=0).tolist(),
                        "p95": np.percentile(a, 95, axis=0).tolist(),
                        "max": a.max(axis=0).tolist()}
    sat = np.array([r["saturated_periods"] for r in ok])
    out["saturated_runs"] = (sat > 0).sum(axis=0).astype(int).tolist()
    out["saturated_periods_max"] = sat.max(axis=0).astype(int).tolist()
    return out


def statistics_table(stats: dict) -> str:
    """The statistics as a text table, a row per joint."""
    lines = [f"{stats['samples']} samples: {stats['ok']} ok, {stats['failed']} failed"]
    if "joints" in stats:
        head = (f"{'joint':<12}" + "".join(f"{m + ' ' + p:>16}" for m in ("max|e|", "rms e")
                                         for p in ("p50", "p95", "max"))
                + f"{'max|τ| p95':>12}{'saturated':>11}")
        lines.append(head)
        for j, name in enumerate(stats["joints"]):
            row = "".join(f"{stats[m][p][j]:16.4g}" for m in ("max_error", "rms_error")
                          for p in ("p50", "p95", "max"))
            lines.append(f"{name:<12}{row}{stats['max_torque']['p95'][j]:12.4g}"
                         f"{stats['saturated_runs'][j]:>6}/{stats['ok']:<4}")
    for reason in stats["failures"]:
        lines.append(f"failed: {reason}")
    return "\n".join(lines)


def plot_statistics(records: list[dict], path: str, title: str = "") -> None:
    """Box plots with the samples over them: max |e|, rms e and max |τ| of each joint."""
    from robot_control.sim.report import _pyplot

    plt = _pyplot()
    ok = [r for r in records if r.get("status") == "ok"]
    if not ok:
        raise ValueError("no sample ran to the end: nothing to plot")
    joints = ok[0]["summary"]["joints"]
    fig, axes = plt.subplots(len(MEASURES), 1, figsize=(max(6.0, 1.2 * len(joints)), 8.0),
                             sharex=True)
    jitter = np.random.default_rng(0).uniform(-0.15, 0.15, len(ok))
    for ax, measure, label in zip(axes, MEASURES, ("max |e| (rad)", "rms e (rad)", "max |τ| (N·m)")):
        a = np.array([r["summary"][measure] for r in ok])
        ax.boxplot(a, showfliers=False)
        for j in range(a.shape[1]):
            ax.plot(j + 1 + jitter, a[:, j], ".", alpha=0.4, markersize=3)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[-1].set_xticks(range(1, len(joints) + 1), joints)
    axes[0].set_title(title or f"{len(ok)} samples")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
