"""Time robot_control's dynamics side by side with Pinocchio and Robotics Toolbox for Python.

    python bench/dynamics.py [--robots ur5 panda puma560] [--repeat N] [--json out.json]

For each robot and algorithm (inverse dynamics, mass matrix, Coriolis matrix, gravity torques,
forward dynamics) it prints the per-call time in µs — the median over ``--repeat`` timeit runs
after a warm-up, the libraries' runs interleaved — and the ratio to Pinocchio, plus each peer's
largest difference from our result on the same state (it says whether the peer's model is the
same robot).

Models each library uses:
- ur5, panda: the example-robot-data URDFs (installed with Pinocchio), loaded by all three.
  Pinocchio: ``buildModelFromUrdf``. rtb: ``URDF_file`` on the same file (rtb.models.UR5() and
  Panda() fetch their URDFs from GitHub at first use, which this offline machine cannot), i.e.
  the very class those constructors build. Panda has 9 joints in all three (fingers included).
- rtb-DH: rtb's own D-H model of the same arm (``rtb.models.DH.*``), whose RNE runs in C; it is a
  different parameter set (and the DH Panda has 7 joints), so its differences are not errors.
- puma560: ours is the bundled D-H model (config/robots/puma560.yaml). Pinocchio has no PUMA, so
  its model is built from ours joint by joint (bench/pin_bridge.py). rtb uses its D-H Puma560,
  the same Corke/Armstrong parameters, run with ``nofriction(True, True)``; it still adds the motor
  armature Jm·G² to M (ours leaves actuators to the plant), and our link 3 has izz raised to
  0.020 for physical consistency (see the YAML), so rtb differs by those terms.

rtb 1.5.0's ``coriolis()`` fails on URDF robots (``nofriction()`` copies the links, the copies'
parents are the original links, and ``rne`` looks them up with ``links.index``). The URDF
robots here have no friction, so the bench lets ``nofriction`` return the robot itself: the
timing is still rtb's algorithm (n²/2 RNE calls). Tables note every such workaround.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import sysconfig
import timeit
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from robot_control import dynamics as dyn  # noqa: E402
from robot_control.model import load_robot, load_urdf  # noqa: E402

ALGORITHMS = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "gravity", "forward_dynamics")
URDFS = {"ur5": "ur_description/urdf/ur5_robot.urdf", "panda": "panda_description/urdf/panda.urdf"}
RTB_DH = {"ur5": "UR5", "panda": "Panda", "puma560": "Puma560"}


@dataclass
class Impl:
    """One library's model of a robot: a callable per algorithm and how to read its results."""

    name: str
    model: str
    calls: dict[str, Callable[[], np.ndarray]]
    notes: list[str] = field(default_factory=list)
    comparable: bool = True  # same joints as ours, so results can be differenced


def example_robot_data() -> Path | None:
    for site in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        share = Path(site) / "cmeel.prefix" / "share" / "example-robot-data"
        if share.is_dir():
            return share
    return None


def state(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)


# ------------------------------------------------------------------------ the three libraries
def ours(model, q, qd, qdd) -> Impl:
    return Impl("robot_control", model.name, {
        "inverse_dynamics": lambda: dyn.inverse_dynamics(model, q, qd, qdd),
        "mass_matrix": lambda: dyn.mass_matrix(model, q),
        "coriolis_matrix": lambda: dyn.coriolis_matrix(model, q, qd),
        "gravity": lambda: dyn.gravity_torques(model, q),
        "forward_dynamics": lambda: dyn.forward_dynamics(model, q, qd, qdd),
    })


