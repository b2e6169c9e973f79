"""Run this package's ROS 2 YAML launch files without ROS 2: ``robot-control launch``.

It reads the subset of the launch_yaml frontend that ``launch/control.launch.yaml`` uses, with the
meaning ``ros2 launch`` gives it, and starts each ``node`` as its own process with the standard
``--ros-args`` (``-r __node:=``, ``-r __ns:=``, ``--params-file``, ``-p name:=value``, ``-r``).

Supported entities: ``arg`` (name, default, description, choice), ``let`` (name, value),
``set_env`` (name, value, if, unless: for the nodes that follow it, as launch's
SetEnvironmentVariable) and ``node`` (pkg, exec, name, namespace, output, param, remap,
ros_args, args, if, unless, on_exit: ``shutdown``, whose exit ends the launch as in launch); a node
whose executable is ``robot_control_container`` is one process running the nodes its ``args`` name.
``param`` entries are ``{from: FILE}`` or ``{name: N, value: V}`` (or ``{name: N, param: [...]}``,
nested names joined by dots). Substitutions: ``$(var N)``, ``$(env N [default])``, ``$(optenv N
[default])``, ``$(find-pkg-share PKG)``, ``$(dirname)``. Parameter values follow launch_ros: the
substituted text is read as YAML (``1000`` an integer, ``false`` a boolean, ``'text'`` a string,
empty text stays an empty string). A ``from`` file that does not exist is skipped with a warning,
as launch_ros does. Anything else in a file is an error, as an unknown attribute is for ``ros2
launch``. Every node's output is shown, each line prefixed ``[name]`` (``output: log`` is accepted
but not written to a log file). Starting and stopping the node processes: launch_processes.py.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from robot_control.bus.ros_args import RosArgsError, check_namespace
from robot_control.foundation.safe_yaml import YamlError, load_file, load_text

PACKAGE = "robot_control"
DEFAULT_LAUNCH_FILE = "control.launch.yaml"

#: executables of this package -> the module a node process runs (``python -m <module>``)
EXECUTABLES = {
    "plant": "robot_control.nodes.plant_node",
    "controller": "robot_control.nodes.controller_node",
    "trajectory_generator": "robot_control.nodes.trajectory_node",
    "dynamics_server": "robot_control.nodes.dynamics_server_node",
    "lifecycle_manager": "robot_control.nodes.lifecycle_manager",
    "cell_plant": "robot_control.nodes.cell_plant_node",
    "cell_controller": "robot_control.nodes.cell_controller_node",
    "robot_control_container": "robot_control.nodes.container",
    "robot_control_view": "robot_control.view.app",  # the browser view (view:=true)
}
#: executables whose main waits at the launcher's start gate (nodes/start_gate.py): every node's
#: (nodes/common.run_node, the container); the view joins the bus once the nodes may
GATED = frozenset(EXECUTABLES) - {"robot_control_view"}
#: executables of this package that need ROS 2 itself, and why
ROS_ONLY = {"rqt_robot_control": "it opens rqt, which needs ROS 2 (use ros2 launch)"}
#: executables whose /controller/state says the control loop is closed
CONTROLLERS = ("controller", "cell_controller")
#: executables that compose several nodes into one process (their arguments name the nodes)
CONTAINERS = ("robot_control_container",)

NODE_KEYS = {"pkg", "exec", "name", "namespace", "output", "param", "remap", "ros_args", "args",
             "if", "unless", "on_exit"}
OUTPUTS = ("screen", "log", "both")


class LaunchError(ValueError):
    """A launch file this runner cannot run, with the reason."""


@dataclass
class LaunchArgument:
    """An ``arg`` entity: a value the caller may set with ``name:=value``."""

    name: str
    default: str | None
    description: str = ""
    choices: list[str] | None = None  # launch's ``choice`` list: any other value is refused

    def check(self, value: str) -> str:
        """``value`` if it is one of the choices (or there are none), else LaunchError."""
        if self.choices is not None and value not in self.choices:
            raise LaunchError(f'Argument "{self.name}" provided value "{value}" is not valid. '
                              f"Valid options are: {self.choices}")
        return value


@dataclass
class NodeLaunch:
    """A ``node`` entity after substitution: everything needed to start its process."""

    package: str
    executable: str
    name: str | None = None
    namespace: str | None = None
    output: str = "log"
    params_files: list[str] = field(default_factory=list)
    params: dict[str, object] = field(default_factory=dict)
    remaps: list[tuple[str, str]] = field(default_factory=list)
    ros_args: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # set_env entities before this node
    on_exit: str | None = None  # "shutdown": its exit, whatever the status, ends the launch

    @property
    def label(self) -> str:
        """The prefix of its output lines: the node name (the executable when unnamed)."""
        return self.name or self.executable

    @property
    def fqn(self) -> str:
        ns = (self.namespace or "/").rstrip("/")
        return f"{ns}/{self.name or self.executable}"

    def members(self) -> list[tuple[str, str]]:
        """(executable, fully qualified name) of each node the process runs: this node, or the
        nodes a container composes (its ``args``, else its default list), by their default
        names in its namespace."""
        if self.executable not in CONTAINERS:
            return [(self.executable, self.fqn)]
        from robot_control.nodes.container import component_names

        ns = (self.namespace or "/").rstrip("/")
        try:
            return [(name, f"{ns}/{name}") for name in component_names(self.args)]
        except ValueError as exc:
            raise LaunchError(f"node {self.label}: {exc}") from None


@dataclass
class LaunchPlan:
    """A launch file read with given argument values."""

    file: Path
    arguments: list[LaunchArgument]
    values: dict[str, str]
    nodes: list[NodeLaunch]

    def members(self) -> list[tuple[str, str]]:
        """(executable, fully qualified name) of every node of the plan, composed ones too."""
        return [member for node in self.nodes for member in node.members()]

    @property
    def namespace(self) -> str:
        """The namespace the plan's nodes share (``/`` if none, or if they do not share one)."""
        spaces = {node.namespace or "/" for node in self.nodes}
        return spaces.pop() if len(spaces) == 1 else "/"


