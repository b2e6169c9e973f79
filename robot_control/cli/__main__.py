"""``python -m robot_control.cli …`` is ``robot-control …``."""

import sys

from robot_control.cli import main

sys.exit(main())
