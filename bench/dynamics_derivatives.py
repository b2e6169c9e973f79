"""Time the analytic derivatives and constrained forward dynamics against Pinocchio.

    python bench/dynamics_derivatives.py [--robots ur5 panda] [--repeat N] [--json out.json]

For UR5 and Panda (example-robot-data URDFs, loaded by both libraries; Panda has 9 joints,
fingers included) it prints, per algorithm, our per-call time in µs through the public
Python API, Pinocchio's, their ratio, and the largest difference between the two results:

- inverse_dynamics_derivatives, method "carpentier" (the default: Carpentier & Mansard's one
  forward and one backward pass in base coordinates, what Pinocchio does) and method "kim"
  (Kim Table 5 + composite-body M) vs computeRNEADerivatives;
- forward_dynamics_derivatives, method "kim" (Table 6, the ABA's own tangent recursion) and
  method "rnea" (the default: −M⁻¹ ∂ID at q̈ = FD with Cholesky solves, as Pinocchio) vs
  computeABADerivatives;
- hybrid_dynamics_derivatives with every other joint prescribed (Table 7; Pinocchio has no
  hybrid dynamics, so it is timed against computeABADerivatives for scale);
- constrained_forward_dynamics with a 3-D point contact on the last link (constraint rows,
  one ABA, 3 no-bias passes, a 3 × 3 Cholesky, all one compiled call) vs
  pin.constraintDynamics with the same CONTACT_3D model (LOCAL_WORLD_ALIGNED) and vs
  pin.forwardDynamics(q, v, τ, J, γ), which is handed our J and γ (so their cost is not in
  its time) and runs computeAllTerms plus a dense KKT solve.

Times are medians over ``--repeat`` alternating runs of both libraries (the machines are
shared: alternating keeps a burst of load from favouring one side).
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from robot_control.dynamics.constrained import constrained_forward_dynamics  # noqa: E402
from robot_control.dynamics.contact import (  # noqa: E402
    Constraint,
    ConstraintSet,
    frame_world_placement,
    selection,
)
from robot_control.dynamics.derivatives import (  # noqa: E402
    forward_dynamics_derivatives,
    hybrid_dynamics_derivatives,
    inverse_dynamics_derivatives,
)
from robot_control.model import load_urdf  # noqa: E402

URDFS = {"ur5": "ur_description/urdf/ur5_robot.urdf", "panda": "panda_description/urdf/panda.urdf"}


def example_robot_data() -> Path | None:
    for site in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        robots = Path(site) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    return None


def per_call_us(f: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        f()
    return (time.perf_counter() - t0) / number * 1e6


def race(ours: Callable[[], object], theirs: Callable[[], object], repeat: int,
         budget_s: float = 0.02) -> tuple[float, float]:
    """Median per-call µs of both callables, timed in alternating batches after a warm-up."""
    ours()
    theirs()
    number = max(10, int(budget_s / max(per_call_us(ours, 10), per_call_us(theirs, 10)) * 1e6))
    a, b = [], []
    for _ in range(repeat):
        a.append(per_call_us(ours, number))
        b.append(per_call_us(theirs, number))
    return float(np.median(a)), float(np.median(b))


def contact_models(pin, pm, jid: int, X: np.ndarray):
    cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid, pin.SE3(X),
                                  pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    models = pin.StdVec_RigidConstraintModel()
    models.append(cm)
    datas = pin.StdVec_RigidConstraintData()
    datas.append(cm.createData())
    return models, datas


def bench_robot(name: str, path: Path, repeat: int) -> list[dict]:
    import pinocchio as pin

    model = load_urdf(path)
    n = model.nq
    pm = pin.buildModelFromUrdf(str(path))
    pm.gravity.linear[:] = model.gravity
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, qd, qdd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(4))
    u = np.arange(n) % 2 == 0

    body = n - 1 if name == "ur5" else 6  # UR5 wrist_3_link, Panda link7
    X = np.eye(4)
    X[:3, 3] = [0.0, 0.0, 0.05]
    anchor = frame_world_placement(model, q, body, X)
    anchor[:3, :3] = np.eye(3)
    contact = ConstraintSet(Constraint("contact", body, X, -1, anchor, selection("3d")))
    from robot_control.dynamics.contact import constraint_terms

    J, gamma, _ = constraint_terms(model, q, qd, contact)
    models, datas = contact_models(pin, pm, pm.getJointId(model.joint_names[body]), X)
    pin.initConstraintDynamics(pm, pd, models, datas)

    def sym(M):
        return np.triu(M) + np.triu(M, 1).T

    def diff_rnea(method):
        ours = inverse_dynamics_derivatives(model, q, qd, qdd, method=method)
        theirs = pin.computeRNEADerivatives(pm, pd, q, qd, qdd)
        return max(np.abs(ours[0] - theirs[0]).max(), np.abs(ours[1] - theirs[1]).max(),
                   np.abs(ours[2] - sym(theirs[2])).max())

    def diff_aba(method):
        ours = forward_dynamics_derivatives(model, q, qd, tau, method=method)
        theirs = pin.computeABADerivatives(pm, pd, q, qd, tau)
        return max(np.abs(ours[0] - theirs[0]).max(), np.abs(ours[1] - theirs[1]).max(),
                   np.abs(ours[2] - sym(theirs[2])).max())

    def diff_contact(kind):
        ours = constrained_forward_dynamics(model, q, qd, tau, contact)[0]
        if kind == "constraintDynamics":
            theirs = pin.constraintDynamics(pm, pd, q, qd, tau, models, datas)
        else:
            theirs = pin.forwardDynamics(pm, pd, q, qd, tau, J, gamma)
        return np.abs(ours - theirs).max()

    cases = [
        ("inverse_dynamics_derivatives[carpentier]", "computeRNEADerivatives",
         lambda: inverse_dynamics_derivatives(model, q, qd, qdd),
         lambda: pin.computeRNEADerivatives(pm, pd, q, qd, qdd), lambda: diff_rnea("carpentier")),
        ("inverse_dynamics_derivatives[kim]", "computeRNEADerivatives",
         lambda: inverse_dynamics_derivatives(model, q, qd, qdd, method="kim"),
         lambda: pin.computeRNEADerivatives(pm, pd, q, qd, qdd), lambda: diff_rnea("kim")),
        ("forward_dynamics_derivatives[kim]", "computeABADerivatives",
         lambda: forward_dynamics_derivatives(model, q, qd, tau, method="kim"),
         lambda: pin.computeABADerivatives(pm, pd, q, qd, tau), lambda: diff_aba("kim")),
        ("forward_dynamics_derivatives[rnea]", "computeABADerivatives",
         lambda: forward_dynamics_derivatives(model, q, qd, tau, method="rnea"),
         lambda: pin.computeABADerivatives(pm, pd, q, qd, tau), lambda: diff_aba("rnea")),
        ("hybrid_dynamics_derivatives[u=even]", "computeABADerivatives (scale only)",
         lambda: hybrid_dynamics_derivatives(model, q, qd, qdd, tau, u),
         lambda: pin.computeABADerivatives(pm, pd, q, qd, tau), lambda: float("nan")),
        ("constrained_forward_dynamics[3-D point]", "constraintDynamics",
         lambda: constrained_forward_dynamics(model, q, qd, tau, contact),
         lambda: pin.constraintDynamics(pm, pd, q, qd, tau, models, datas),
         lambda: diff_contact("constraintDynamics")),
        ("constrained_forward_dynamics[3-D point]", "forwardDynamics(J, γ given)",
         lambda: constrained_forward_dynamics(model, q, qd, tau, contact),
         lambda: pin.forwardDynamics(pm, pd, q, qd, tau, J, gamma),
         lambda: diff_contact("forwardDynamics")),
    ]
    rows = []
    for ours_name, pin_name, ours, theirs, diff in cases:
        t_ours, t_pin = race(ours, theirs, repeat)
        rows.append({"robot": name, "nq": n, "ours": ours_name, "pinocchio": pin_name,
                     "ours_us": t_ours, "pin_us": t_pin, "ratio": t_ours / t_pin,
                     "max_diff": float(diff())})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="+", default=list(URDFS), choices=list(URDFS))
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("pinocchio is not installed: nothing to compare against", file=sys.stderr)
        return 1
    robots = example_robot_data()
    if robots is None:
        print("example-robot-data is not installed", file=sys.stderr)
        return 1
    rows = []
    header = (f"{'robot':6} {'ours':42} {'µs':>8} {'pinocchio':36} {'µs':>8} {'ratio':>6} "
              f"{'max diff':>9}")
    print(header)
    print("-" * len(header))
    for name in args.robots:
        for row in bench_robot(name, robots / URDFS[name], args.repeat):
            rows.append(row)
            print(f"{name:6} {row['ours']:42} {row['ours_us']:8.2f} {row['pinocchio']:36} "
                  f"{row['pin_us']:8.2f} {row['ratio']:6.2f} {row['max_diff']:9.1e}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
