"""The view's page (robot_control/view/client_page.py, software_webgl.js): viser's page with the
view's script first in its head, served by a real viser server; and the script's decision in a
real headless Chromium — software WebGL (this machine's SwiftShader) gets a context without
multisampling or a preserved drawing buffer, a GPU's context is left as the page asks, and viser's
background plane is not drawn while it has no image."""

from __future__ import annotations

import types
import urllib.request
from pathlib import Path

import pytest
from view_helpers import Browser, browser_missing, free_port

from robot_control.view.client_page import (
    SCRIPT,
    PageError,
    page_root,
    page_with_script,
    serving_from,
)

viser = pytest.importorskip("viser")
VISER_BUILD = Path(viser.__file__).parent / "client" / "build"
needs_browser = pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))

#: a WebGL2 context asked for as viser's client asks (react-three-fiber's defaults and its own)
CONTEXT_JS = """() => { const c = document.createElement('canvas');
  const gl = c.getContext('webgl2', {antialias: true, preserveDrawingBuffer: true, alpha: true});
  return {attributes: gl.getContextAttributes(), state: window.__robotControlWebGL}; }"""
#: the renderer a GPU's Chromium reports (UNMASKED_RENDERER_WEBGL is 0x9246)
GPU_RENDERER_JS = """(() => { for (const C of [WebGLRenderingContext, WebGL2RenderingContext]) {
  const f = C.prototype.getParameter;
  C.prototype.getParameter = function (p) {
    return p === 0x9246 ? 'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0)'
                        : f.apply(this, arguments); }; } })();"""
#: counts the draw calls that reach WebGL (installed before the view's script wraps them)
COUNT_DRAWS_JS = """(() => { window.__draws = 0;
  for (const C of [WebGLRenderingContext, WebGL2RenderingContext]) {
    const f = C.prototype.drawArrays;
    C.prototype.drawArrays = function () { window.__draws++; return f.apply(this, arguments); };
  } })();"""
#: a full-screen quad drawn with a fragment shader like viser's background plane (its uniforms
#: and its readDepth), `enabled` set to each given value in turn: the draw calls that reached WebGL
BACKGROUND_JS = """(values) => {
  const gl = document.createElement('canvas').getContext('webgl2');
  const shader = (type, src) => { const s = gl.createShader(type); gl.shaderSource(s, src);
                                  gl.compileShader(s); return s; };
  const p = gl.createProgram();
  gl.attachShader(p, shader(gl.VERTEX_SHADER, `#version 300 es
    in vec2 xy; void main() { gl_Position = vec4(xy, 0.0, 1.0); }`));
  gl.attachShader(p, shader(gl.FRAGMENT_SHADER, `#version 300 es
    precision highp float;
    uniform sampler2D colorMap;
    uniform sampler2D depthMap;
    uniform bool enabled;
    out vec4 color;
    float readDepth(sampler2D depthMap, vec2 coord) { return texture(depthMap, coord).r; }
    void main() { if (!enabled) { discard; } color = texture(colorMap, vec2(0.5)); }`));
  gl.linkProgram(p); gl.useProgram(p);
  const at = gl.getUniformLocation(p, 'enabled');
  return values.map((v) => { const before = window.__draws; gl.uniform1i(at, v ? 1 : 0);
                             gl.drawArrays(gl.TRIANGLES, 0, 3); return window.__draws - before; });
}"""


def test_the_script_is_the_first_element_of_the_pages_head() -> None:
    page = page_with_script("<html><head><script>viser()</script></head></html>", "ours()")
    assert page == "<html><head>\n<script>ours()</script><script>viser()</script></head></html>"


@pytest.mark.parametrize("html", ["<html><body></body></html>",
                                  "<html><head></head><template><head></head></template></html>"])
def test_a_page_without_exactly_one_head_is_refused_in_one_line(html: str) -> None:
    with pytest.raises(PageError, match=r"'<head>' tags, not one: the view cannot add its script"):
        page_with_script(html, "ours()")


