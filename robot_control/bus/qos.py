"""ROS 2's QoS profiles as plain data, with no DDS library behind them: the Cyclone DDS backend
turns them into DDS QoS (dds_config.endpoint_qos), and rosbag2 metadata records them, so
recordings and plots work where only rclpy (and no cyclonedds package) is installed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QosProfile:
    """An rmw_qos_profile_t reduced to what ROS 2's profiles set: history depth (keep last),
    reliability, durability and lifespan; liveliness and deadline stay at the defaults."""

    depth: int
    reliable: bool = True
    transient_local: bool = False
    lifespan_s: float | None = None


DEFAULT = QosProfile(depth=10)  # rmw_qos_profile_default
SENSOR_DATA = QosProfile(depth=5, reliable=False)  # rmw_qos_profile_sensor_data
SERVICES_DEFAULT = QosProfile(depth=10)  # rmw_qos_profile_services_default
PARAMETERS = QosProfile(depth=1000)  # rmw_qos_profile_parameters: parameter services
PARAMETER_EVENTS = QosProfile(depth=1000)  # rmw_qos_profile_parameter_events
LATCHED = QosProfile(depth=1, transient_local=True)  # robot_state_publisher's /robot_description
ROSOUT = QosProfile(
    depth=1000, transient_local=True, lifespan_s=10.0
)  # rcl_qos_profile_rosout_default
CLOCK = QosProfile(depth=1, reliable=False)  # rclcpp::ClockQoS, rclpy's /clock subscription
DISCOVERY_INFO = QosProfile(depth=1, transient_local=True)  # rmw's ros_discovery_info endpoints

TOPIC_PROFILES: dict[str, QosProfile] = {
    "/robot_description": LATCHED,
    "/parameter_events": PARAMETER_EVENTS,
    "/rosout": ROSOUT,
}
