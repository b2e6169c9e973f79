"""The plant's command-source decision when the ROS graph names a writer late.

The graph is the input here, scripted: what ros_discovery_info (or rmw's graph cache) says at
each moment. The real race (authenticated discovery trailing the controller's first samples)
is exercised end to end by bench/security.py and the stack tests; these tests pin the decision.
"""

from __future__ import annotations

import pytest

from robot_control.nodes import command_source
from robot_control.nodes.command_source import UNNAMED, CommandSource

CONTROLLER = "/controller"
WRITER = bytes(range(16))
INTRUDER = bytes(range(100, 116))


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def error(self, text: str, **_) -> None:
        self.lines.append(("error", text))

    def info(self, text: str, **_) -> None:
        self.lines.append(("info", text))


class Graph:
    """What the plant's node reports: the topic's publishers by owner, as scripted."""

    def __init__(self) -> None:
        self.log = Log()
        self.publishers: list[tuple[str | None, bytes]] = []

    def get_logger(self) -> Log:
        return self.log

    def publishers_of(self, subscription) -> list[tuple[str | None, bytes]]:
        return list(self.publishers)


class Subscription:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def get_publisher_count(self) -> int:
        return len(self.graph.publishers)


@pytest.fixture
def source(monkeypatch):
    monkeypatch.setattr(command_source, "GRACE_S", 0.0)  # report an unnamed writer at once
    monkeypatch.setattr(command_source, "REFRESH_S", 0.0)  # ask the graph at every sample
    graph = Graph()
    src = CommandSource(graph, CONTROLLER)
    src.subscription = Subscription(graph)
    return graph, src


def test_a_controller_named_late_is_obeyed_once_named(source):
    graph, src = source
    graph.publishers = [(None, WRITER)]  # matched, its node's graph data not here yet
    assert not src.admits(WRITER) and not src.admits(WRITER)
    assert src.diagnostics()["foreign_publishers"] == f'["{UNNAMED} ({WRITER.hex()})"]'
    graph.publishers = [(CONTROLLER, WRITER)]
    assert src.admits(WRITER)
    assert src.diagnostics() == {}
    assert graph.log.lines[-1][0] == "info" and "names it late" in graph.log.lines[-1][1]


def test_without_gids_an_unnamed_publisher_is_asked_about_again(source):
    graph, src = source
    graph.publishers = [(None, WRITER)]
    assert not src.admits(None) and not src.admits(None)
    graph.publishers = [(CONTROLLER, WRITER)]
    assert src.admits(None)


def test_a_named_foreign_publisher_stays_refused(source):
    graph, src = source
    graph.publishers = [(CONTROLLER, WRITER), ("/intruder", INTRUDER)]
    assert src.admits(WRITER) and not src.admits(INTRUDER)
    graph.publishers = [(CONTROLLER, WRITER), (CONTROLLER, INTRUDER)]  # renamed: still refused
    assert not src.admits(INTRUDER)
    assert "/intruder" in src.diagnostics()["foreign_publishers"]
    graph.publishers = [(CONTROLLER, WRITER), ("/intruder", INTRUDER)]
    assert not src.admits(None)  # without GIDs: a foreign publisher is matched, nothing applies


def test_an_unnamed_writer_is_undecided_until_its_grace_ends(monkeypatch):
    graph = Graph()
    src = CommandSource(graph, CONTROLLER)
    src.subscription = Subscription(graph)
    monkeypatch.setattr(command_source, "REFRESH_S", 0.0)
    graph.publishers = [(None, WRITER)]
    assert not src.admits(WRITER) and src.undecided(WRITER)  # within GRACE_S: no stranger yet
    monkeypatch.setattr(command_source, "GRACE_S", 0.0)
    assert not src.admits(WRITER) and not src.undecided(WRITER)  # reported: refused
    graph.publishers = [(CONTROLLER, WRITER)]
    assert src.admits(WRITER) and not src.undecided(WRITER)


def test_a_named_stranger_is_not_undecided(source):
    graph, src = source
    graph.publishers = [("/intruder", INTRUDER)]
    assert not src.admits(INTRUDER) and not src.undecided(INTRUDER)


def test_ready_once_the_graph_names_a_matched_controller_writer(source):
    graph, src = source
    assert not src.ready()  # nothing matched
    graph.publishers = [(None, WRITER), ("/intruder", INTRUDER)]
    assert not src.ready()
    graph.publishers = [(CONTROLLER, WRITER)]
    assert src.ready()
    anyone = CommandSource(graph, "")
    anyone.subscription = Subscription(graph)
    assert anyone.ready()
    graph.publishers = []
    assert not anyone.ready()
