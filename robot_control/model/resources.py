"""Where the package's files are: its shared data (urdf/, config/, launch/) in a source tree or an
install, and the per-user cache directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "robot_control"


def share_dir() -> Path:
    """The directory holding urdf/, config/ and launch/.

    Order: a source checkout (editable install or running from the repository), the ament
    index of a sourced ROS 2 workspace, then ``<prefix>/share/robot_control`` of a pip install.
    """
    source = Path(__file__).resolve().parents[2]
    if (source / "package.xml").is_file() and (source / "config").is_dir():
        return source
    try:  # a colcon install of this package
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE))
    except Exception:  # noqa: BLE001 - ament is optional; any failure means "not in a workspace"
        pass
    for prefix in (sys.prefix, sys.base_prefix, Path.home() / ".local"):
        candidate = Path(prefix) / "share" / PACKAGE
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {PACKAGE} share directory (urdf/, config/)")


def share_path(*parts: str) -> Path:
    """A path inside the share directory, e.g. ``share_path("urdf", "puma560.urdf")``."""
    return share_dir().joinpath(*parts)


def user_cache_dir(env: dict[str, str] | None = None, platform: str = sys.platform) -> Path:
    """The per-user cache directory of this package (platformdirs' user_cache_dir rules)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Caches" / PACKAGE
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / PACKAGE / "Cache"
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"  # XDG: relative is invalid
    return base / PACKAGE
