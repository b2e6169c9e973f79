"""How fast bad files are refused and damaged bags recovered (issue 23, cases 6 and 7).

    python bench/files.py [--repeat 5]

Prints the median wall time of:
- robot_control.foundation.safe_yaml refusing a billion-laughs scenario (nested anchors in kp), a 100 MB
  file, a non-UTF-8 file, a document nested 150 deep and one of 650 000 numbers (3.9 MB), and
  loading a bundled scenario and a list of 99 990 numbers (the largest document accepted);
- load_robot of a 1000-link URDF chain (the tree built without recursion);
- ``reindex`` of a recorder-like bag (1 s chunks, 2 topics at 1 kHz) cut in its last chunk, per MB.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from test_reliability_files import SCENARIO_HEAD, chain_urdf, laughs  # noqa: E402

from robot_control.foundation import safe_yaml  # noqa: E402
from robot_control.model import load_robot  # noqa: E402
from robot_control.recording.bag import qos_of_profile  # noqa: E402
from robot_control.recording.writer import BagWriter, reindex_bag  # noqa: E402


def timed(action, repeat: int) -> float:
    """Median wall time of action() in seconds (a refusal counts as done)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            action()
        except safe_yaml.YamlError:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def files(folder: Path) -> dict[str, Path]:
    out = {"billion laughs (%d B)": laughs(SCENARIO_HEAD, "    kp"),
           "nested 150 deep": "a: " + "[" * 150 + "]" * 150,
           "accepted 99 990 numbers": "x: [" + ", ".join(["1.25"] * 99_990) + "]\n",
           "refused 650 000 numbers, 3.9 MB": "x: [" + ", ".join(["1.25"] * 650_000) + "]\n"}
    paths = {}
    for name, text in out.items():
        path = folder / f"{len(paths)}.yaml"
        path.write_text(text)
        paths[name.replace("%d", str(path.stat().st_size))] = path
    paths["100 MB file"] = folder / "big.yaml"
    with open(paths["100 MB file"], "wb") as fh:
        fh.truncate(100 * 1024 * 1024)
    paths["non-UTF-8"] = folder / "latin1.yaml"
    paths["non-UTF-8"].write_bytes("robot: ddarm\ndescription: café\n".encode("latin-1"))
    paths["bundled scenario"] = ROOT / "config" / "scenarios" / "huo_3_1_pd.yaml"
    return paths


def recorder_like_bag(path: Path, seconds: int) -> int:
    """A bag as the recorder writes it: 2 topics at 1 kHz, a checkpoint a second; cut inside the
    last chunk. Returns its size in bytes before the cut."""
    from robot_control.bus.dds import config as dds_config

    writer = BagWriter(path)
    qos = [qos_of_profile(dds_config.DEFAULT)]
    conns = [writer.add_topic(t, "std_msgs/msg/String", qos) for t in ("/a", "/b")]
    data = b"\x00\x01\x00\x00" + (120).to_bytes(4, "little") + b"x" * 119 + b"\x00"
    for k in range(seconds * 1000):
        for conn in conns:
            writer.write(conn, k * 1_000_000, data)
        if k % 1000 == 999:
            writer.checkpoint()
    writer.close()
    mcap = path / f"{path.name}.mcap"
    size = mcap.stat().st_size
    with open(mcap, "r+b") as fh:
        fh.truncate(size - 150_000)
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, path in files(folder).items():
            seconds = timed(lambda p=path: safe_yaml.load_file(p), args.repeat)
            print(f"safe_yaml.load_file, {name:28s} {seconds * 1e3:9.2f} ms")
        chain = folder / "chain1000.urdf"
        chain.write_text(chain_urdf(1000))
        seconds = timed(lambda: load_robot(chain), args.repeat)
        print(f"load_robot, 1000-link URDF chain             {seconds * 1e3:9.2f} ms")
        original = folder / "bag"
        size = recorder_like_bag(original, 30)
        times = []
        for k in range(args.repeat):
            copy = folder / f"copy{k}"
            shutil.copytree(original, copy)
            start = time.perf_counter()
            reindex_bag(copy)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(f"bag reindex, {size / 1e6:.1f} MB recorder-like bag      {median * 1e3:9.2f} ms "
              f"({median * 1e3 / (size / 1e6):.2f} ms/MB)")


if __name__ == "__main__":
    main()
