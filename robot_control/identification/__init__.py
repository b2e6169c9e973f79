"""Identification of a manipulator's dynamic parameters from recorded runs (Huo 2.5).

    recording = read_joint_bag("run_bag", model.joint_names)       # /joint_states, /joint_command
    valid, tau, _ = centred_torque(recording)
    samples = identification_samples(recording.t, recording.q, recording.qd, tau, valid,
                                     FilterSpec())
    estimate = identify(model, "base", samples, friction=True)

The ``robot-control identify`` command does the same and writes files a controller loads.
"""

from robot_control.identification.estimation import Estimate, identify
from robot_control.identification.recording import (
    JointRecording,
    RecordingError,
    centred_torque,
    read_joint_bag,
)
from robot_control.identification.signals import FilterSpec, Samples, identification_samples

__all__ = [
    "Estimate",
    "FilterSpec",
    "JointRecording",
    "RecordingError",
    "Samples",
    "centred_torque",
    "identification_samples",
    "identify",
    "read_joint_bag",
]
