"""Messages of the bus contract (the topics and types README and docs/architecture.md list), built
and read the same way on both backends.

Node code never imports message modules: it asks the node for the classes by ROS name, so the
same code builds rclpy messages under ROS 2 and Cyclone DDS structs without it. Stamps travel as
integer nanoseconds so lockstep runs compare stamps exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_control.sim.clock import NS, period_ns, seconds

Array = np.ndarray
__all__ = ["NS", "TRAJECTORY_TOPIC", "Messages", "period_ns", "read_accel", "read_pose", "read_terms",
           "read_wrench",
           "seconds", "stamp_ns"]

#: the motion as quintic knots, trajectory generator → controller (joint_trajectory_controller's
#: ``~/joint_trajectory`` of a controller named ``controller``)
TRAJECTORY_TOPIC = "controller/joint_trajectory"
#: /dynamics/terms: labelled blocks of one Float64MultiArray, in this order
TERMS_LAYOUT = ("stamp", "mass_matrix", "coriolis_torque", "gravity_torque", "coriolis_matrix")


def stamp_ns(stamp) -> int:
    """builtin_interfaces/Time → integer nanoseconds."""
    return int(stamp.sec) * NS + int(stamp.nanosec)


class Messages:
    """Constructors and readers for the message types the nodes exchange."""

    def __init__(self, node, frame_prefix: str = "") -> None:
        m = node.msg
        #: prepended to every frame_id stamped (robot_state_publisher's frame_prefix, REP 105
        #: frames of several robots on one /tf: ``arm1/world``); joint states carry no frame
        self.frame_prefix = frame_prefix
        self.Time = m("builtin_interfaces/msg/Time")
        self.Header = m("std_msgs/msg/Header")
        self.JointState = m("sensor_msgs/msg/JointState")
        self.JointTrajectory = m("trajectory_msgs/msg/JointTrajectory")
        self.JointTrajectoryPoint = m("trajectory_msgs/msg/JointTrajectoryPoint")
        self.ControllerState = m("control_msgs/msg/JointTrajectoryControllerState")
        self.Duration = m("builtin_interfaces/msg/Duration")
        self.Float64MultiArray = m("std_msgs/msg/Float64MultiArray")
        self.MultiArrayLayout = m("std_msgs/msg/MultiArrayLayout")
        self.MultiArrayDimension = m("std_msgs/msg/MultiArrayDimension")
        self.WrenchStamped = m("geometry_msgs/msg/WrenchStamped")
        self.Wrench = m("geometry_msgs/msg/Wrench")
        self.Vector3 = m("geometry_msgs/msg/Vector3")
        self.Point = m("geometry_msgs/msg/Point")
        self.Quaternion = m("geometry_msgs/msg/Quaternion")
        self.Pose = m("geometry_msgs/msg/Pose")
        self.PoseStamped = m("geometry_msgs/msg/PoseStamped")
        self.Accel = m("geometry_msgs/msg/Accel")
        self.AccelStamped = m("geometry_msgs/msg/AccelStamped")
        self.Clock = m("rosgraph_msgs/msg/Clock")
        self.String = m("std_msgs/msg/String")
        self.DiagnosticArray = m("diagnostic_msgs/msg/DiagnosticArray")
        self.DiagnosticStatus = m("diagnostic_msgs/msg/DiagnosticStatus")
        self.KeyValue = m("diagnostic_msgs/msg/KeyValue")

    # ----------------------------------------------------------------- builders
    def time(self, ns: int):
        return self.Time(sec=int(ns // NS), nanosec=int(ns % NS))

    def header(self, ns: int, frame_id: str = ""):
        return self.Header(stamp=self.time(ns), frame_id=self.frame_prefix + frame_id if frame_id
                           else "")

    def joint_state(self, ns: int, names: Sequence[str], q=None, qd=None, tau=None):
        return self.JointState(header=self.header(ns), name=list(names), position=_list(q),
                               velocity=_list(qd), effort=_list(tau))

    def joint_reference(self, ns: int, names: Sequence[str], q, qd, qdd):
        point = self.JointTrajectoryPoint(positions=_list(q), velocities=_list(qd),
                                          accelerations=_list(qdd), effort=[],
                                          time_from_start=self.Duration(sec=0, nanosec=0))
        return self.JointTrajectory(header=self.header(ns), joint_names=list(names),
                                    points=[point])

    def controller_state(self, ns: int, names: Sequence[str], ref, q, qd, tau):
        """control_msgs/JointTrajectoryControllerState as joint_trajectory_controller fills it:
        reference (q_d, q̇_d, q̈_d), feedback (q, q̇), error (q_d − q, q̇_d − q̇), output (τ)."""
        def point(**fields):
            return self.JointTrajectoryPoint(**{k: _list(v) for k, v in fields.items()})
        return self.ControllerState(
            header=self.header(ns), joint_names=list(names),
            reference=point(positions=ref.q, velocities=ref.qd, accelerations=ref.qdd),
            feedback=point(positions=q, velocities=qd), output=point(effort=tau),
            error=point(positions=ref.q - q, velocities=ref.qd - qd), speed_scaling_factor=1.0)

    def joint_trajectory(self, start_ns: int, names: Sequence[str], knots):
        """A motion as its quintic knots (trajectory/schedule.py): header stamp = its start,
        one point per knot with positions, velocities, accelerations and time_from_start."""
        times, q, qd, qdd = knots
        points = [self.JointTrajectoryPoint(
            positions=_list(q[i]), velocities=_list(qd[i]), accelerations=_list(qdd[i]),
            effort=[], time_from_start=self.duration(int(round(times[i] * NS))))
            for i in range(len(times))]
        return self.JointTrajectory(header=self.header(start_ns), joint_names=list(names),
                                    points=points)

    def duration(self, ns: int):
        return self.Duration(sec=int(ns // NS), nanosec=int(ns % NS))

    def wrench(self, ns: int, wrench6: Array, frame_id: str):
        """WrenchStamped from an angular-first (n, f) 6-vector (ROS puts force first)."""
        n, f = np.asarray(wrench6[:3], dtype=float), np.asarray(wrench6[3:], dtype=float)
        return self.WrenchStamped(
            header=self.header(ns, frame_id),
            wrench=self.Wrench(force=self._vector3(f), torque=self._vector3(n)))

    def pose(self, ns: int, T: Array, frame_id: str):
        """PoseStamped of a 4×4 placement (orientation as a unit quaternion x, y, z, w)."""
        from scipy.spatial.transform import Rotation  # only the cell's nodes: 0.15 s at import

        x, y, z, w = (float(v) for v in Rotation.from_matrix(T[:3, :3]).as_quat())
        p = T[:3, 3]
        return self.PoseStamped(
            header=self.header(ns, frame_id),
            pose=self.Pose(position=self.Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                           orientation=self.Quaternion(x=x, y=y, z=z, w=w)))

    def accel(self, ns: int, angular: Array, linear: Array, frame_id: str):
        """AccelStamped from an angular and a linear acceleration (3-vectors)."""
        return self.AccelStamped(
            header=self.header(ns, frame_id),
            accel=self.Accel(linear=self._vector3(linear), angular=self._vector3(angular)))

    def _vector3(self, v: Array):
        return self.Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))

    def clock(self, ns: int):
        return self.Clock(clock=self.time(ns))

    def terms(self, ns: int, M: Array, c: Array, g: Array, C: Array):
        """/dynamics/terms: stamp (sec, nanosec), M n×n row-major, C(q,q̇)q̇, g(q), C(q,q̇) n×n."""
        n = len(g)
        sizes = {"stamp": (2, 1), "mass_matrix": (n * n, n), "coriolis_torque": (n, 1),
                 "gravity_torque": (n, 1), "coriolis_matrix": (n * n, n)}
        dims = [self.MultiArrayDimension(label=k, size=sizes[k][0], stride=sizes[k][1])
                for k in TERMS_LAYOUT]
        data = np.concatenate([[ns // NS, ns % NS], np.ravel(M), c, g, np.ravel(C)]).tolist()
        return self.Float64MultiArray(layout=self.MultiArrayLayout(dim=dims, data_offset=0),
                                      data=data)

    def diagnostics(self, ns: int, statuses: list[tuple[int, str, str, dict]]):
        """DiagnosticArray from (level, name, message, key/values) tuples."""
        out = []
        for level, name, message, values in statuses:
            out.append(self.DiagnosticStatus(
                level=bytes([level]) if _byte_field(self.DiagnosticStatus) else level,
                name=name, message=message, hardware_id="robot_control",
                values=[self.KeyValue(key=str(k), value=str(v)) for k, v in values.items()]))
        return self.DiagnosticArray(header=self.header(ns), status=out)


def read_wrench(msg) -> Array:
    """A WrenchStamped as the package's angular-first (n, f) 6-vector."""
    w = msg.wrench
    return np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])


