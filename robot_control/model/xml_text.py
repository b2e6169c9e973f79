"""An ElementTree as indented XML text, without recursion.

``ET.indent`` and ``ET.tostring`` recurse once per nesting level, so MJCF's nested bodies of a
1000-link chain exceed Python's recursion limit; this walk keeps its own stack, so the depth is
bounded by memory only. The text is what ``ET.indent`` + ``ET.tostring`` write: two spaces a
level, ``<tag a="v" />`` for an empty element.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

#: what an attribute value must escape beyond &, < and > (ElementTree's choice)
_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#09;"}


def _open_tag(element: ET.Element, close: bool) -> str:
    attrs = "".join(f' {k}="{escape(str(v), _ATTRIBUTE_ENTITIES)}"'
                    for k, v in element.attrib.items())
    return f"<{element.tag}{attrs}{' /' if close else ''}>"


def element_text(root: ET.Element, space: str = "  ") -> str:
    """The element and its subtree as indented XML (no declaration), iteratively."""
    out: list[str] = []
    # (element, depth, closing): an element is visited to open it, and once more to close it
    stack: list[tuple[ET.Element, int, bool]] = [(root, 0, False)]
    while stack:
        element, depth, closing = stack.pop()
        pad = "\n" + space * depth if out else ""
        if closing:
            out.append(f"{pad}</{element.tag}>")
            continue
        text = (element.text or "").strip()
        children = list(element)
        if not children and not text:
            out.append(pad + _open_tag(element, True))
            continue
        out.append(pad + _open_tag(element, False) + escape(text))
        if not children:
            out.append(f"</{element.tag}>")
            continue
        stack.append((element, depth, True))
        stack.extend((child, depth + 1, False) for child in reversed(children))
    return "".join(out)
