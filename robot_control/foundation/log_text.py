"""Log lines about a bad message stay short whatever the message holds (≤ 1 kB).

A message can carry 10 000 joint names or a megabyte-long one; a line that echoes them all
floods the log and costs the node the time to format it. These name the count instead.
"""

from __future__ import annotations

from collections.abc import Sequence

#: a log line lists at most this many of a message's names, each cut to NAME_CHARS
LISTED_NAMES = 8
NAME_CHARS = 40
#: and says at most this many characters of why
REASON_CHARS = 600


def names_text(names: Sequence[object], quote: bool = True) -> str:
    """The first LISTED_NAMES names (each cut to NAME_CHARS) and, if there are more, how many
    there are in all."""
    shown = []
    for name in list(names[:LISTED_NAMES]):
        text = str(name)
        text = text if len(text) <= NAME_CHARS else text[:NAME_CHARS] + "…"
        shown.append(repr(text) if quote else text)
    more = f", … ({len(names)} names)" if len(names) > LISTED_NAMES else ""
    body = ", ".join(shown) + more
    return f"[{body}]" if quote else body


def bounded(text: str, limit: int = REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"
