"""How a finished ``robot-control launch`` run ended, judged from its summary (bringup/summary.py).

Three outcomes, the first word of the run's last line:

- ``FAILED`` (exit 1): a safety stop, sustained command rejection, tracking beyond the law's
  bound, a non-finite error, or no tracking at all — a stack with a trajectory generator whose
  controller tracked not one tick of its motion (every trajectory dropped, or the generator never
  became active) did not do its job, whatever the other figures say (``run_verdict``);
- ``degraded`` (exit 0; 1 with ``--strict``): the run held, but not as asked — more than
  ``DEGRADED_MISSED_RATIO`` of its deadlines missed, a torque saturated at the effort limits, or
  part of its motion dropped: trajectories the controller dropped while it tracked others,
  trajectories the generator refused on its topic, commands of the stack's own controller the
  plant rejected (``degradation``, ``dropped_motion``), with the figures;
- ``ok``: none of these.
"""

from __future__ import annotations

#: a real-time run's tracking bound floor, rad: on a loaded machine missed deadlines let the plant
#: hold for a period now and then (issue 12's start-up bound); lockstep runs keep the law
#: family's own bound (control/families.py, docs/law_matrix.md)
REALTIME_ERROR_BOUND = 0.2
#: command rejection is sustained when at least this many were rejected, and more than applied
#: (a stranger's garbage or foreign commands, rejected while ours apply, are not: they are counted)
REJECTED_AT_LEAST = 10
#: a run that missed more than this share of its deadlines did not run at the rate it was asked
DEGRADED_MISSED_RATIO = 0.10
#: the controller's drop counter of the motions it is sent (nodes/validation.py DropLog)
TRAJECTORY_DROPS = "dropped /controller/joint_trajectory"
#: the trajectory generator's count of the trajectories it refused on its topic
GENERATOR_REFUSED = "trajectories refused"

__all__ = ["DEGRADED_MISSED_RATIO", "degradation", "dropped_motion", "run_verdict",
           "saturation_counts", "tracking_bound"]


def tracking_bound(controller: str | None, lockstep: bool) -> float | None:
    """The max |e| a run of ``controller`` must keep (None: a law outside the matrix)."""
    from robot_control.sim.matrix import joint_laws

    row = next((row for row in joint_laws() if row.law == controller), None)
    if row is None:
        return None
    bound = row.bound
    return bound if lockstep else max(bound, REALTIME_ERROR_BOUND)


def run_verdict(summary: dict[str, object], lockstep: bool, expects_tracking: bool = False
                ) -> str:
    """Why a finished run failed though every node exited cleanly ('' if it did not): a safety
    stop, sustained command rejection, no tracking (``expects_tracking``: the plan has a
    trajectory generator), or tracking beyond the law's bound."""
    stops = summary.get("velocity_stops")
    if isinstance(stops, int) and stops > 0:
        return f"safety stop: the plant stopped {stops} time(s) on overspeed"
    rejected, applied = summary.get("commands_rejected"), summary.get("commands")
    if isinstance(rejected, int) and rejected >= REJECTED_AT_LEAST and \
            rejected > (applied if isinstance(applied, int) else 0):
        return (f"commands rejected: the plant dropped {rejected} /joint_command messages and "
                f"applied {applied}")
    if expects_tracking and (why := untracked(summary)):
        return why
    bound = tracking_bound(summary.get("controller"), lockstep)  # type: ignore[arg-type]
    errors = [e for e in summary.get("max_error") or [] if isinstance(e, int | float)]
    if bound is not None and errors and max(errors) > bound:
        plant = summary.get("plant") or {}
        counts = ", ".join(f"{plant[k]} {k.split('_', 1)[1]}" for k in (
            "commands_applied", "commands_rejected", "commands_unconfirmed", "commands_ignored")
            if plant.get(k))  # what the drive did with the commands: the first thing to check
        return (f"tracking beyond the bound: max |e| {max(errors):.3g} > {bound:g} rad "
                f"for {summary.get('controller')} (plant commands: {counts or 'none'})")
    if summary.get("non_finite_error_samples"):
        return "tracking error turned non-finite"
    return ""