# --- substitutions -----------------------------------------------------------------------------


def _find_closing(text: str, start: int) -> int:
    """Index of the ``)`` that closes the ``$(`` opened just before ``start``."""
    depth, quote, i = 1, "", start
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif text.startswith("$(", i):
            depth += 1
            i += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise LaunchError(f"unterminated substitution in '{text}'")


def substitute(text: str, values: dict[str, str], launch_file: Path | None = None) -> str:
    """``text`` with every ``$(…)`` replaced (inner substitutions first), as launch does."""
    out, i = [], 0
    while (j := text.find("$(", i)) >= 0:
        out.append(text[i:j])
        end = _find_closing(text, j + 2)
        out.append(_evaluate(text[j + 2 : end], values, launch_file))
        i = end + 1
    out.append(text[i:])
    return "".join(out)


def _evaluate(body: str, values: dict[str, str], launch_file: Path | None) -> str:
    """One substitution ``kind arg…`` (its arguments already may hold substitutions)."""
    kind, _, rest = body.strip().partition(" ")
    words = [substitute(w, values, launch_file) for w in _split_words(rest)]
    if kind == "var":
        _arity(kind, words, 1, 1)
        if words[0] not in values:
            raise LaunchError(f"$(var {words[0]}): no launch argument '{words[0]}' "
                              f"(known: {', '.join(values) or 'none'})")
        return values[words[0]]
    if kind in ("env", "optenv"):
        _arity(kind, words, 1, 2)
        if words[0] in os.environ:
            return os.environ[words[0]]
        if len(words) == 2 or kind == "optenv":
            return words[1] if len(words) == 2 else ""
        raise LaunchError(f"$(env {words[0]}): environment variable '{words[0]}' is not set")
    if kind == "find-pkg-share":
        _arity(kind, words, 1, 1)
        return str(package_share(words[0]))
    if kind == "dirname":
        _arity(kind, words, 0, 0)
        if launch_file is None:
            raise LaunchError("$(dirname) outside a launch file")
        return str(launch_file.resolve().parent)
    if kind == "eval":
        return _python_expression(words)
    raise LaunchError(f"unsupported substitution $({body}); robot-control launch knows var, env, "
                      "optenv, find-pkg-share, dirname and eval (use ros2 launch for the others)")


