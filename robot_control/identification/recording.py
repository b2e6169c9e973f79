"""Joint recordings from a rosbag2 directory: /joint_states and /joint_command (JointState).

Read with the ``rosbags`` library (``pip install rosbags``; the ``bag`` extra), which reads MCAP and
SQLite 3 bags without ROS 2. Samples are ordered by header stamp and joints by name, so the
columns follow the model's joints whatever order the recorder used.

Torque at a state sample: the stack holds each command over one control period (the bus contract: the
command's header.stamp is the state it answers; /joint_states' effort is the torque applied over
the period that ends at the state). The torque "at" state t_k is therefore the mean of the held
torques on either side of t_k: (τ_{k−1} + τ_k)/2 — the staircase centred on the sample — which
removes the half-period lag a zero-order hold puts between τ and the motion.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Array = np.ndarray
STATE_TOPIC = "/joint_states"
COMMAND_TOPIC = "/joint_command"


class RecordingError(ValueError):
    """A bag that cannot serve identification, with the reason."""


@dataclass
class JointRecording:
    """States (t, q, q̇, effort) and commands (t, τ) with columns in ``names`` order."""

    names: list[str]
    t: Array
    q: Array
    qd: Array
    effort: Array | None
    command_t: Array | None
    command: Array | None

    @property
    def rate(self) -> float:
        """Median state rate, Hz."""
        return float(1.0 / np.median(np.diff(self.t)))


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def _columns(msg, names: list[str], field: str) -> Array | None:
    values = list(getattr(msg, field))
    if not values:
        return None
    if len(values) != len(msg.name):
        raise RecordingError(f"a JointState has {len(msg.name)} names but {len(values)} {field}")
    index = {name: k for k, name in enumerate(msg.name)}
    missing = [n for n in names if n not in index]
    if missing:
        raise RecordingError(f"joints {missing} are not in the recorded JointState "
                             f"(it names {list(msg.name)})")
    return np.array([values[index[n]] for n in names], dtype=float)


def _finite(topic: str, msg, field: str, values: Array | None) -> Array | None:
    """values, or RecordingError naming the topic, field and stamp if one is NaN or infinite (a
    least-squares fit would fail inside LAPACK, or quietly fit the rest)."""
    if values is not None and not np.all(np.isfinite(values)):
        raise RecordingError(f"{topic} {field} is NaN or infinite at t = {_stamp(msg):.9f} s: "
                             "identification needs finite samples (record again, or cut the bag)")
    return values


def read_joint_bag(path: str | Path, names: list[str], state_topic: str = STATE_TOPIC,
                   command_topic: str = COMMAND_TOPIC) -> JointRecording:
    """States and commands of the joints ``names`` from a rosbag2 directory (or file)."""
    try:
        from rosbags.highlevel import AnyReader, AnyReaderError
        from rosbags.rosbag2 import ReaderError
        from rosbags.serde import SerdeError
        from rosbags.typesys import Stores, get_typestore
    except ImportError as exc:
        raise RecordingError("reading bags needs the 'rosbags' package (a dependency of "
                             "robot_control): pip install rosbags") from exc
    path = Path(path)
    if not path.exists():
        raise RecordingError(f"no bag at {path}")
    states: list[tuple[float, Array, Array, Array | None]] = []
    commands: list[tuple[float, Array]] = []
    damage = (AnyReaderError, ReaderError, SerdeError, struct.error, ValueError, TypeError, IndexError,
              KeyError, OverflowError, EOFError)
    recover = f"`robot-control bag reindex {path}` keeps what is readable"
    last = "before the first message"
    try:
        with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
            topics = {c.topic: c.msgtype for c in reader.connections}
            for topic in (state_topic, command_topic):
                if topic in topics and topics[topic] != "sensor_msgs/msg/JointState":
                    raise RecordingError(f"{topic} is {topics[topic]}, not "
                                         "sensor_msgs/msg/JointState")
            if state_topic not in topics:
                raise RecordingError(f"the bag has no {state_topic} (topics: {sorted(topics)})")
            wanted = [c for c in reader.connections if c.topic in (state_topic, command_topic)]
            for conn, timestamp, raw in reader.messages(connections=wanted):
                where = f"{conn.topic} at t = {timestamp * 1e-9:.9f} s (bag time)"
                try:
                    msg = reader.deserialize(raw, conn.msgtype)
                except damage as exc:
                    raise RecordingError(f"{path}: {where}: not a valid {conn.msgtype} "
                                         f"({exc or type(exc).__name__})") from None
                last = f"after {where}"
                if conn.topic == state_topic:
                    q = _finite(conn.topic, msg, "position", _columns(msg, names, "position"))
                    qd = _finite(conn.topic, msg, "velocity", _columns(msg, names, "velocity"))
                    if q is None or qd is None:
                        raise RecordingError(f"{state_topic} must carry positions and velocities")
                    states.append((_stamp(msg), q, qd,
                                   _finite(conn.topic, msg, "effort", _columns(msg, names, "effort"))))
                else:
                    tau = _finite(conn.topic, msg, "effort", _columns(msg, names, "effort"))
                    if tau is not None:
                        commands.append((_stamp(msg), tau))
    except RecordingError:
        raise
    except damage as exc:
        raise RecordingError(f"{path}: unreadable {last} ({exc or type(exc).__name__}): "
                             f"{recover}") from None
    if len(states) < 10:
        raise RecordingError(f"only {len(states)} samples on {state_topic}")
    states.sort(key=lambda s: s[0])
    commands.sort(key=lambda c: c[0])
    efforts = [s[3] for s in states]
    return JointRecording(
        names=list(names),
        t=np.array([s[0] for s in states]),
        q=np.array([s[1] for s in states]),
        qd=np.array([s[2] for s in states]),
        effort=np.array(efforts) if all(e is not None for e in efforts) else None,
        command_t=np.array([c[0] for c in commands]) if commands else None,
        command=np.array([c[1] for c in commands]) if commands else None,
    )


def centred_torque(rec: JointRecording, source: str = "auto") -> tuple[Array, Array, str]:
    """(mask of usable state samples, τ at each state sample, source used): the held torques
    either side of each sample averaged (module docstring).

    ``source``: "state" (/joint_states effort: applied over the period ending at the sample),
    "command" (/joint_command paired with its state by stamp), or "auto" (state efforts if
    recorded, else commands).
    """
    if source == "auto":
        source = "state" if rec.effort is not None else "command"
    k = rec.t.size
    tau = np.full((k, len(rec.names)), np.nan)
    if source == "state":
        if rec.effort is None:
            raise RecordingError(f"{STATE_TOPIC} carries no effort; use the commands")
        tau[:-1] = 0.5 * (rec.effort[:-1] + rec.effort[1:])  # τ_{k−1} = e_k, τ_k = e_{k+1}
    elif source == "command":
        if rec.command is None:
            raise RecordingError(f"the bag has no {COMMAND_TOPIC} efforts")
        held = np.full((k, len(rec.names)), np.nan)
        slot = np.searchsorted(rec.t, rec.command_t)
        ok = (slot < k) & (np.abs(rec.t[np.minimum(slot, k - 1)] - rec.command_t) < 1e-6)
        held[slot[ok]] = rec.command[ok]  # the command answering state k, held from t_k
        tau[1:] = 0.5 * (held[:-1] + held[1:])
    else:
        raise ValueError(f"torque source must be auto, state or command, got '{source}'")
    return np.all(np.isfinite(tau), axis=1), tau, source
