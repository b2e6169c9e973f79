"""Bring-up without ROS 2: this package's launch files read and run (runner), their node
processes started, watched and stopped (processes), the running stack summarised (summary); and
rqt for the running stack (rqt_robot_control, with ROS 2: a perspective made for its joints)."""
