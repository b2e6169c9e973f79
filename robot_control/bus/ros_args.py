"""Parse the standard ROS 2 command-line arguments (``--ros-args … [--]``), with or without rclpy.

Supported, as rcl does: ``-p name:=value`` / ``--param``, ``--params-file FILE``,
``-r from:=to`` / ``--remap`` (topic remaps and the special ``__node:=`` / ``__ns:=``, optionally
prefixed ``node_name:``), ``--log-level [name:=]level``, ``-e``/``--enclave`` (accepted, ignored).
Values of ``-p`` are parsed as YAML scalars/lists, like rcl does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from robot_control.foundation.safe_yaml import load_text


class RosArgsError(ValueError):
    """A malformed --ros-args section."""


@dataclass
class RosArgs:
    """What a node needs from its command line."""

    params: dict[str, object] = field(default_factory=dict)
    params_files: list[str] = field(default_factory=list)
    remaps: dict[str, str] = field(default_factory=dict)
    node_name: str | None = None
    namespace: str | None = None
    log_level: str | None = None
    unparsed: list[str] = field(default_factory=list)


def parse_value(text: str) -> object:
    """A ``-p`` value as rcl reads it: YAML (so ``1`` is an int, ``[1.0, 2]`` a list, ``true`` a bool)."""
    return load_text(text, f"cannot parse parameter value '{text}'", RosArgsError)


def _split_assign(text: str, flag: str) -> tuple[str, str]:
    if ":=" not in text:
        raise RosArgsError(f"{flag} expects name:=value, got '{text}'")
    name, value = text.split(":=", 1)
    if not name:
        raise RosArgsError(f"{flag} expects name:=value, got '{text}'")
    return name, value


def _for_node(name: str, node_name: str | None) -> str | None:
    """Strip a ``node:`` prefix; None if the rule targets another node."""
    if ":" in name and not name.startswith("/"):
        target, rest = name.split(":", 1)
        if node_name is not None and target != node_name:
            return None
        return rest
    return name


def parse_ros_args(argv: list[str], node_name: str | None = None) -> RosArgs:
    """Extract the ``--ros-args`` sections of argv; everything else lands in ``unparsed``."""
    out = RosArgs()
    i, inside = 0, False
    while i < len(argv):
        arg = argv[i]
        if arg == "--ros-args":
            inside = True
            i += 1
            continue
        if not inside:
            out.unparsed.append(arg)
            i += 1
            continue
        if arg == "--":
            inside = False
            i += 1
            continue

        needs_value = arg in ("-p", "--param", "--params-file", "-r", "--remap", "--log-level",
                              "-e", "--enclave")
        if needs_value and i + 1 >= len(argv):
            raise RosArgsError(f"{arg} needs a value")
        operand = argv[i + 1] if needs_value else ""
        if arg in ("-p", "--param"):
            name, text = _split_assign(operand, arg)
            target = _for_node(name, node_name)
            if target is not None:
                out.params[target] = parse_value(text)
            i += 2
        elif arg == "--params-file":
            out.params_files.append(operand)
            i += 2
        elif arg in ("-r", "--remap"):
            src, dst = _split_assign(operand, arg)
            target = _for_node(src, node_name)
            if target == "__node" or target == "__name":
                out.node_name = dst
            elif target == "__ns":
                out.namespace = dst if dst.startswith("/") else "/" + dst
            elif target is not None:
                out.remaps[target] = dst
            i += 2
        elif arg == "--log-level":
            level = operand
            out.log_level = level.split(":=", 1)[-1].lower()
            i += 2
        elif arg in ("-e", "--enclave"):
            i += 2
        elif arg in ("--disable-rosout-logs", "--enable-rosout-logs", "--disable-stdout-logs",
                     "--enable-stdout-logs", "--disable-external-lib-logs"):
            i += 1
        else:
            raise RosArgsError(f"unknown --ros-args option '{arg}'")
    return out


def resolve_name(name: str, namespace: str, node_name: str) -> str:
    """Fully qualified topic/service name: ``~`` is the node's private namespace (rcl rules)."""
    ns = namespace.rstrip("/")
    if name.startswith("/"):
        return name
    if name == "~":
        return f"{ns}/{node_name}"
    if name.startswith("~/"):
        return f"{ns}/{node_name}/{name[2:]}"
    return f"{ns}/{name}"


#: rmw's limit on a namespace's length (RMW_NAMESPACE_MAX_LENGTH = topic limit 247 − 2)
NAMESPACE_MAX_LENGTH = 245


def namespace_error(namespace: str) -> str | None:
    """Which rule of rmw_validate_namespace ``namespace`` breaks (None if it is valid).

    The ROS naming rules (design.ros2.org "Topic and Service name mapping"; rmw/validate_namespace.c):
    absolute, tokens of letters, digits and underscores separated by single slashes, no token
    starting with a digit, no trailing slash (except the root ``/``), at most 245 characters.
    """
    if not namespace:
        return "a namespace must not be empty"
    if not namespace.startswith("/"):
        return "a namespace must be absolute (start with '/')"
    if len(namespace) > NAMESPACE_MAX_LENGTH:
        return f"a namespace must be at most {NAMESPACE_MAX_LENGTH} characters long"
    if namespace == "/":
        return None
    bad = sorted({c for c in namespace if not (c.isascii() and (c.isalnum() or c in "_/"))})
    if bad:
        return ("a namespace may contain only letters, digits, underscores and '/', not "
                + ", ".join(repr(c) for c in bad))
    if "//" in namespace:
        return "a namespace must not contain repeated '/'"
    if namespace.endswith("/"):
        return "a namespace must not end with '/'"
    for token in namespace[1:].split("/"):
        if token[0].isdigit():
            return f"a namespace token must not start with a digit ('{token}')"
    return None


def node_name_error(name: str) -> str | None:
    """Which rule of rmw_validate_node_name ``name`` breaks (None if it is valid): letters,
    digits and underscores, not starting with a digit, at most 255 characters."""
    if not name:
        return "a node name must not be empty"
    if len(name) > 255:
        return "a node name must be at most 255 characters long"
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c == "_"))})
    if bad:
        return ("a node name may contain only letters, digits and underscores, not "
                + ", ".join(repr(c) for c in bad))
    if name[0].isdigit():
        return "a node name must not start with a digit"
    return None


def check_namespace(namespace: str) -> str:
    """``namespace`` made absolute (``arm1`` → ``/arm1``, empty → ``/``); RosArgsError naming
    the rule if it is not a valid ROS namespace."""
    absolute = namespace if namespace.startswith("/") else "/" + namespace
    problem = namespace_error(absolute)
    if problem is not None:
        raise RosArgsError(f"invalid namespace '{namespace}': {problem}")
    return absolute


def namespace_prefix(namespace: str) -> str:
    """What a stack in ``namespace`` puts before its topics (``left`` → ``/left``; ``/`` → ``''``);
    RosArgsError naming the rule a bad namespace breaks."""
    absolute = check_namespace(namespace)
    return "" if absolute == "/" else absolute.rstrip("/")
