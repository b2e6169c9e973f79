"""The page the view serves: viser's built client page (one file, ``client/build/index.html``)
with the view's own script first in its ``<head>`` — ``software_webgl.js``, which makes the 3D
view cheaper where the browser renders WebGL in software and changes nothing where it has a GPU.

viser has no API to add a script to its page (``RunJavascriptMessage`` runs after the websocket
connects, when the 3D view's WebGL context already exists, and its attributes cannot change),
and it serves a fixed folder: ``ViserServer`` builds its ``viser.infra.WebsockServer`` with
``http_server_root=`` its package's ``client/build``. So the view writes that page with its
script into a folder of its own (in the user cache, keyed by content) and has viser serve that
folder, by giving the server class viser builds a different root while the server is
constructed. If viser stops building its server that way, the view says so in one line
(:class:`PageError`) rather than serving a page without the script.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

SCRIPT = Path(__file__).with_name("software_webgl.js")
HEAD = "<head>"
PAGE = "index.html"


class PageError(RuntimeError):
    """viser's page or server is not what the view adds its script to (one line)."""


def page_with_script(client_html: str, script: str) -> str:
    """viser's client page with ``script`` as the first element of its ``<head>``, so it runs
    before the page's own scripts (which create the 3D view's WebGL context)."""
    if client_html.count(HEAD) != 1:
        raise PageError(f"viser's client page has {client_html.count(HEAD)} '{HEAD}' tags, not "
                        f"one: the view cannot add its script (viser's page changed)")
    if "</script" in script:
        raise PageError(f"{SCRIPT.name} contains '</script': it would end its own tag")
    return client_html.replace(HEAD, f"{HEAD}\n<script>{script}</script>", 1)


def page_root(viser_build: Path, cache: Path) -> Path:
    """A folder serving viser's client build with the view's script in its page: the page
    written once per content (named by its digest), viser's other files (none in viser 1.1)
    linked beside it."""
    source = viser_build / PAGE
    try:
        page = page_with_script(source.read_text(encoding="utf-8"),
                                SCRIPT.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PageError(f"cannot read {exc.filename}: {exc.strerror}") from None
    root = cache / hashlib.sha256(page.encode()).hexdigest()[:16]
    try:
        root.mkdir(parents=True, exist_ok=True)
        for entry in viser_build.iterdir():
            link = root / entry.name
            if entry.name == PAGE:
                continue
            if link.is_symlink() and os.readlink(link) != str(entry):  # another viser's
                link.unlink(missing_ok=True)
            if not link.is_symlink():
                with contextlib.suppress(FileExistsError):  # another view linked it meanwhile
                    link.symlink_to(entry)
        if not (root / PAGE).is_file():
            partial = root / f".{PAGE}.{os.getpid()}"
            partial.write_text(page, encoding="utf-8")
            partial.replace(root / PAGE)  # atomic: another view may be writing it too
    except OSError as exc:
        raise PageError(f"cannot write the view's page in {root}: {exc.strerror}") from None
    return root


@contextlib.contextmanager
def serving_from(infra, root: Path) -> Iterator[None]:
    """While in this block, a server viser builds (``infra.WebsockServer``, given
    ``http_server_root=``) serves ``root``; PageError at the end if none was built so."""
    original = infra.WebsockServer
    built = []

    class ServingTheViewsPage(original):
        def __init__(self, *args, **kwargs) -> None:
            if "http_server_root" not in kwargs:
                raise PageError("viser no longer gives its server http_server_root=: the view "
                                "cannot serve its page (robot_control/view/client_page.py)")
            kwargs["http_server_root"] = root
            built.append(self)
            super().__init__(*args, **kwargs)

    infra.WebsockServer = ServingTheViewsPage
    try:
        yield
    finally:
        infra.WebsockServer = original
    if not built:
        raise PageError("viser no longer builds its server as viser.infra.WebsockServer: the "
                        "view cannot serve its page (robot_control/view/client_page.py)")