def pinocchio(robot: str, model, q, qd, qdd) -> Impl:
    import pinocchio as pin

    if robot in URDFS:
        pm = pin.buildModelFromUrdf(str(example_robot_data() / "robots" / URDFS[robot]))
        source = "same URDF"
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from pin_bridge import pinocchio_model

        pm = pinocchio_model(model)
        source = "built from our model (pin_bridge)"
    pm.gravity = pin.Motion(np.asarray(model.gravity, float), np.zeros(3))
    pd = pm.createData()
    idx = np.array([pm.joints[pm.getJointId(j)].idx_q for j in model.joint_names])
    Q, QD, QDD = (np.zeros(pm.nv) for _ in range(3))
    Q[idx], QD[idx], QDD[idx] = q, qd, qdd

    def full(M):  # crba fills the upper triangle only
        M = np.asarray(M).reshape(pm.nv, pm.nv)
        return (np.triu(M) + np.triu(M, 1).T)[np.ix_(idx, idx)]

    impl = Impl(f"pinocchio {pin.__version__}", source, {
        "inverse_dynamics": lambda: pin.rnea(pm, pd, Q, QD, QDD),
        "mass_matrix": lambda: pin.crba(pm, pd, Q),
        "coriolis_matrix": lambda: pin.computeCoriolisMatrix(pm, pd, Q, QD),
        "gravity": lambda: pin.computeGeneralizedGravity(pm, pd, Q),
        "forward_dynamics": lambda: pin.aba(pm, pd, Q, QD, QDD),
    })
    impl.read = {  # type: ignore[attr-defined]
        "inverse_dynamics": lambda x: np.asarray(x)[idx],
        "mass_matrix": full,
        "coriolis_matrix": lambda x: np.asarray(x).reshape(pm.nv, pm.nv)[np.ix_(idx, idx)],
        "gravity": lambda x: np.asarray(x)[idx],
        "forward_dynamics": lambda x: np.asarray(x)[idx],
    }
    return impl


def _rtb_calls(r, q, qd, qdd) -> dict[str, Callable[[], np.ndarray]]:
    return {
        "inverse_dynamics": lambda: r.rne(q, qd, qdd),
        "mass_matrix": lambda: r.inertia(q),
        "coriolis_matrix": lambda: r.coriolis(q, qd),
        "gravity": lambda: r.gravload(q),
        "forward_dynamics": lambda: r.accel(q, qd, qdd),
    }


def rtb_urdf(robot: str, model, q, qd, qdd) -> Impl:
    import roboticstoolbox as rtb
    from roboticstoolbox.models.URDF.URDFRobot import URDF_file
    from xacrodoc import packages

    share = example_robot_data()
    packages.update_package_cache({"example-robot-data": str(share)})  # for package:// meshes
    elinks, name, _ = URDF_file(share / "robots" / URDFS[robot])
    r = rtb.Robot(elinks, name=name)
    names = [link.name for link in r.links if link.isjoint]
    if names != model.body_names:
        raise RuntimeError(f"rtb joint order {names} differs from ours {model.body_names}")
    impl = Impl(f"rtb {rtb.__version__}", "same URDF (URDF_file)", _rtb_calls(r, q, qd, qdd))
    try:
        r.coriolis(q, qd)
    except ValueError:
        if any(np.any(link.B) or np.any(link.Tc) for link in r.links):
            raise
        r.nofriction = lambda *args, **kwargs: r  # the robot has no friction to remove
        impl.notes.append("coriolis: rtb nofriction() bug on URDF robots worked around")
    return impl


def rtb_dh(robot: str, model, q, qd, qdd) -> Impl:
    import roboticstoolbox as rtb

    r = getattr(rtb.models.DH, RTB_DH[robot])().nofriction(True, True)
    comparable = r.n == model.nq
    if not comparable:  # e.g. the DH Panda has no fingers: time it on its own state
        q, qd, qdd = state(r.n)
    armature = [link.Jm * link.G**2 for link in r.links]
    impl = Impl(f"rtb {rtb.__version__} DH", f"rtb.models.DH.{RTB_DH[robot]} ({r.n} joints)",
                _rtb_calls(r, q, qd, qdd), comparable=comparable)
    if any(armature):
        impl.notes.append("rtb DH model adds motor armature Jm·G² to M")
    return impl


# ----------------------------------------------------------------------------------- timing
def per_call_us(fns: list[Callable[[], object]], repeat: int, min_time: float) -> list[float]:
    """Median per-call µs of each callable over ``repeat`` rounds, interleaved.

    A round times every callable in turn, each for at least ``min_time`` s, so a burst of load
    on the shared machine hits all libraries alike instead of whichever was running then.
    """
    timers = [timeit.Timer(fn) for fn in fns]
    numbers = []
    for fn, timer in zip(fns, timers):
        for _ in range(3):
            fn()  # warm-up: JIT compilation, caches
        single = min(timer.repeat(repeat=3, number=1))
        numbers.append(max(1, math.ceil(min_time / max(single, 1e-9))))
    runs: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for timer, number, times in zip(timers, numbers, runs):
            times.append(timer.timeit(number) / number * 1e6)
    return [float(np.median(times)) for times in runs]


