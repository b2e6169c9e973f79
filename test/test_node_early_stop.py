"""Ctrl-C of a node executable while it still imports (ros2 launch starts the console scripts and
forwards a terminal's Ctrl-C at once): a quiet exit 0 — before, the node died of the signal with a
KeyboardInterrupt traceback and launch logged "[ERROR] … process has died … exit code -2"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import domains


def test_a_node_executable_stopped_while_importing_exits_quietly_with_0(tmp_path):
    exe = tmp_path / "plant"  # named as setup.py's console script: robot_control.nodes sees it
    exe.write_text(f"#!{sys.executable}\nimport sys\n"
                   "from robot_control.nodes.plant_node import main\nsys.exit(main())\n")
    exe.chmod(0o755)
    domain = domains.claim("node-early-stop")
    try:
        env = {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROBOT_CONTROL_BUS": "dds"}
        for delay_s in (0.5, 1.5):  # inside the imports of numpy, numba and the package
            proc = subprocess.Popen([str(exe), "--ros-args", "-r", "__node:=early_stop"],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            time.sleep(delay_s)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, (delay_s, proc.returncode, err[-2000:])
            assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
    finally:
        domains.release(domain)
