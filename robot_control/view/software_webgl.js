// robot-control view: when this browser renders WebGL in software (no GPU: SwiftShader,
// llvmpipe, Microsoft's Basic Render Driver), the 3D view's WebGL context is created without
// multisampling and without a preserved drawing buffer, viser's background-image plane is not
// drawn while it has no image (its shader would only discard every pixel), and the 3D view is
// drawn at half the display's pixel ratio (a quarter of its pixels: viser's `fixedDpr` page
// parameter, put in the address unless it already has one). Software WebGL pays for each of
// these at every pixel of every frame (docs/view.md, "Cost"). A browser with a GPU is left
// exactly as viser's client sets it. Runs before the page's own scripts.
(() => {
  const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|basic render/i;
  const GL = [window.WebGLRenderingContext, window.WebGL2RenderingContext].filter(Boolean);
  const getContext = HTMLCanvasElement.prototype.getContext;
  const state = { renderer: null, software: false };
  window.__robotControlWebGL = state;

  // the renderer's name, from a throwaway context (WEBGL_debug_renderer_info: every Chromium;
  // Firefox gives a sanitised name, as it also does for RENDERER)
  try {
    const gl = getContext.call(document.createElement("canvas"), "webgl");
    if (gl) {
      const info = gl.getExtension("WEBGL_debug_renderer_info");
      state.renderer = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      state.software = SOFTWARE.test(state.renderer);
      const lose = gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
    }
  } catch (err) {
    console.warn("robot-control view: could not read the WebGL renderer:", err);
  }
  if (!state.software) return;  // a GPU (or no WebGL at all): viser's page as it is

  // viser reads its page parameters once, when its script starts: after this one
  const params = new URLSearchParams(location.search);
  if (!params.has("fixedDpr")) {
    params.set("fixedDpr", String(0.5 * (window.devicePixelRatio || 1)));
    try {
      history.replaceState(history.state, "", `${location.pathname}?${params}${location.hash}`);
    } catch (err) {  // a page without an address of its own (data:, about:blank)
      console.warn("robot-control view: could not set fixedDpr:", err.message);
    }
  }

  HTMLCanvasElement.prototype.getContext = function (type, attributes) {
    if (type === "webgl2" || type === "webgl")
      attributes = { ...attributes, antialias: false, preserveDrawingBuffer: false };
    return getContext.call(this, type, attributes);
  };

  // viser's background plane is a full-screen quad whose fragment shader discards every pixel
  // while its `enabled` uniform is false (no background image): skipping its draw call then
  // draws exactly the same picture. Recognised by its shader's source, followed through the
  // program that links it and the value last given to that program's `enabled` uniform.
  skipBackgroundPlane();
  function skipBackgroundPlane() {
    const isBackground = (src) => src.includes("uniform sampler2D depthMap") &&
      src.includes("uniform bool enabled") && src.includes("readDepth");
    const shaders = new WeakSet(), programs = new WeakSet(), enabledAt = new WeakMap();
    const enabled = new WeakMap();
    let current = null;
    for (const C of GL) {
      const p = C.prototype;
      const wrap = (name, make) => { const f = p[name]; if (f) p[name] = make(f); };
      wrap("shaderSource", (f) => function (shader, src) {
        if (isBackground(String(src))) shaders.add(shader);
        return f.apply(this, arguments);
      });
      wrap("attachShader", (f) => function (program, shader) {
        if (shaders.has(shader)) programs.add(program);
        return f.apply(this, arguments);
      });
      wrap("getUniformLocation", (f) => function (program, name) {
        const at = f.apply(this, arguments);
        if (at && name === "enabled" && programs.has(program)) enabledAt.set(at, program);
        return at;
      });
      wrap("uniform1i", (f) => function (at, value) {
        if (at && enabledAt.has(at)) enabled.set(enabledAt.get(at), !!value);
        return f.apply(this, arguments);
      });
      wrap("useProgram", (f) => function (program) {
        current = program;
        return f.apply(this, arguments);
      });
      for (const name of ["drawArrays", "drawElements"])
        wrap(name, (f) => function () {
          if (current && programs.has(current) && enabled.get(current) === false) return;
          return f.apply(this, arguments);
        });
    }
  }
})();
