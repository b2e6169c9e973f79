"""A JointState crosses two real Cyclone DDS participants with the ROS 2 wire conventions: the
rmw topic name, the type name, and the type hash in the endpoints' USER_DATA (as rmw_cyclonedds
announces them)."""

import os
import subprocess
import sys
import time

import domains
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from robot_control.bus.dds import config as cfg
from robot_control.bus.dds import messages as m

# --- a real exchange between two participants --------------------------------------------------


def _unique_domain_id(offset: int) -> int:
    return domains.claim(f"{__name__}-{offset}")


def _wait_for(predicate, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.02)
    return None


def test_joint_state_crosses_two_participants_with_typehash_user_data():
    env = {"ROS_DOMAIN_ID": str(_unique_domain_id(0)), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
    domain_id, config = cfg.domain_config_from_env(env)
    domain = Domain(domain_id, config)  # noqa: F841 - must outlive the participants
    plant, controller = DomainParticipant(domain_id), DomainParticipant(domain_id)
    topic = m.dds_topic_name("/joint_states")
    qos = cfg.endpoint_qos(cfg.DEFAULT, "sensor_msgs/msg/JointState")
    writer = DataWriter(plant, Topic(plant, topic, m.JointState), qos=qos)
    reader = DataReader(controller, Topic(controller, topic, m.JointState), qos=qos)
    publications = BuiltinDataReader(controller, BuiltinTopicDcpsPublication)

    # other test processes may share the domain id: recognise our sample by its content
    sent = m.joint_state(
        m.time_from_nanoseconds(time.time_ns()),
        [f"pid{os.getpid()}", "j2"],
        [0.1, 0.2],
        [0.3, 0.4],
        [0.5, 0.6],
    )

    def received():
        writer.write(sent)
        return [s for s in reader.take(N=100) if s == sent]

    assert _wait_for(received), "JointState did not arrive"

    def discovered():
        return [
            p
            for p in publications.take(N=100)
            if p.participant_key == plant.guid and p.topic_name == "rt/joint_states"
        ]

    endpoints = _wait_for(discovered)
    assert endpoints, "the writer was not discovered on DCPSPublication"
    assert endpoints[0].type_name == "sensor_msgs::msg::dds_::JointState_"
    assert endpoints[0].qos[Policy.Userdata].data == (
        f"typehash={m.type_hash('sensor_msgs/msg/JointState')};".encode()
    )
    assert endpoints[0].qos[Policy.Reliability] == Policy.Reliability.Reliable(cfg.INFINITE)


PUBLISHER = """
import os, sys, time
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from robot_control.bus.dds import config as cfg, messages as m
domain_id, config = cfg.domain_config_from_env()
domain = Domain(domain_id, config)
plant = DomainParticipant(domain_id)
qos = cfg.endpoint_qos(cfg.DEFAULT, "sensor_msgs/msg/JointState")
writer = DataWriter(plant, Topic(plant, m.dds_topic_name("/joint_states"), m.JointState), qos=qos)
print(plant.guid, flush=True)
for _ in range(1000):
    writer.write(m.joint_state(1.5, [sys.argv[1]], [1.0], [2.0], [3.0]))
    time.sleep(0.02)
"""


def test_joint_state_from_another_process_over_localhost_discovery():
    env = dict(
        os.environ,
        ROS_DOMAIN_ID=str(_unique_domain_id(50)),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        CYCLONEDDS_URI="",
    )
    env.pop("ROS_LOCALHOST_ONLY", None)
    domain_id, config = cfg.domain_config_from_env(env)
    domain = Domain(domain_id, config)  # noqa: F841 - must outlive the participant
    controller = DomainParticipant(domain_id)
    topic = m.dds_topic_name("/joint_states")
    qos = cfg.endpoint_qos(cfg.DEFAULT, "sensor_msgs/msg/JointState")
    reader = DataReader(controller, Topic(controller, topic, m.JointState), qos=qos)
    publications = BuiltinDataReader(controller, BuiltinTopicDcpsPublication)
    tag = f"from_pid_{os.getpid()}"
    publisher = subprocess.Popen(
        [sys.executable, "-c", PUBLISHER, tag], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        publisher_guid = publisher.stdout.readline().strip()
        got = _wait_for(lambda: [s for s in reader.take(N=100) if s.name == [tag]], timeout_s=20)
        assert got, "no JointState from the other process"
        assert got[0] == m.joint_state(1.5, [tag], [1.0], [2.0], [3.0])
        endpoints = _wait_for(
            lambda: [
                p
                for p in publications.take(N=100)
                if str(p.participant_key) == publisher_guid and p.topic_name == topic
            ]
        )
        assert endpoints and endpoints[0].qos[Policy.Userdata].data == (
            f"typehash={m.type_hash('sensor_msgs/msg/JointState')};".encode()
        )
    finally:
        publisher.kill()
        publisher.wait()
