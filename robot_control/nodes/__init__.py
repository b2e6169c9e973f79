"""The four ROS 2 nodes: thin adapters from the bus to the plant, laws, trajectories and dynamics."""
