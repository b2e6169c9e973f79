"""The rclpy transport: the bus interface (robot_control.bus.node) on a sourced ROS 2."""
