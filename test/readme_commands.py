"""The shell commands README.md shows, parsed from the file itself so that a command added to the
README later is found by the tests that run them (test_readme_examples.py without ROS 2,
test_readme_examples_ros2.py with it).

A command is a line of a ```bash block (continuation lines and multi-line quotes joined, a
trailing ``# comment`` dropped) or an inline code span of the prose that starts with a command
word (``bash scripts/…``, ``robot-control …``, ``ros2 …``, ``python …``); a span that names a
command without being one (``robot-control launch`` in a sentence) is listed as such by the
tests, as is every command that cannot run in a test, with the reason.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"

#: the words an inline code span starts with when it is a command a reader may type
COMMAND_WORDS = ("bash ", "robot-control ", "ros2 ", "python ", "python3 ", ".venv/bin/",
                 "colcon ", "source ", "sudo ")

_FENCE = re.compile(r"^```(\w*)\s*$")
_INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")


@dataclass(frozen=True)
class Command:
    """One command of the README: its text as written, the section it is in, where it starts."""

    text: str  # the shell text, comment dropped, continuation lines joined with a space
    section: str  # the "## …" heading above it
    line: int  # 1-based line of README.md where it starts
    inline: bool  # an inline code span of the prose (else a line of a ```bash block)
    block: int = 0  # the README line of its block's opening fence (0: inline)

    @property
    def key(self) -> str:
        """The text with runs of whitespace made one space: what the tests' tables name."""
        return " ".join(self.text.split())


def _complete(text: str) -> bool:
    """Whether the shell text has no open quote (shlex's POSIX rules, as bash's for these)."""
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return False
    return True


def _without_comment(text: str) -> str:
    """The text before an unquoted ``#`` that starts a word (bash's comment rule)."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip()
    return text.rstrip()


def _block_commands(lines: list[str], first: int, section: str) -> list[Command]:
    """The commands of one ```bash block whose first line is README line ``first``."""
    out: list[Command] = []
    pending, start = "", first
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        if not pending:
            start = first + i
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        # a backslash-newline is no character to bash; a newline inside quotes is one
        text = pending + (line.lstrip() if pending.endswith(" ") else ("\n" if pending else "") + line)
        if text.endswith("\\"):
            pending = text[:-1].rstrip() + " "
            continue
        if not _complete(_without_comment(text)):
            pending = text
            continue
        out.append(Command(_without_comment(text), section, start, inline=False, block=first - 1))
        pending = ""
    if pending:
        raise ValueError(f"README.md:{start}: a command that never ends: {pending!r}")
    return out


def _inline_commands(paragraph: list[str], first: int, section: str) -> list[Command]:
    """The command spans of a prose paragraph (a span may wrap over lines)."""
    text = "\n".join(paragraph)
    return [Command(" ".join(m.group(1).split()), section, first + text.count("\n", 0, m.start()),
                    inline=True)
            for m in _INLINE.finditer(text) if m.group(1).lstrip().startswith(COMMAND_WORDS)]


def readme_commands(path: Path = README) -> list[Command]:
    """Every command README.md shows, in the order it shows them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Command] = []
    section, fence, block, block_start = "", None, [], 0
    paragraph: list[str] = []
    for number, line in enumerate(lines, 1):
        match = _FENCE.match(line)
        if fence is None and (match or not line.strip() or line.startswith("#")) and paragraph:
            out += _inline_commands(paragraph, number - len(paragraph), section)
            paragraph = []
        if fence is not None:
            if line.strip() == "```":
                if fence in ("bash", "sh", "shell", "console"):
                    out += _block_commands(block, block_start, section)
                fence, block = None, []
            else:
                block.append(line)
        elif match:
            fence, block_start = match.group(1), number + 1
        elif line.startswith("#"):
            section = line.lstrip("#").strip()
        elif line.strip():
            paragraph.append(line)
    if fence is not None:
        raise ValueError(f"README.md:{block_start - 1}: a code block that never closes")
    if paragraph:
        out += _inline_commands(paragraph, len(lines) - len(paragraph) + 1, section)
    return out


if __name__ == "__main__":  # list them: python test/readme_commands.py
    for c in readme_commands():
        print(f"{c.line:4d} {'inline' if c.inline else 'block '} {c.key}")


# --- running them ------------------------------------------------------------------------------

#: the time a command that stops by itself may take (a cold compile cache makes the first runs slow)
COMMAND_TIMEOUT_S = 300.0
#: how long a command that runs until stopped may take to print its first result
FIRST_RESULT_TIMEOUT_S = 240.0
#: a `--duration N` longer than this is run with this many seconds (the bound the CLI offers)
SHORT_DURATION_S = 1.0
#: the last line of `robot-control launch` (and the demo) when the run held: ok, or degraded by
#: the machine's load (missed deadlines; with --strict that fails the run, exit 1), never FAILED
#: for anything else
LAUNCH_HELD = r"^robot-control launch: (ok: ok|degraded: .+|FAILED: degraded \(--strict\): .+)\Z"
#: a --strict run's last line when only the machine's load failed it (exit 1)
STRICT_DEGRADED = r"^robot-control launch: FAILED: degraded \(--strict\): "

_DURATION = re.compile(r"--duration (\d+(?:\.\d*)?)")


def split_line(text: str) -> list[tuple[str, str]]:
    """The simple commands of a line as (command, separator after it: ';', '&' or ''), splitting
    at unquoted ``;`` and lone ``&`` (``&&`` chains stay one command)."""
    parts, quote, start, i = [], None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ";" or (ch == "&" and text[i + 1:i + 2] != "&" and text[i - 1:i] != "&"):
            parts.append((text[start:i].strip(), ch))
            start = i + 1
        i += 1
    parts.append((text[start:].strip(), ""))
    return [(c, sep) for c, sep in parts if c]


