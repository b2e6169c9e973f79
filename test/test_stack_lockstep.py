"""Lockstep over the bus reproduces the offline simulation of the same scenario bit for bit, and
the plant refuses bad commands and stays safe.

Real node processes on a private domain; a client participant records /joint_states.
"""

import os

import numpy as np
import pytest
import yaml
from stack_helpers import LOCKSTEP_SCENARIO as SCENARIO
from stack_helpers import (
    Stack,
    lockstep_over_the_bus,
    messages_within,
    private_domain,
    states_on_the_period_grid,
)

# slow (scripts/test.sh --slow): a lockstep stack of node processes against the offline run
pytestmark = pytest.mark.slow


def test_lockstep_bus_run_equals_offline_simulation(tmp_path):
    from robot_control.sim.simulate import run

    path = tmp_path / "lockstep.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    offline = run(str(path))
    steps = offline.summary["steps"]

    received, logs = lockstep_over_the_bus(private_domain(11), str(path), steps)
    assert len(received) > steps, f"only {len(received)} states; plant log:\n{logs.get('plant')}"
    bus = states_on_the_period_grid(received, steps, SCENARIO["rate"])
    # the same arithmetic in the same order: equal to the last bit, not just to a tolerance
    assert np.array_equal(bus, offline.q), np.abs(bus - offline.q).max()


@pytest.mark.parametrize("bad", ["effort", "names", "nan"])
def test_plant_rejects_bad_commands_and_stays_safe(bad):
    from robot_control.bus.dds.client import BusClient

    env = private_domain(23 + ["effort", "names", "nan"].index(bad))
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    import subprocess
    import sys

    pub = (
        "import sys, time\n"
        "from robot_control.bus import create_node\n"
        "from robot_control.nodes.convert import Messages\n"
        "node = create_node('bad_commander', [])\n"
        "m = Messages(node)\n"
        "p = node.create_publisher('sensor_msgs/msg/JointState', '/joint_command')\n"
        f"kind = {bad!r}\n"
        "names = ['joint1', 'joint2', 'joint3']\n"
        "tau = [1e3, 1e3, 1e3]\n"
        "if kind == 'effort': tau = [1.0, 2.0]\n"
        "if kind == 'names': names = ['a', 'b', 'c']\n"
        "if kind == 'nan': tau = [float('nan'), 0.0, 0.0]\n"
        "deadline = time.monotonic() + 60\n"  # the plant starts slowly on a busy machine
        "while p.get_subscription_count() == 0 and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "for _ in range(40):\n"
        "    p.publish(m.joint_state(0, names, tau=tau)); time.sleep(0.05)\n"
        "node.shutdown()\n"
    )
    with BusClient(discovery_s=1.0) as client:
        with Stack(env, {"plant": ["rate:=100.0", "initial_q:=[0.0, 1.0, 0.5]"]}) as stack:
            commander = subprocess.Popen([sys.executable, "-c", pub], env=env)
            diag = None
            # a deadline, not "until a message is missing": /diagnostics never stops coming
            for msg in messages_within(client, "/diagnostics", 30.0):
                values = {kv.key: kv.value for s in msg.status for kv in s.values}
                if int(values.get("commands_rejected", "0")) >= 5:
                    diag = values
                    break
            commander.wait(timeout=30)
            state = client.topic_echo("/joint_states", count=1, timeout_s=10)[0]
            logs = stack.stop()
    assert diag is not None, logs["plant"]
    assert "dropped /joint_command: rejected" in logs["plant"]
    # never applied: the plant held its position with the safe hold behaviour
    assert np.allclose(np.asarray(state.position), [0.0, 1.0, 0.5], atol=0.05)
    assert max(abs(float(v)) for v in state.effort) < 200.0