def test_the_folder_has_the_page_with_the_script_and_viser_s_other_files(tmp_path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    (build / "index.html").write_text("<html><head><title>Viser</title></head></html>")
    (build / "asset.js").write_text("x()")
    root = page_root(build, tmp_path / "cache")
    assert (root / "index.html").read_text().startswith(
        f"<html><head>\n<script>{SCRIPT.read_text()}</script><title>")
    assert (root / "asset.js").read_text() == "x()"
    assert page_root(build, tmp_path / "cache") == root  # written once per content
    (build / "index.html").write_text("<html><head><title>Viser 2</title></head></html>")
    assert page_root(build, tmp_path / "cache") != root


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real viser server serving the view's page: its URL."""
    root = page_root(VISER_BUILD, tmp_path_factory.mktemp("page"))
    port = free_port()
    with serving_from(viser.infra, root):
        server = viser.ViserServer(host="127.0.0.1", port=port, verbose=False)
    yield f"http://127.0.0.1:{port}/"
    server.stop()


def test_a_real_viser_server_serves_the_views_page(served: str) -> None:
    with urllib.request.urlopen(served, timeout=30) as reply:
        page = reply.read().decode()
    assert page[page.index("<head>"):].startswith(f"<head>\n<script>{SCRIPT.read_text()}</script>")
    assert viser.infra.WebsockServer.__name__ == "WebsockServer"  # put back after the block


def test_a_viser_that_builds_its_server_otherwise_is_one_clear_line(tmp_path) -> None:
    class Positional:  # a server given its root without the keyword
        def __init__(self, *args, **kwargs) -> None:
            pass

    infra = types.SimpleNamespace(WebsockServer=Positional)
    with pytest.raises(PageError, match="no longer gives its server http_server_root="):
        with serving_from(infra, tmp_path):
            infra.WebsockServer("127.0.0.1", 8080, None, tmp_path)
    with pytest.raises(PageError, match="no longer builds its server as viser.infra"):
        with serving_from(infra, tmp_path):
            pass  # nothing built through infra.WebsockServer
    assert infra.WebsockServer is Positional


@pytest.fixture(scope="module")
def browser():
    if (why := browser_missing()) is not None:
        pytest.skip(why)
    b = Browser()
    yield b
    b.close()


def in_page(browser: Browser, expression: str, *init_scripts: str, arg=None):
    """``expression`` evaluated in a new page that ran ``init_scripts`` and then the view's."""
    page = browser.browser.new_page()
    try:
        for script in (*init_scripts, SCRIPT.read_text()):
            page.add_init_script(script)
        page.goto("data:text/html,<title>probe</title>")
        return page.evaluate(expression, arg)
    finally:
        page.close()


@needs_browser
@pytest.mark.timeout(120)
def test_software_webgl_gets_no_multisampling_and_no_preserved_buffer(browser) -> None:
    got = in_page(browser, CONTEXT_JS)
    assert got["state"]["software"] is True, got  # this machine: SwiftShader, no GPU
    assert "SwiftShader" in got["state"]["renderer"]
    assert got["attributes"]["antialias"] is False
    assert got["attributes"]["preserveDrawingBuffer"] is False


@needs_browser
@pytest.mark.timeout(120)
@pytest.mark.parametrize("query, shown", [("", "?fixedDpr=0.5"), ("?fixedDpr=1", "?fixedDpr=1"),
                                          ("?showStats", "?showStats=&fixedDpr=0.5")])
def test_software_webgl_draws_a_quarter_of_the_pixels_unless_the_address_says(
        browser, served: str, query: str, shown: str) -> None:
    page = browser.browser.new_page()
    try:
        page.goto(served + query, wait_until="load", timeout=60_000)
        assert page.url == served + shown
    finally:
        page.close()


@needs_browser
@pytest.mark.timeout(120)
def test_a_gpu_keeps_the_context_the_page_asks_for(browser) -> None:
    got = in_page(browser, CONTEXT_JS, GPU_RENDERER_JS)
    assert got["state"] == {"renderer": "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 "
                                        "vs_5_0 ps_5_0)", "software": False}
    assert got["attributes"]["antialias"] is True
    assert got["attributes"]["preserveDrawingBuffer"] is True


@needs_browser
@pytest.mark.timeout(120)
def test_the_background_plane_is_drawn_only_with_an_image(browser) -> None:
    assert in_page(browser, BACKGROUND_JS, COUNT_DRAWS_JS, arg=[False, True, False]) == [0, 1, 0]


@needs_browser
@pytest.mark.timeout(120)
def test_which_renderers_are_software(browser) -> None:
    for renderer, software in [
            ("ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)",
             True),
            ("llvmpipe (LLVM 15.0.7, 256 bits)", True),
            ("ANGLE (Microsoft, Microsoft Basic Render Driver Direct3D11 vs_5_0 ps_5_0)", True),
            ("Mesa Intel(R) UHD Graphics 620 (KBL GT2)", False),
            ("ANGLE (Apple, ANGLE Metal Renderer: Apple M1, Unspecified Version)", False),
            ("AMD Radeon RX 6800 XT (radeonsi, navi21, LLVM 15.0.7, DRM 3.49)", False)]:
        got = in_page(browser, CONTEXT_JS, GPU_RENDERER_JS.replace(
            "ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0)", renderer))
        assert got["state"] == {"renderer": renderer, "software": software}, got
        assert got["attributes"]["antialias"] is not software, got
