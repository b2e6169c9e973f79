"""Bring-up without ROS 2: this package's launch files read and run (runner), their node
processes started, watched and stopped (processes), the running stack summarised (summary)."""