def _python_expression(words: list[str]) -> str:
    """``$(eval EXPR [MODULES])`` as launch's PythonExpression: EXPR evaluated with math's names
    and the comma-separated MODULES (default math) by name."""
    import importlib
    import math

    _arity("eval", words, 1, 2)
    names = [m.strip() for m in words[1].split(",")] if len(words) == 2 else ["math"]
    scope: dict[str, object] = {}
    for name in names:
        module = importlib.import_module(name)
        if module is math:
            scope.update(vars(math))
        scope[module.__name__] = module
    try:
        return str(eval(words[0], {}, scope))  # noqa: S307 - the launch file's own expression
    except Exception as exc:  # noqa: BLE001 - any error of the expression, said in one line
        raise LaunchError(f"$(eval {words[0]}): {exc}") from exc


def _split_words(text: str) -> list[str]:
    """Arguments of a substitution: split at blanks outside quotes and nested ``$(…)``."""
    words, word, depth, quote, has_word = [], [], 0, "", False
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            else:
                word.append(c)
        elif depth == 0 and c in "'\"":
            quote, has_word = c, True
        elif depth == 0 and c.isspace():
            if has_word:
                words.append("".join(word))
            word, has_word = [], False
        else:
            if text.startswith("$(", i):
                depth += 1
            elif c == ")" and depth:
                depth -= 1
            word.append(c)
            has_word = True
        i += 1
    if quote:
        raise LaunchError(f"unbalanced quote in '{text}'")
    if has_word:
        words.append("".join(word))
    return words


def _arity(kind: str, words: list[str], lo: int, hi: int) -> None:
    if not lo <= len(words) <= hi:
        raise LaunchError(f"$({kind} …) takes {lo}..{hi} arguments, got {words}")


def package_share(package: str) -> Path:
    """``$(find-pkg-share PKG)``: this package's share directory, else the ament index."""
    if package == PACKAGE:
        from robot_control.model.resources import share_dir

        return share_dir()
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(package))
    except Exception as exc:  # noqa: BLE001 - ament is absent or does not know the package
        raise LaunchError(f"$(find-pkg-share {package}): package not found ({exc})") from exc


# --- parameter values --------------------------------------------------------------------------


def parameter_value(text: str) -> object:
    """A substituted ``value`` as launch_ros types it: YAML rules, an empty text stays ''."""
    if text == "":
        return ""
    try:
        value = load_text(text)
    except YamlError:
        return text
    if value is None:
        return text
    if isinstance(value, list):
        if not value or len({type(v) for v in value}) != 1 or \
                not isinstance(value[0], bool | int | float | str):
            raise LaunchError(f"parameter value {text!r}: a list must be non-empty with items "
                              "of one type (bool, int, float or str)")
        return value
    if isinstance(value, bool | int | float | str):
        return value
    raise LaunchError(f"parameter value {text!r} is a {type(value).__name__}; allowed are "
                      "bool, int, float, str and uniform lists of those")


