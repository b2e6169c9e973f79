"""The simulated plant (integration, friction, contact, sensors), offline simulation, scenario
files, reports and plots. Submodules are imported where used (plotting pulls in matplotlib)."""

# first: numba fixes a kernel's cache folder when the kernel is defined, so the user cache
# (dynamics/compile_cache.py) is set before this room's kernels, whatever a process imports
from robot_control.dynamics import compile_cache  # noqa: F401, I001
