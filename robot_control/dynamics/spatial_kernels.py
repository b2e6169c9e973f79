"""Layout of the model's data array and the small spatial-algebra helpers of the kernels.

Spatial vectors are angular-first, expressed in body frames (Kim §1–2). The helpers take 1-D
views and write into ``out``; numba inlines them, which keeps the recursions readable as
equations without paying for temporaries. They read their operands into scalars before the
first store: every view is into the one data array, so the compiler must assume a store may
change any operand and would load it again after each (``out`` never overlaps an operand).
``kernels.py`` re-exports every name here.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload

# Column layout of a packed body row (packing.py writes it): parent λ(i), joint type, screw S_i,
# fixed offset M_i, spatial inertia I_i (6×6), the same inertia as (m, h = m c, J about the body
# origin), the joint's axis code, and in row 0 only the model's gravity.
PARENT, TYPE, SCREW, ROT, POS, INERTIA = 0, 1, 2, 8, 17, 20
MASS, FIRST_MOMENT, ROT_INERTIA, AXIS, GRAVITY = 56, 57, 60, 69, 70
ROW_PACKED = 73
# A workspace row continues the packed row (the model's own data array holds both, so a kernel
# call passes one array): placement T_{λ(i),i}, velocity, acceleration, force, …
W_R, W_P, W_V, W_A, W_F, W_C, W_U, W_PA, W_IA, W_BC, W_SD = (
    ROW_PACKED + c for c in (0, 9, 12, 18, 24, 30, 36, 42, 48, 84, 120)
)
W_QDD = ROW_PACKED + 122  # q̈ handed from the ABA to a derivative pass (no kernel writes here)
W_TMP = ROW_PACKED + 126  # row 0 only: scratch of the congruence transform (no allocation)
WORK = ROW_PACKED + 198

_CACHE = True

#: The decorator of a kernel Python calls. Compiled without numba's reference counting (NRT), it
#: receives arrays without a meminfo, so neither unboxing them nor the views the recursions take
#: cost an atomic increment and decrement each (perf put 55 % of a mass-matrix loop's samples on
#: those two instructions; dropping them halved a derivative call). The kernel and everything it
#: calls (they inherit the flag) must not allocate; it stays callable from compiled code.
entry_point = njit(cache=_CACHE, _nrt=False)


def check_length(x, n):
    """Kernels index without bounds checks: refuse a joint vector of the wrong length up front."""
    if np.ndim(x) != 1 or len(x) != n:
        raise ValueError("a joint-space argument does not have length model.nq")


@overload(check_length, inline="always")
def _check_length(x, n):
    if not (isinstance(x, types.Array) and x.ndim == 1):
        raise TypingError("joint-space arguments must be 1-D arrays of length model.nq")

    def impl(x, n):
        if x.shape[0] != n:
            raise ValueError("a joint-space argument does not have length model.nq")

    return impl


@intrinsic
def matrix_view(typingctx, flat, rows, cols):
    """The rows × cols row-major matrix over a contiguous 1-D array's first rows·cols entries
    (``flat.reshape((rows, cols))`` without its checks: the caller sizes ``flat``). numba's
    reshape calls a compiled helper whose environment makes loading a cached kernel import
    numba.np.arrayobj (~25 ms of a fresh process); this view compiles to a few stores."""
    if not (isinstance(flat, types.Array) and flat.ndim == 1 and flat.layout == "C"
            and isinstance(rows, types.Integer) and isinstance(cols, types.Integer)):
        raise TypingError("matrix_view needs a contiguous 1-D array and two integers")
    matrix = flat.copy(ndim=2, layout="C")

    def codegen(context, builder, signature, args):
        from numba.core import cgutils  # compile time only: the cache load never runs this
        from numba.core.imputils import impl_ret_borrowed

        src = cgutils.create_struct_proxy(flat)(context, builder, value=args[0])
        out = cgutils.create_struct_proxy(matrix)(context, builder)
        r = context.cast(builder, args[1], signature.args[1], types.intp)
        c = context.cast(builder, args[2], signature.args[2], types.intp)
        out.meminfo, out.parent, out.itemsize, out.data = src.meminfo, src.parent, \
            src.itemsize, src.data
        out.nitems = builder.mul(r, c)
        out.shape = cgutils.pack_array(builder, [r, c])
        out.strides = cgutils.pack_array(builder, [builder.mul(c, src.itemsize), src.itemsize])
        return impl_ret_borrowed(context, builder, matrix, out._getvalue())

    return matrix(flat, rows, cols), codegen


# Compiled once and inlined by LLVM (forceinline), not by numba: numba types and lowers it once,
# cached, for every recursion that places joints, instead of once inside each; LLVM still inlines
# it, so the kernels run as fast as with numba's inlining (a plain call made them 5–25 % slower:
# docs/compiling.md, "2026-11-29, 13:40–14:40 UTC")
@njit(cache=_CACHE, forceinline=True)
def joint_placement(P, i, qi, R, p):
    """T_{λ(i),i}(q_i) = M_i exp([S_i] q_i) (Kim eq. 2.8) written as rotation R (row-major) and p."""
    s = P[i, SCREW : SCREW + 6]
    axis = P[i, AXIS]
    if axis != 0.0:
        # revolute about ±e_a (through the origin, or through the point ±e_a × v: axis code
        # ±(a + 4)): R = M_i Rot_a(±q) turns two columns, p = M_i (1 − Rot_a(±q))(±e_a × v) + o_i
        c, sn = np.cos(qi), np.sin(qi)
        if axis < 0.0:
            sn = -sn
        a = int(abs(axis)) - 1
        M = P[i, ROT : ROT + 9]
        o = P[i, POS : POS + 3]
        sign, ax, ay, az, ex, ey, ez = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        if a >= 3:
            a -= 3
            sign = 1.0 if axis > 0.0 else -1.0
            ax, ay, az = s[3], s[4], s[5]
        if a == 2:
            R[0] = M[0] * c + M[1] * sn
            R[1] = M[1] * c - M[0] * sn
            R[2] = M[2]
            R[3] = M[3] * c + M[4] * sn
            R[4] = M[4] * c - M[3] * sn
            R[5] = M[5]
            R[6] = M[6] * c + M[7] * sn
            R[7] = M[7] * c - M[6] * sn
            R[8] = M[8]
            if sign != 0.0:  # e_z × v = (−v_y, v_x, 0)
                ax, ay = -sign * ay, sign * ax
                ex = ax - (c * ax - sn * ay)
                ey = ay - (sn * ax + c * ay)
        elif a == 1:
            R[0] = M[0] * c - M[2] * sn
            R[1] = M[1]
            R[2] = M[2] * c + M[0] * sn
            R[3] = M[3] * c - M[5] * sn
            R[4] = M[4]
            R[5] = M[5] * c + M[3] * sn
            R[6] = M[6] * c - M[8] * sn
            R[7] = M[7]
            R[8] = M[8] * c + M[6] * sn
            if sign != 0.0:  # e_y × v = (v_z, 0, −v_x)
                ax, az = sign * az, -sign * ax
                ex = ax - (c * ax + sn * az)
                ez = az - (c * az - sn * ax)
        else:
            R[0] = M[0]
            R[1] = M[1] * c + M[2] * sn
            R[2] = M[2] * c - M[1] * sn
            R[3] = M[3]
            R[4] = M[4] * c + M[5] * sn
            R[5] = M[5] * c - M[4] * sn
            R[6] = M[6]
            R[7] = M[7] * c + M[8] * sn
            R[8] = M[8] * c - M[7] * sn
            if sign != 0.0:  # e_x × v = (0, −v_z, v_y)
                ay, az = -sign * az, sign * ay
                ey = ay - (c * ay - sn * az)
                ez = az - (sn * ay + c * az)
        if sign == 0.0:
            p[0] = o[0]
            p[1] = o[1]
            p[2] = o[2]
        else:
            p[0] = M[0] * ex + M[1] * ey + M[2] * ez + o[0]
            p[1] = M[3] * ex + M[4] * ey + M[5] * ez + o[1]
            p[2] = M[6] * ex + M[7] * ey + M[8] * ez + o[2]
        return
    if P[i, TYPE] == 0.0:
        wx, wy, wz = s[0], s[1], s[2]
        c, sn = np.cos(qi), np.sin(qi)
        v = 1.0 - c
        E00, E01, E02 = c + wx * wx * v, wx * wy * v - wz * sn, wx * wz * v + wy * sn
        E10, E11, E12 = wy * wx * v + wz * sn, c + wy * wy * v, wy * wz * v - wx * sn
        E20, E21, E22 = wz * wx * v - wy * sn, wz * wy * v + wx * sn, c + wz * wz * v
        # p = (I − E)(ω × v) + ω ωᵀ v q (Murray–Li–Sastry eq. 2.36)
        ax = wy * s[5] - wz * s[4]
        ay = wz * s[3] - wx * s[5]
        az = wx * s[4] - wy * s[3]
        wv = (wx * s[3] + wy * s[4] + wz * s[5]) * qi
        ex = ax - (E00 * ax + E01 * ay + E02 * az) + wx * wv
        ey = ay - (E10 * ax + E11 * ay + E12 * az) + wy * wv
        ez = az - (E20 * ax + E21 * ay + E22 * az) + wz * wv
    else:
        E00, E01, E02, E10, E11, E12, E20, E21, E22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
        ex, ey, ez = s[3] * qi, s[4] * qi, s[5] * qi
    M = P[i, ROT : ROT + 9]
    o = P[i, POS : POS + 3]
    R[0] = M[0] * E00 + M[1] * E10 + M[2] * E20
    R[1] = M[0] * E01 + M[1] * E11 + M[2] * E21
    R[2] = M[0] * E02 + M[1] * E12 + M[2] * E22
    R[3] = M[3] * E00 + M[4] * E10 + M[5] * E20
    R[4] = M[3] * E01 + M[4] * E11 + M[5] * E21
    R[5] = M[3] * E02 + M[4] * E12 + M[5] * E22
    R[6] = M[6] * E00 + M[7] * E10 + M[8] * E20
    R[7] = M[6] * E01 + M[7] * E11 + M[8] * E21
    R[8] = M[6] * E02 + M[7] * E12 + M[8] * E22
    p[0] = M[0] * ex + M[1] * ey + M[2] * ez + o[0]
    p[1] = M[3] * ex + M[4] * ey + M[5] * ez + o[1]
    p[2] = M[6] * ex + M[7] * ey + M[8] * ez + o[2]


@njit(cache=_CACHE, inline="always")
def motion_to_child(R, p, m, out):
    """out = Ad_{T⁻¹} m: a parent-frame twist seen in the child frame (Kim eq. 1.10)."""
    # operands in scalars before the first store (helpers' note below)
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]
    w0, w1, w2 = m[0], m[1], m[2]
    v0 = m[3] - (p[1] * w2 - p[2] * w1)
    v1 = m[4] - (p[2] * w0 - p[0] * w2)
    v2 = m[5] - (p[0] * w1 - p[1] * w0)
    out[0] = r0 * w0 + r3 * w1 + r6 * w2
    out[1] = r1 * w0 + r4 * w1 + r7 * w2
    out[2] = r2 * w0 + r5 * w1 + r8 * w2
    out[3] = r0 * v0 + r3 * v1 + r6 * v2
    out[4] = r1 * v0 + r4 * v1 + r7 * v2
    out[5] = r2 * v0 + r5 * v1 + r8 * v2


@njit(cache=_CACHE, inline="always")
def add_force_to_parent(R, p, f, out):
    """out += Ad*_{T⁻¹} f: a child-frame wrench seen in the parent frame (Kim eq. 1.18)."""
    n0 = R[0] * f[0] + R[1] * f[1] + R[2] * f[2]
    n1 = R[3] * f[0] + R[4] * f[1] + R[5] * f[2]
    n2 = R[6] * f[0] + R[7] * f[1] + R[8] * f[2]
    f0 = R[0] * f[3] + R[1] * f[4] + R[2] * f[5]
    f1 = R[3] * f[3] + R[4] * f[4] + R[5] * f[5]
    f2 = R[6] * f[3] + R[7] * f[4] + R[8] * f[5]
    out[0] += n0 + p[1] * f2 - p[2] * f1
    out[1] += n1 + p[2] * f0 - p[0] * f2
    out[2] += n2 + p[0] * f1 - p[1] * f0
    out[3] += f0
    out[4] += f1
    out[5] += f2


@njit(cache=_CACHE, inline="always")
def ad_motion(V, m, out):
    """out = ad_V m = [ω × m_ω ; ω × m_v + v × m_ω] (Kim eq. 1.12)."""
    a0, a1, a2, a3, a4, a5 = V[0], V[1], V[2], V[3], V[4], V[5]
    b0, b1, b2, b3, b4, b5 = m[0], m[1], m[2], m[3], m[4], m[5]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0
    out[3] = a1 * b5 - a2 * b4 + a4 * b2 - a5 * b1
    out[4] = a2 * b3 - a0 * b5 + a5 * b0 - a3 * b2
    out[5] = a0 * b4 - a1 * b3 + a3 * b1 - a4 * b0


@njit(cache=_CACHE, inline="always")
def add_coad_neg(V, h, out):
    """out += −ad_Vᵀ h = [ω × h_n + v × h_f ; ω × h_f]: the gyroscopic wrench (Kim eq. 1.20)."""
    a0, a1, a2, a3, a4, a5 = V[0], V[1], V[2], V[3], V[4], V[5]
    b0, b1, b2, b3, b4, b5 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0] += a1 * b2 - a2 * b1 + a4 * b5 - a5 * b4
    out[1] += a2 * b0 - a0 * b2 + a5 * b3 - a3 * b5
    out[2] += a0 * b1 - a1 * b0 + a3 * b4 - a4 * b3
    out[3] += a1 * b5 - a2 * b4
    out[4] += a2 * b3 - a0 * b5
    out[5] += a0 * b4 - a1 * b3


@njit(cache=_CACHE, inline="always")
def mat6_vec(A, x, out):
    """out = A x for a row-major 6×6 matrix A stored flat."""
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += A[6 * r + c] * x[c]
        out[r] = acc


@njit(cache=_CACHE, inline="always")
def mat6T_vec(A, x, out):
    """out = Aᵀ x for a row-major 6×6 matrix A stored flat."""
    for c in range(6):
        acc = 0.0
        for r in range(6):
            acc += A[6 * r + c] * x[r]
        out[c] = acc


@njit(cache=_CACHE, inline="always")
def copy_into(src, dst):
    """dst[k] = src[k] elementwise (a slice assignment may allocate a temporary)."""
    for k in range(dst.shape[0]):
        dst[k] = src[k]


@njit(cache=_CACHE, inline="always")
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=_CACHE, inline="always")
def rotate_block(R, A, r0, c0, out):
    """out = R A_blk Rᵀ for the 3×3 block of the row-major 6×6 A at rows r0…, columns c0…."""
    for r in range(3):
        t0 = R[3 * r] * A[6 * r0 + c0] + R[3 * r + 1] * A[6 * (r0 + 1) + c0] \
            + R[3 * r + 2] * A[6 * (r0 + 2) + c0]
        t1 = R[3 * r] * A[6 * r0 + c0 + 1] + R[3 * r + 1] * A[6 * (r0 + 1) + c0 + 1] \
            + R[3 * r + 2] * A[6 * (r0 + 2) + c0 + 1]
        t2 = R[3 * r] * A[6 * r0 + c0 + 2] + R[3 * r + 1] * A[6 * (r0 + 1) + c0 + 2] \
            + R[3 * r + 2] * A[6 * (r0 + 2) + c0 + 2]
        for c in range(3):
            out[3 * r + c] = t0 * R[3 * c] + t1 * R[3 * c + 1] + t2 * R[3 * c + 2]


@njit(cache=_CACHE, inline="always")
def add_congruence_to_parent(R, p, A, out, tmp):
    """out += Xᵀ A X, X = Ad_{T⁻¹}, for a symmetric child-frame 6×6 (an inertia) seen in the parent.

    X = diag(Rᵀ, Rᵀ) T with T = [[1, 0], [−[p], 1]], so Xᵀ A X = Tᵀ B T with the blocks of
    B = R A Rᵀ rotated one by one; the shift by p is then a few cross products (Featherstone's
    inertia transform, RBDA §2.13) instead of two dense 6×6 products.
    """
    B11 = tmp[0:9]
    B12 = tmp[9:18]
    B22 = tmp[18:27]
    G = tmp[27:36]
    rotate_block(R, A, 0, 0, B11)
    rotate_block(R, A, 0, 3, B12)
    rotate_block(R, A, 3, 3, B22)
    p0, p1, p2 = p[0], p[1], p[2]
    # G = B21 − B22[p] (row r: B12ᵀ row r + p × B22 row r); the result's lower-left block
    for r in range(3):
        b0, b1, b2 = B22[3 * r], B22[3 * r + 1], B22[3 * r + 2]
        G[3 * r] = B12[r] + (p1 * b2 - p2 * b1)
        G[3 * r + 1] = B12[3 + r] + (p2 * b0 - p0 * b2)
        G[3 * r + 2] = B12[6 + r] + (p0 * b1 - p1 * b0)
    # upper-left: B11 − B12[p] + [p]G; row r of −B12[p] is p × (row r of B12), column c of [p]G is
    # p × (column c of G)
    for r in range(3):
        b0, b1, b2 = B12[3 * r], B12[3 * r + 1], B12[3 * r + 2]
        B11[3 * r] += p1 * b2 - p2 * b1
        B11[3 * r + 1] += p2 * b0 - p0 * b2
        B11[3 * r + 2] += p0 * b1 - p1 * b0
    for c in range(3):
        g0, g1, g2 = G[c], G[3 + c], G[6 + c]
        B11[c] += p1 * g2 - p2 * g1
        B11[3 + c] += p2 * g0 - p0 * g2
        B11[6 + c] += p0 * g1 - p1 * g0
    for r in range(3):
        for c in range(3):
            out[6 * r + c] += B11[3 * r + c]
            out[6 * r + c + 3] += G[3 * c + r]
            out[6 * (r + 3) + c] += G[3 * r + c]
            out[6 * (r + 3) + c + 3] += B22[3 * r + c]


@njit(cache=_CACHE, inline="always")
def rigid_inertia_times(P, i, x, out):
    """out = I_i x = (J ω + h × v, m v − h × ω) from body i's ten inertial parameters (Kim eq. 2.3)."""
    m = P[i, MASS]
    h0, h1, h2 = P[i, FIRST_MOMENT], P[i, FIRST_MOMENT + 1], P[i, FIRST_MOMENT + 2]
    J = P[i, ROT_INERTIA : ROT_INERTIA + 9]
    w0, w1, w2, v0, v1, v2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = J[0] * w0 + J[1] * w1 + J[2] * w2 + (h1 * v2 - h2 * v1)
    out[1] = J[3] * w0 + J[4] * w1 + J[5] * w2 + (h2 * v0 - h0 * v2)
    out[2] = J[6] * w0 + J[7] * w1 + J[8] * w2 + (h0 * v1 - h1 * v0)
    out[3] = m * v0 - (h1 * w2 - h2 * w1)
    out[4] = m * v1 - (h2 * w0 - h0 * w2)
    out[5] = m * v2 - (h0 * w1 - h1 * w0)