def ros_arg_value(value: object) -> str:
    """The text of ``-p name:=<text>`` that a node reads back (as YAML) as exactly ``value``."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30)
    return text.removesuffix("\n...\n").strip()


# --- the launch file ---------------------------------------------------------------------------


def default_launch_file() -> Path:
    from robot_control.model.resources import share_path

    return share_path("launch", DEFAULT_LAUNCH_FILE)


def resolve_launch_file(name: str | None) -> Path:
    """A path, or the name of a file in this package's ``launch/`` directory."""
    if not name:
        return default_launch_file()
    path = Path(name)
    if path.is_file():
        return path
    from robot_control.model.resources import share_path

    bundled = share_path("launch", name)
    if bundled.is_file():
        return bundled
    raise LaunchError(f"launch file '{name}' not found (neither a path nor in "
                      f"{bundled.parent})")


def split_overrides(items: list[str]) -> tuple[str | None, dict[str, str]]:
    """``[FILE] name:=value …`` from the command line -> (FILE or None, overrides)."""
    file, overrides = None, {}
    for item in items:
        if ":=" in item:
            name, value = item.split(":=", 1)
            if not name:
                raise LaunchError(f"launch argument '{item}' has no name")
            overrides[name] = value
        elif file is None:
            file = item
        else:
            raise LaunchError(f"unexpected '{item}': give one launch file and name:=value pairs")
    return file, overrides


def read_entities(path: Path) -> list[tuple[str, dict]]:
    """The ``launch:`` list of a YAML launch file as (entity type, attributes) pairs."""
    doc = load_file(path, LaunchError)
    if not isinstance(doc, dict) or set(doc) != {"launch"} or not isinstance(doc["launch"], list):
        raise LaunchError(f"{path}: a YAML launch file is a mapping with one key, 'launch', "
                          "holding a list of entities")
    entities = []
    for item in doc["launch"]:
        if not isinstance(item, dict) or len(item) != 1:
            raise LaunchError(f"{path}: each entity is a one-key mapping, got {item!r}")
        (kind, attrs), = item.items()
        if not isinstance(attrs, dict):
            raise LaunchError(f"{path}: '{kind}' needs attributes, got {attrs!r}")
        entities.append((kind, attrs))
    return entities


def load_launch_file(path: str | Path, overrides: dict[str, str] | None = None) -> LaunchPlan:
    """Read a launch file with ``name:=value`` overrides: its arguments, values and nodes."""
    path = Path(path)
    overrides = dict(overrides or {})
    values: dict[str, str] = {}
    arguments: list[LaunchArgument] = []
    nodes: list[NodeLaunch] = []
    env: dict[str, str] = {}
    for kind, attrs in read_entities(path):
        if kind == "arg":
            arg = _read_arg(attrs, path)
            arguments.append(arg)
            if arg.name in overrides:
                values[arg.name] = arg.check(overrides[arg.name])
            elif arg.default is not None:
                values[arg.name] = arg.check(substitute(arg.default, values, path))
            else:
                raise LaunchError(f"launch argument '{arg.name}' has no default: give "
                                  f"{arg.name}:=<value>")
        elif kind == "let":
            _require_keys(attrs, {"name", "value"}, {"name", "value"}, "let", path)
            values[str(attrs["name"])] = substitute(str(attrs["value"]), values, path)
        elif kind == "set_env":
            _require_keys(attrs, {"name", "value", "if", "unless"}, {"name", "value"}, "set_env",
                          path)
            if _condition_holds(attrs, values, path):
                env[substitute(str(attrs["name"]), values, path)] = \
                    substitute(str(attrs["value"]), values, path)
        elif kind == "node":
            node = _read_node(attrs, values, path)
            if node is not None:
                node.env = dict(env)
                nodes.append(node)
        else:
            raise LaunchError(f"{path}: robot-control launch runs 'arg', 'let', 'set_env' and "
                              f"'node' entities; '{kind}' needs ros2 launch")
    unknown = set(overrides) - {a.name for a in arguments}
    if unknown:
        raise LaunchError(f"unknown launch argument(s) {sorted(unknown)}; this file declares "
                          f"{[a.name for a in arguments]}")
    return LaunchPlan(path, arguments, values, nodes)


