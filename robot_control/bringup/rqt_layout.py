"""The window layout of the rqt perspective (bringup/rqt_perspective.py), made by Qt itself:
rqt restores its window from ``QMainWindow.saveState()`` bytes (a binary format private to Qt),
so the layout is built once in an off-screen QMainWindow with dock widgets of the names rqt gives
its plugins' docks, and its geometry and state are saved from there. The same for the splitters
inside the console (message table over filters) and reconfigure (node list beside parameters).

Needs Qt's Python binding as rqt uses it (python_qt_binding: PyQt5 on Jazzy); imported on call.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

#: the screen the window is laid out for
SCREEN = (1920, 1080)
#: the title bar Qt leaves above a restored window (QWidget::restoreGeometry moves a window whose
#: top is higher down to this), pixels: the window fills the screen below it
TITLE_BAR = 20
#: the right column's width (reconfigure over the console) and the console's height (about its
#: least: its filter panes keep their minimum height even when its splitter hides them), pixels
RIGHT_WIDTH = 680
CONSOLE_HEIGHT = 420
#: most plots in two columns; more in three (a plot of q over 10 s wants width)
TWO_COLUMNS_UP_TO = 6
#: the reconfigure dock's node list beside the parameter editor (name, value and range of each
#: parameter: about 550 px), pixels
NODE_LIST_WIDTH = 130


@dataclass(frozen=True)
class WindowLayout:
    """What rqt restores its window and two plugins' splitters from (Qt-serialised bytes)."""
    geometry: bytes
    state: bytes
    console_splitter: bytes  # message table above, filters below (collapsed)
    reconfigure_splitter: bytes  # node list left, parameter editor right


def _application():
    """The QApplication of this process, created on Qt's off-screen platform if there is none."""
    from python_qt_binding.QtWidgets import QApplication

    return QApplication.instance() or QApplication(["robot_control_rqt", "-platform", "offscreen"])


def plot_grid(count: int) -> list[list[int]]:
    """The plots' indices by column, filled row by row: one column for one plot, two for up to
    TWO_COLUMNS_UP_TO, else three."""
    columns = 1 if count < 2 else 2 if count <= TWO_COLUMNS_UP_TO else 3
    rows = math.ceil(count / columns)
    return [[r * columns + c for r in range(rows) if r * columns + c < count]
            for c in range(columns)]


def window_layout(plots: list[str], reconfigure: str, console: str,
                  screen: tuple[int, int] = SCREEN) -> WindowLayout:
    """The window at the screen's size: the plot docks (object names, in order) in a grid over its
    full height, reconfigure and under it the console on the right: the plots get the most room
    (rqt_plot's legend covers the top left of its axes, the less the taller they are)."""
    from python_qt_binding.QtCore import Qt
    from python_qt_binding.QtWidgets import QDockWidget, QMainWindow, QSplitter, QWidget

    app = _application()
    window = QMainWindow()
    window.setDockNestingEnabled(True)  # as rqt's main window: docks split inside an area
    window.menuBar().addMenu("&File")  # rqt's has a menu bar: the docks get what it leaves

    def dock(name: str) -> QDockWidget:
        widget = QDockWidget(name, window)
        widget.setObjectName(name)
        widget.setWidget(QWidget())
        return widget

    plot_docks = [dock(name) for name in plots]
    columns = [[plot_docks[i] for i in column] for column in plot_grid(len(plots))]
    window.addDockWidget(Qt.LeftDockWidgetArea, columns[0][0])
    for column in columns[1:]:
        window.splitDockWidget(columns[0][0], column[0], Qt.Horizontal)
    for column in columns:
        for above, below in zip(column, column[1:], strict=False):
            window.splitDockWidget(above, below, Qt.Vertical)
    reconfigure_dock, console_dock = dock(reconfigure), dock(console)
    window.addDockWidget(Qt.RightDockWidgetArea, reconfigure_dock)
    window.splitDockWidget(reconfigure_dock, console_dock, Qt.Vertical)

    width, height = screen[0], screen[1] - TITLE_BAR
    window.setGeometry(0, 0, width, height)
    window.show()
    app.processEvents()
    window.resizeDocks([reconfigure_dock], [RIGHT_WIDTH], Qt.Horizontal)
    window.resizeDocks([reconfigure_dock, console_dock], [height - CONSOLE_HEIGHT, CONSOLE_HEIGHT],
                       Qt.Vertical)
    plots_width = width - RIGHT_WIDTH
    window.resizeDocks([c[0] for c in columns], [plots_width // len(columns)] * len(columns),
                       Qt.Horizontal)
    for column in columns:
        window.resizeDocks(column, [height // len(column)] * len(column), Qt.Vertical)
    app.processEvents()
    layout = WindowLayout(
        geometry=window_geometry(*screen), state=bytes(window.saveState()),
        console_splitter=_splitter_state(QSplitter, Qt.Vertical, [CONSOLE_HEIGHT, 0]),
        reconfigure_splitter=_splitter_state(
            QSplitter, Qt.Horizontal, [NODE_LIST_WIDTH, RIGHT_WIDTH - NODE_LIST_WIDTH]))
    window.close()
    window.deleteLater()
    return layout


def window_geometry(width: int, height: int) -> bytes:
    """``QWidget.saveGeometry()`` bytes (format 2.0, read by Qt 5 and 6) of a window whose frame
    fills a width×height screen, a title bar above its client area. Written here, not saved from
    the off-screen window: Qt refuses a geometry saved on a screen of another width."""
    # QRect as Qt streams it: left, top, right, bottom
    frame, client = (0, 0, width - 1, height - 1), (0, TITLE_BAR, width - 1, height - 1)
    return struct.pack(">IHH4i4iiBBi", 0x1D9D0CB, 2, 0, *frame, *client, 0, False, False, width)


def _splitter_state(splitter_class, orientation, sizes: list[int]) -> bytes:
    """``QSplitter.saveState()`` of a splitter with these pane sizes (0: collapsed)."""
    from python_qt_binding.QtWidgets import QWidget

    splitter = splitter_class(orientation)
    for _ in sizes:
        splitter.addWidget(QWidget())
    splitter.setSizes(sizes)
    state = bytes(splitter.saveState())
    splitter.deleteLater()
    return state