def read_pose(msg) -> Array:
    """A PoseStamped as a 4×4 placement."""
    from scipy.spatial.transform import Rotation

    p, o = msg.pose.position, msg.pose.orientation
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([o.x, o.y, o.z, o.w]).as_matrix()
    T[:3, 3] = [p.x, p.y, p.z]
    return T


def read_accel(msg) -> tuple[Array, Array]:
    """An AccelStamped as (angular, linear) 3-vectors."""
    a = msg.accel
    return (np.array([a.angular.x, a.angular.y, a.angular.z]),
            np.array([a.linear.x, a.linear.y, a.linear.z]))


def read_terms(msg) -> tuple[int, Array, Array, Array, Array]:
    """(stamp ns, M, C q̇, g, C) of a /dynamics/terms message; ValueError if the layout is not ours."""
    labels = [d.label for d in msg.layout.dim]
    if labels != list(TERMS_LAYOUT):
        raise ValueError(f"/dynamics/terms layout {labels} is not {list(TERMS_LAYOUT)}")
    data = np.asarray(msg.data, dtype=float)
    n = int(msg.layout.dim[3].size)
    if data.size != 2 + 2 * n * n + 2 * n:
        raise ValueError("/dynamics/terms data length does not match its layout")
    ns = int(data[0]) * NS + int(data[1])
    a = 2 + n * n
    M = data[2:a].reshape(n, n)
    return ns, M, data[a : a + n], data[a + n : a + 2 * n], data[a + 2 * n :].reshape(n, n)


def _list(values) -> list[float]:
    return [] if values is None else np.asarray(values, dtype=float).ravel().tolist()


def _byte_field(cls) -> bool:
    """rclpy declares DiagnosticStatus.level as a byte (bytes); our DDS struct as an int."""
    return getattr(cls, "_fields_and_field_types", {}).get("level") == "octet"