def _require_keys(attrs: dict, allowed: set[str], required: set[str], kind: str,
                  path: Path) -> None:
    unknown = set(attrs) - allowed
    if unknown:
        raise LaunchError(f"{path}: '{kind}' has unsupported attribute(s) {sorted(unknown)}")
    missing = required - set(attrs)
    if missing:
        raise LaunchError(f"{path}: '{kind}' needs attribute(s) {sorted(missing)}")


def _read_arg(attrs: dict, path: Path) -> LaunchArgument:
    _require_keys(attrs, {"name", "default", "description", "choice"}, {"name"}, "arg", path)
    for key in ("default", "description"):
        if key in attrs and not isinstance(attrs[key], str):
            # ros2 launch refuses a non-string attribute here: '1000' must be quoted
            raise LaunchError(f"{path}: arg '{attrs['name']}': {key} must be a string (quote it)")
    choices = None
    if "choice" in attrs:  # launch's frontend: choice: [{value: a}, {value: b}]
        entries = attrs["choice"]
        if not isinstance(entries, list) or not entries or not all(
                isinstance(c, dict) and set(c) == {"value"} and isinstance(c["value"], str)
                for c in entries):
            raise LaunchError(f"{path}: arg '{attrs['name']}': choice is a non-empty list of "
                              "{value: '<text>'}")
        choices = [c["value"] for c in entries]
    return LaunchArgument(str(attrs["name"]), attrs.get("default"), attrs.get("description", ""),
                          choices)


