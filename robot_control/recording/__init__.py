"""Recordings of runs as rosbag2 directories (metadata.yaml + MCAP), without ROS 2.

- :mod:`~robot_control.recording.bag` — reading bags with the ``rosbags`` library;
- :mod:`~robot_control.recording.writer` — writing them so they survive a killed writer or a full
  disk, and ``robot-control bag reindex`` (with :mod:`~robot_control.recording.mcap_index`);
- :mod:`~robot_control.recording.recorder` — ``robot-control bag record``: live topics of the bus;
- :mod:`~robot_control.recording.player` — ``robot-control bag play``: a bag back onto the bus;
- :mod:`~robot_control.recording.offline` — ``simulate --record``: an offline run as the same bag;
- :mod:`~robot_control.recording.runs` — the time series of a run from a bag or a JSON result,
  for ``robot-control plot``.
"""
