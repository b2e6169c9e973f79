"""The rclpy-free transport: Cyclone DDS speaking rmw_cyclonedds' wire conventions (topic and
type names, type hashes, QoS, graph info: rmw_cyclonedds and rmw_dds_common) — nodes,
containers, executor, graph, services, parameters, lifecycle,
message types and the command-line tools' client. Imports cyclonedds; never rclpy."""