def _truthy(text: str, what: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise LaunchError(f"{what}: '{text}' is not a boolean (true, false, 1, 0)")


def _condition_holds(attrs: dict, values: dict[str, str], path: Path) -> bool:
    """An entity's ``if`` / ``unless`` conditions (absent: it holds)."""
    if "if" in attrs and not _truthy(substitute(str(attrs["if"]), values, path), "if"):
        return False
    return not ("unless" in attrs and
                _truthy(substitute(str(attrs["unless"]), values, path), "unless"))


def _read_node(attrs: dict, values: dict[str, str], path: Path) -> NodeLaunch | None:
    """A ``node`` entity, or None when its ``if`` / ``unless`` condition skips it."""
    _require_keys(attrs, NODE_KEYS, {"exec"}, "node", path)
    sub = lambda v: substitute(str(v), values, path)  # noqa: E731
    if not _condition_holds(attrs, values, path):
        return None
    node = NodeLaunch(package=sub(attrs.get("pkg", "")), executable=sub(attrs["exec"]))
    if "name" in attrs:
        node.name = sub(attrs["name"])
    if "namespace" in attrs:
        try:  # launch_ros makes it absolute; rcl refuses a name that breaks the naming rules
            ns = check_namespace(sub(attrs["namespace"]))
        except RosArgsError as exc:
            raise LaunchError(f"{path}: node {attrs.get('name', attrs.get('exec'))}: {exc}") from None
        node.namespace = None if ns == "/" else ns
    if "on_exit" in attrs:
        node.on_exit = sub(attrs["on_exit"])
        if node.on_exit != "shutdown":  # as launch: the only action its frontend takes here
            raise LaunchError(f"{path}: node on_exit must be 'shutdown', got '{node.on_exit}'")
    node.output = sub(attrs.get("output", "log"))
    if node.output not in OUTPUTS:
        raise LaunchError(f"{path}: node output must be one of {OUTPUTS}, got '{node.output}'")
    for entry in attrs.get("param", []) or []:
        _read_param(entry, node, values, path)
    for remap in attrs.get("remap", []) or []:
        if not isinstance(remap, dict) or set(remap) != {"from", "to"}:
            raise LaunchError(f"{path}: a remap is {{from: …, to: …}}, got {remap!r}")
        node.remaps.append((sub(remap["from"]), sub(remap["to"])))
    node.ros_args = shlex.split(sub(attrs["ros_args"])) if "ros_args" in attrs else []
    node.args = shlex.split(sub(attrs["args"])) if "args" in attrs else []
    return node


def _read_param(entry: dict, node: NodeLaunch, values: dict[str, str], path: Path,
                prefix: str = "") -> None:
    """One ``param`` entry: a file (``from``), a value, or nested params under a name."""
    if not isinstance(entry, dict):
        raise LaunchError(f"{path}: a param entry is a mapping, got {entry!r}")
    if "from" in entry:
        if set(entry) - {"from"} or prefix:
            raise LaunchError(f"{path}: a 'from' param takes no other attribute: {entry!r}")
        file = substitute(str(entry["from"]), values, path)
        if not Path(file).is_file():
            # launch_ros warns and leaves such a file out; so do we (the warning is on stderr),
            # except for the per-robot stack file of a robot given as a file: it has none
            robot = str(values.get("robot", ""))
            if not (robot and file.endswith(f"stack.{robot}.yaml") and Path(robot).is_file()):
                print(f"[launch] parameter file {file} is not a file: skipped", file=sys.stderr)
            return
        node.params_files.append(file)
        return
    _require_keys(entry, {"name", "value", "param"}, {"name"}, "param", path)
    name = prefix + substitute(str(entry["name"]), values, path)
    if ("value" in entry) == ("param" in entry):
        raise LaunchError(f"{path}: param '{name}' needs exactly one of value or nested param")
    if "param" in entry:
        for nested in entry["param"]:
            _read_param(nested, node, values, path, prefix=name + ".")
        return
    node.params[name] = _param_entry_value(entry["value"], values, path, name)


def _param_entry_value(raw: object, values: dict[str, str], path: Path, name: str) -> object:
    if isinstance(raw, bool | int | float):
        return raw
    if isinstance(raw, str):
        return parameter_value(substitute(raw, values, path))
    if isinstance(raw, list) and raw:
        items = [parameter_value(substitute(v, values, path)) if isinstance(v, str) else v
                 for v in raw]
        if len({type(v) for v in items}) != 1:
            raise LaunchError(f"{path}: param '{name}': list items must have one type: {items}")
        return items
    raise LaunchError(f"{path}: param '{name}': unsupported value {raw!r}")


# --- processes ---------------------------------------------------------------------------------


def node_module(node: NodeLaunch) -> str:
    """The Python module a node of this package runs."""
    if node.package != PACKAGE:
        raise LaunchError(f"node {node.label}: robot-control launch starts {PACKAGE} nodes only, "
                          f"not package '{node.package}'")
    if node.executable in ROS_ONLY:
        raise LaunchError(f"node {node.label}: {ROS_ONLY[node.executable]}")
    if node.executable not in EXECUTABLES:
        raise LaunchError(f"node {node.label}: unknown executable '{node.executable}' "
                          f"(known: {', '.join(EXECUTABLES)})")
    if node.executable in CONTAINERS and node.name:
        raise LaunchError(f"node {node.label}: a container takes no name (__node:= would rename "
                          "every node it composes)")
    node.members()  # its arguments name nodes it can make
    return EXECUTABLES[node.executable]


def node_command(node: NodeLaunch, python: str = sys.executable) -> list[str]:
    """The command line of a node process, with the ``--ros-args`` ``ros2 launch`` would pass."""
    cmd = [python, "-m", node_module(node), *node.args, "--ros-args"]
    if node.name:
        cmd += ["-r", f"__node:={node.name}"]
    if node.namespace:
        cmd += ["-r", f"__ns:={node.namespace}"]
    for file in node.params_files:
        cmd += ["--params-file", file]
    for name, value in node.params.items():
        cmd += ["-p", f"{name}:={ros_arg_value(value)}"]
    for src, dst in node.remaps:
        cmd += ["-r", f"{src}:={dst}"]
    return cmd + node.ros_args
