"""The four ROS 2 nodes: thin adapters from the bus to the plant, laws, trajectories and dynamics."""

from robot_control.bringup.blas_threads import limit_blas_threads

limit_blas_threads()  # before a node module imports numpy
