"""The small rules of recording.bag and the recorder: QoS between DDS and rosbag2, log times."""

from __future__ import annotations

import pytest
from rosbags.interfaces import QosDurability, QosHistory, QosReliability, QosTime

from robot_control.bus.dds import config as dds_config
from robot_control.recording.bag import (
    BagError,
    qos_of_endpoint,
    qos_of_profile,
    reader_profile,
    writer_profile,
)
from robot_control.recording.recorder import log_time
from robot_control.recording.writer import BagWriter

PROFILES = {"default": dds_config.DEFAULT, "sensor": dds_config.SENSOR_DATA,
            "latched": dds_config.LATCHED, "rosout": dds_config.ROSOUT}


@pytest.mark.parametrize("name", PROFILES)
def test_a_writer_qos_reads_back_as_the_profile_it_was_made_from(name):
    profile = PROFILES[name]
    assert qos_of_endpoint(dds_config.endpoint_qos(profile)) == qos_of_profile(profile)


def test_profiles_map_to_rosbag2_qos_as_ros2_bag_writes_them():
    rosout = qos_of_profile(dds_config.ROSOUT)
    assert rosout.history == QosHistory.KEEP_LAST and rosout.depth == 1000
    assert rosout.reliability == QosReliability.RELIABLE
    assert rosout.durability == QosDurability.TRANSIENT_LOCAL
    assert rosout.lifespan == QosTime(10, 0)
    assert rosout.deadline == QosTime(9223372036, 854775807)  # rmw's infinite, as ros2 prints it
    sensor = qos_of_profile(dds_config.SENSOR_DATA)
    assert sensor.reliability == QosReliability.BEST_EFFORT and sensor.depth == 5


def test_a_reader_asks_only_what_every_publisher_offers():
    reliable, best_effort = (qos_of_profile(p) for p in (dds_config.DEFAULT,
                                                         dds_config.SENSOR_DATA))
    latched = qos_of_profile(dds_config.LATCHED)
    assert reader_profile([reliable], 100) == dds_config.QosProfile(100, True, False)
    assert not reader_profile([reliable, best_effort], 100).reliable
    assert reader_profile([latched], 100).transient_local
    assert not reader_profile([latched, reliable], 100).transient_local
    # a player offers what was recorded, with the largest recorded depth
    assert writer_profile([latched]) == dds_config.LATCHED
    assert writer_profile([reliable, qos_of_profile(dds_config.QosProfile(50))]).depth == 50


def test_log_time_is_the_send_time_when_the_clocks_agree():
    taken = 5_000_000_000
    assert log_time(taken - 3_000_000, taken) == taken - 3_000_000  # sent 3 ms before the take
    assert log_time(taken - 2_000_000_000, taken) == taken  # a clock far behind ours
    assert log_time(taken + 1_000, taken) == taken  # a clock ahead of ours


def test_bags_are_never_overwritten_and_unknown_types_are_refused(tmp_path):
    (tmp_path / "old").mkdir()
    with pytest.raises(BagError, match="exists"):
        BagWriter(tmp_path / "old")
    writer = BagWriter(tmp_path / "new")
    with pytest.raises(BagError, match="no message definition"):
        writer.add_topic("/x", "my_msgs/msg/Unknown", [])
    writer.close()
