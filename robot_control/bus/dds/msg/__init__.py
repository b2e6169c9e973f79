"""Cyclone DDS types laid out byte for byte as rmw_cyclonedds lays out the ROS 2 interfaces.

One module per group of ROS packages; ``robot_control.bus.dds.messages`` is the public entry point
(registry, topic names, type hashes, constructors).
"""