def untracked(summary: dict[str, object]) -> str:
    """Why the controller tracked no tick of the generator's motion ('' if it tracked some):
    the motions it dropped (with the last reason it gave), or a generator that never ran."""
    samples = summary.get("tracking_samples")
    if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0:
        return ""
    controller = controller_status(summary)
    drops = controller.get(TRAJECTORY_DROPS)
    if isinstance(drops, int) and drops > 0:
        why = " ".join(str(controller.get(f"last {TRAJECTORY_DROPS}") or "").split())  # a line
        return (f"no tracking samples: the controller dropped {drops} trajectory message(s) on "
                f"/controller/joint_trajectory" + (f" ({why})" if why else "")
                + ": the arm held still")
    if summary.get("tracking_s") is None:
        return "no tracking samples: the trajectory generator never became active"
    return "no tracking samples: the controller tracked no motion of the trajectory generator"


def controller_status(summary: dict[str, object]) -> dict[str, object]:
    """The controller's last /diagnostics status in the summary (empty if it sent none)."""
    for status in (summary.get("node_status") or {}).values():  # type: ignore[union-attr]
        if isinstance(status, dict) and "tracking_samples" in status:
            return status
    return {}


def saturation_counts(summary: dict[str, object]) -> dict[str, int]:
    """node -> how many steps (ticks) it saturated a torque at the effort limits, for every node
    whose status counts them (the plant's ``saturation_events``; a controller's ``saturat…``
    counter) and did."""
    out: dict[str, int] = {}
    for node, status in (summary.get("node_status") or {}).items():  # type: ignore[union-attr]
        if not isinstance(status, dict):
            continue
        counts = [v for k, v in status.items() if str(k).startswith("saturat")
                  and isinstance(v, int) and not isinstance(v, bool) and v > 0]
        if counts:
            out[str(node)] = max(counts)
    return out


def _count(value: object) -> int:
    """A status counter as an int (0 when absent or not a count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def dropped_motion(summary: dict[str, object]) -> list[str]:
    """What of its motion a run that tracked some of it dropped, each with its figures: the
    trajectories the controller dropped (with its last reason; none tracked at all is
    ``untracked``'s failure), the trajectories the generator refused on its topic, and the
    commands of the stack's controller the plant rejected (not a stranger's: those are
    ``commands_foreign``)."""
    out = []
    controller = controller_status(summary)
    drops = _count(controller.get(TRAJECTORY_DROPS))
    if drops and _count(summary.get("tracking_samples")):
        why = _one_line(controller.get(f"last {TRAJECTORY_DROPS}"))
        out.append(f"the controller dropped {drops} trajectory message(s) on "
                   f"/controller/joint_trajectory" + (f" (last: {why})" if why else ""))
    for node, status in (summary.get("node_status") or {}).items():  # type: ignore[union-attr]
        refused = _count(status.get(GENERATOR_REFUSED)) if isinstance(status, dict) else 0
        if refused:
            out.append(f"{node} refused {refused} trajectory message(s) on its topic "
                       "(see its log)")
    plant = summary.get("plant") or {}
    ours = _count(plant.get("commands_rejected")) - _count(plant.get("commands_foreign"))  # type: ignore[union-attr]
    if ours > 0:
        why = _one_line(plant.get("last dropped /joint_command"))  # type: ignore[union-attr]
        out.append(f"the plant rejected {ours} of the controller's commands (applied "
                   f"{_count(plant.get('commands_applied'))})"  # type: ignore[union-attr]
                   + (f" (last: {why})" if why else ""))
    return out


def degradation(summary: dict[str, object]) -> str:
    """Why a run that held is degraded ('' if it is not): more than DEGRADED_MISSED_RATIO of
    its deadlines missed, a torque saturated, or part of its motion dropped
    (``dropped_motion``) — each with its figures."""
    reasons = []
    ratio, missed = summary.get("missed_deadline_ratio"), summary.get("missed_deadlines")
    if isinstance(ratio, int | float) and ratio > DEGRADED_MISSED_RATIO:
        passed = (summary.get("plant") or {}).get("commanded_deadlines")  # type: ignore[union-attr]
        reasons.append(f"missed {100 * ratio:.1f} % of its deadlines ({missed} of {passed}; "
                       f"more than {100 * DEGRADED_MISSED_RATIO:g} %)")
    saturated = saturation_counts(summary)
    if saturated:
        reasons.append("torque saturated at the effort limits (" + ", ".join(
            f"{node}: {count} steps" for node, count in saturated.items()) + ")")
    reasons += dropped_motion(summary)
    return "; ".join(reasons)