def words(text: str) -> list[str]:
    """The shell words of a command (quotes removed), or its whitespace split if shlex refuses."""
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def is_setup(text: str) -> bool:
    """A command that only changes the shell it runs in (a later command of its section sees it)."""
    return text.split(" ", 1)[0] in ("source", "export", ".")


def shortened(text: str) -> str:
    """The command with a ``--duration`` above SHORT_DURATION_S cut to it."""
    def cut(m: re.Match) -> str:
        return f"--duration {min(float(m.group(1)), SHORT_DURATION_S):g}"
    return _DURATION.sub(cut, text)


@dataclass
class Ran:
    """What one command did: its text as run, exit status and output (stdout + stderr)."""

    text: str
    code: int | None
    output: str
    problem: str = ""  # empty: it worked as the README says

    def report(self) -> str:
        """The command, why it failed, and its last lines (with a launch's figures and warnings
        above them, which a JSON summary would push out of the tail)."""
        lines = self.output.rstrip().splitlines()
        tail = lines[-15:]
        notable = [line for line in lines[:-15]
                   if line.startswith("[launch] achieved") or "[WARN]" in line or "[ERROR]" in line]
        return "\n".join([f"$ {self.text}", f"  -> exit {self.code}: {self.problem}",
                          *notable[-10:], *tail])


# --- which suite runs a command, and the ones no test runs ----------------------------------

#: commands the README shows that no test can run, with the reason (key: Command.key)
NOT_RUN: dict[str, str] = {
    "bash scripts/test.sh": "runs the suite's fast default",
    "bash scripts/test.sh --slow": "runs the suite's slow tests, this test included",
    "bash scripts/test_ros2.sh": "runs the ROS 2 suite, which holds test_readme_examples_ros2.py",
    "sudo apt-get install python3-numpy python3-scipy python3-yaml":
        "installs system packages (as root)",
    "python3 -m pip install --break-system-packages numba \"coverage>=7\" rosbags \"numpy==$(python3 "
    "-c 'import numpy; print(numpy.__version__)')\"":
        "installs into the system Python; scripts/test_ros2.sh does this step before the suite",
    "ros2 run rqt_topic rqt_topic --force-discover": "a GUI: needs a display (and a person)",
    "ROS_SECURITY_ENCLAVE_OVERRIDE=/robot_control/observer ros2 run rqt_topic rqt_topic "
    "--force-discover": "a GUI: needs a display (and a person)",
    "ros2 launch robot_control control.launch.yaml rqt:=true": "opens rqt: needs a display",
    "bash scripts/rqt_topic_screenshot.sh":
        "needs Xvfb and rqt, and rewrites docs/rqt_topic.png in the checkout",
    "python bench/loop.py": "a benchmark of minutes (speed is measured in bench/, not in tests)",
    "ros2 topic echo --once /rosout --qos-durability transient_local":
        "shown as the call that misses the history: it waits for the next line any node logs, "
        "which a stack running steadily may not log for minutes",
    "python bench/loop.py --startup":
        "a benchmark: times a cold start, so it empties the compile cache every test relies on",
    "python bench/cold_start.py --routes dds --repeat 5":
        "a benchmark of minutes that compiles every kernel cold, five times",
}

#: inline code spans that name a command in a sentence without being one to type
NOT_COMMANDS: frozenset[str] = frozenset({
    "ros2 launch", "robot-control launch", "robot-control launch: ok: ok", "ros2 bag info|play",
    "ros2 bag info", "ros2 bag reindex", "ros2 topic pub", "ros2 node list", "ros2 topic echo",
    "ros2 param set", "ros2 bag", "ros2 action list/info/send_goal",
    "source ~/ros2_ws/install/setup.bash",  # the set-up of the "second terminal" block
})


def needs_ros2(command: Command, ros_shell: bool) -> bool:
    """Whether the command runs in the ROS 2 suite: a ``ros2``/``colcon`` command, the SROS2
    security commands (sros2 makes the keystore), or any block command after the block sourced
    ROS 2 (``ros_shell``)."""
    found = words(command.text)
    return ((ros_shell and not command.inline) or "ros2" in found or "colcon" in found
            or bool(re.search(r"\bsecurity\b", command.text)))


def suites(commands: list[Command]) -> dict[Command, str]:
    """'main', 'ros2', 'setup', 'ros2 setup', 'not run' or 'not a command' for each command."""
    sources_ros = {c.block for c in commands if not c.inline and _sources_ros(c.text)}
    out, section, ros_shell = {}, None, False
    for c in commands:
        if c.section != section:
            section, ros_shell = c.section, False
        if c.key in NOT_COMMANDS and c.inline:
            out[c] = "not a command"
        elif c.key in NOT_RUN:
            out[c] = "not run"
        elif not c.inline and is_setup(c.text):
            # the shell of every later command of its section; of a ROS 2 shell (the block
            # sources ROS 2) only in the ROS 2 suite
            out[c] = "ros2 setup" if c.block in sources_ros else "setup"
        else:
            out[c] = "ros2" if needs_ros2(c, ros_shell) else "main"
        if _sources_ros(c.text) and not c.inline:
            ros_shell = True
    return out


def sections_of(commands: list[Command], kinds: dict[Command, str], suite: str) -> list[str]:
    """The README sections holding commands of ``suite`` ('main' or 'ros2'), in README order."""
    out: list[str] = []
    for c in commands:
        if kinds[c] == suite and c.section not in out:
            out.append(c.section)
    return out


def _sources_ros(text: str) -> bool:
    return is_setup(text) and bool(re.search(r"/opt/ros/|install/setup\.", text))
