"""Recordings of runs as rosbag2 directories (metadata.yaml + MCAP), without ROS 2.

- :mod:`~robot_control.recording.bag` — writing and reading bags with the ``rosbags`` library;
- :mod:`~robot_control.recording.recorder` — ``robot-control bag record``: live topics of the bus;
- :mod:`~robot_control.recording.player` — ``robot-control bag play``: a bag back onto the bus;
- :mod:`~robot_control.recording.offline` — ``simulate --record``: an offline run as the same bag;
- :mod:`~robot_control.recording.runs` — the time series of a run from a bag or a JSON result,
  for ``robot-control plot``.
"""
