"""``robot-control view``: a browser page watching (and tuning) running stacks, or a recording.

A side-car process: it subscribes to a stack's topics through the bus interface (robot_control.bus:
rclpy or Cyclone DDS, as the nodes), changes parameters, lifecycle states and goals through the
standard services, and serves the page with viser (its web client comes from the wheel: no CDN).

- ``scene.py``: robot_description → drawable shapes per link, and link poses from joint values;
- ``traces.py``: the last N seconds of each joint's signals, decimated only when drawn;
- ``watch.py``: one namespace's subscriptions, its latest state, health and connection;
- ``commands.py``: parameters, lifecycle transitions and goals through the standard services;
- ``replay.py``: a rosbag2 recording as the same traces, for ``--bag``;
- ``drawing.py``: a robot's shapes in the viser scene, posed (the body; the reference's ghost as
  a skeleton of lines);
- ``panel.py``: one robot's drawing, plots and readout; ``controls.py``: a live stack's law, gains,
  pause/resume and health widgets; ``goals.py``: a goal sent and followed to its end (or
  cancelled); ``page.py``: live and replayed robots, the refresh loop;
- ``app.py``: the process (arguments, the port check, the loop that refreshes the page).
"""