def bench_robot(robot: str, peers: list[str], repeat: int, min_time: float) -> list[dict]:
    if robot in URDFS:
        share = example_robot_data()
        if share is None:
            raise RuntimeError("example-robot-data is not installed (it comes with `pin`)")
        model = load_urdf(share / "robots" / URDFS[robot])
    else:
        model = load_robot(robot)
    q, qd, qdd = state(model.nq)
    impls = [ours(model, q, qd, qdd)]
    makers = {"pinocchio": lambda: pinocchio(robot, model, q, qd, qdd),
              "rtb": lambda: (rtb_urdf if robot in URDFS else rtb_dh)(robot, model, q, qd, qdd),
              "rtb-dh": lambda: rtb_dh(robot, model, q, qd, qdd) if robot in URDFS else None}
    for peer in peers:
        try:
            impl = makers[peer]()
        except ImportError as exc:
            print(f"# {robot}: {peer} skipped ({exc})", file=sys.stderr)
            continue
        if impl is not None:
            impls.append(impl)
    reference = {a: np.asarray(impls[0].calls[a]()) for a in ALGORITHMS}
    rows = []
    for alg in ALGORITHMS:
        timed = []
        for impl in impls:
            row = dict(robot=robot, nq=model.nq, algorithm=alg, library=impl.name,
                       model=impl.model, us_per_call=None, max_abs_diff_vs_ours=None)
            rows.append(row)
            try:
                result = getattr(impl, "read", {}).get(alg, np.asarray)(impl.calls[alg]())
                if impl.comparable:
                    row["max_abs_diff_vs_ours"] = float(
                        np.abs(np.asarray(result, float) - reference[alg]).max())
                timed.append((impl, row))
            except Exception as exc:  # a peer's failure is a result to report, not a crash
                impl.notes.append(f"{alg}: {type(exc).__name__}: {exc}")
        times = per_call_us([impl.calls[alg] for impl, _ in timed], repeat, min_time)
        for (_, row), us in zip(timed, times):
            row["us_per_call"] = us
    for impl in impls:
        for note in impl.notes:
            print(f"# {robot} / {impl.name}: {note}", file=sys.stderr)
    for alg in ALGORITHMS:
        base = next((r["us_per_call"] for r in rows
                     if r["algorithm"] == alg and r["library"].startswith("pinocchio")), None)
        for r in rows:
            if r["algorithm"] == alg:
                ok = base and r["us_per_call"]
                r["ratio_to_pinocchio"] = r["us_per_call"] / base if ok else None
    return rows


def print_table(rows: list[dict]) -> None:
    def cell(r: dict | None) -> str:
        if r is None:
            return f" | {'':>11} {'':>8} {'':>8}"
        us, ratio, diff = r["us_per_call"], r["ratio_to_pinocchio"], r["max_abs_diff_vs_ours"]
        return (f" | {'n/a' if us is None else f'{us:.1f}':>11}"
                f" {'n/a' if ratio is None else f'{ratio:.2f}':>8}"
                f" {'n/a' if diff is None else f'{diff:.1e}':>8}")

    libraries = list(dict.fromkeys(r["library"] for r in rows))
    head = f"{'robot':8} {'algorithm':17}" + "".join(
        f" | {lib[:29]:<29}" for lib in libraries)
    sub = f"{'':8} {'':17}" + "".join(f" | {'µs/call':>11} {'×pin':>8} {'|Δ|':>8}"
                                      for _ in libraries)
    print(head)
    print(sub)
    print("-" * len(sub))
    for robot in dict.fromkeys(r["robot"] for r in rows):
        for alg in ALGORITHMS:
            line = f"{robot:8} {alg:17}"
            for lib in libraries:
                line += cell(next((r for r in rows if r["robot"] == robot
                                   and r["algorithm"] == alg and r["library"] == lib), None))
            print(line)
    print("\nµs/call: median per call; ×pin: time / Pinocchio's; "
          "|Δ|: max |result − ours| on the same state")
    for robot in dict.fromkeys(r["robot"] for r in rows):
        models = dict.fromkeys((r["library"], r["model"]) for r in rows if r["robot"] == robot)
        print(f"{robot}: " + "; ".join(f"{lib}: {model}" for lib, model in models))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="+", default=["ur5", "panda", "puma560"])
    parser.add_argument("--peers", nargs="+", default=["pinocchio", "rtb", "rtb-dh"],
                        choices=["pinocchio", "rtb", "rtb-dh"])
    parser.add_argument("--repeat", type=int, default=15, help="interleaved timeit rounds (median is kept)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds each timeit run lasts at least")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    rows = []
    for robot in args.robots:
        rows += bench_robot(robot, args.peers, args.repeat, args.min_time)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
