"""The rclpy-free transport: Cyclone DDS speaking rmw_cyclonedds' wire conventions (design.md,
"ROS 2 wire details") — nodes, containers, executor, graph, services, parameters, lifecycle,
message types and the command-line tools' client. Imports cyclonedds; never rclpy."""
