"""SE(3), se(3) and dse(3) algebra, angular-first (Kim §1, eqs. 1–31).

Twists are V = (w, v), wrenches F = (m, f). A transform T = (R, p) is the pose of a
child frame in its parent. These are the readable numpy forms used to build models and
to state tests; the compiled kernels in ``robot_control.dynamics.kernels`` apply the same
maps in place.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]


def skew(w: ArrayLike) -> Array:
    """[w], the 3×3 cross-product matrix: [w] x = w × x."""
    x, y, z = np.asarray(w, dtype=float)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rot_x(a: float) -> Array:
    """Rotation about x by a (rad)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> Array:
    """Rotation about y by a (rad)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> Array:
    """Rotation about z by a (rad)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_to_matrix(rpy: ArrayLike) -> Array:
    """URDF roll-pitch-yaw (fixed axes x, y, z) to a rotation matrix: Rz(y) Ry(p) Rx(r)."""
    r, p, y = np.asarray(rpy, dtype=float)
    return rot_z(y) @ rot_y(p) @ rot_x(r)


def transform(R: ArrayLike | None = None, p: ArrayLike | None = None) -> Array:
    """Homogeneous 4×4 transform from a rotation and a translation."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def inverse_transform(T: ArrayLike) -> Array:
    """T⁻¹ = [[Rᵀ, −Rᵀp], [0, 1]] (Kim eq. 3)."""
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    return transform(R.T, -R.T @ p)


def Ad(T: ArrayLike) -> Array:
    """Ad_T = [[R, 0], [[p]R, R]]: maps a twist in the child frame to the parent (Kim eq. 11)."""
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[3:, 3:] = R
    X[3:, :3] = skew(p) @ R
    return X


def ad(V: ArrayLike) -> Array:
    """ad_V = [[[w], 0], [[v], [w]]]: the Lie bracket ad_V V' = [V, V'] (Kim eq. 15)."""
    V = np.asarray(V, dtype=float)
    X = np.zeros((6, 6))
    X[:3, :3] = skew(V[:3])
    X[3:, 3:] = skew(V[:3])
    X[3:, :3] = skew(V[3:])
    return X


def dad(V: ArrayLike) -> Array:
    """ad*_V = ad_Vᵀ, acting on wrenches (Kim eq. 18)."""
    return ad(V).T


def screw_exp(S: ArrayLike, q: float) -> Array:
    """exp([S] q) for a unit screw S = (w, v): the motion of a 1-DOF joint (Kim eq. 6).

    A revolute screw has |w| = 1; a prismatic one has w = 0 and |v| = 1.
    """
    S = np.asarray(S, dtype=float)
    w, v = S[:3], S[3:]
    if not np.any(w):
        return transform(None, v * q)
    W = skew(w)
    R = np.eye(3) + np.sin(q) * W + (1.0 - np.cos(q)) * (W @ W)
    p = (np.eye(3) - R) @ np.cross(w, v) + np.outer(w, w) @ v * q
    return transform(R, p)


def spatial_inertia(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> Array:
    """Generalised inertia about the body origin (Kim eq. 22) from mass, COM and inertia at the COM."""
    c = np.asarray(com, dtype=float)
    C = skew(c)
    G = np.zeros((6, 6))
    G[:3, :3] = np.asarray(inertia_com, dtype=float) + mass * C @ C.T
    G[:3, 3:] = mass * C
    G[3:, :3] = mass * C.T
    G[3:, 3:] = mass * np.eye(3)
    return G


def inertia_to_parameters(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> Array:
    """Standard inertial parameters [xx, xy, xz, yy, yz, zz, mx, my, mz, m] about the origin (Huo 2.5)."""
    c = np.asarray(com, dtype=float)
    Io = np.asarray(inertia_com, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array(
        [Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2], *(mass * c), mass]
    )


def parameters_to_inertia(theta: ArrayLike) -> tuple[float, Array, Array]:
    """Inverse of ``inertia_to_parameters``: (mass, com, inertia at the COM); com = 0 when m = 0."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = np.asarray(theta, dtype=float)
    Io = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    h = np.array([mx, my, mz])
    c = h / m if m != 0.0 else np.zeros(3)
    Ic = Io - m * (c @ c * np.eye(3) - np.outer(c, c))
    return float(m), c, Ic


def transform_inertia(mass: float, com: ArrayLike, inertia_com: ArrayLike, T: ArrayLike):
    """Re-express (mass, COM, inertia at COM) given in frame B in frame A, where T = pose of B in A."""
    T = np.asarray(T, dtype=float)
    R, p = T[:3, :3], T[:3, 3]
    return mass, R @ np.asarray(com, dtype=float) + p, R @ np.asarray(inertia_com, float) @ R.T


def rotation_exp(w: ArrayLike) -> Array:
    """exp([w]) by Rodrigues' formula: rotation by |w| about w/|w|."""
    w = np.asarray(w, dtype=float)
    theta = float(np.linalg.norm(w))
    W = skew(w)
    if theta < 1e-8:
        return np.eye(3) + W + 0.5 * W @ W
    return (np.eye(3) + (np.sin(theta) / theta) * W
            + ((1.0 - np.cos(theta)) / theta**2) * (W @ W))


def rotation_log(R: ArrayLike) -> Array:
    """w with exp([w]) = R and |w| ≤ π (the inverse of ``rotation_exp``), stable near θ = π."""
    R = np.asarray(R, dtype=float)
    vee = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sinθ·axis
    sin_theta = float(np.linalg.norm(vee))
    cos_theta = 0.5 * (np.trace(R) - 1.0)
    theta = float(np.arctan2(sin_theta, cos_theta))       # well conditioned at every angle
    if theta < 1e-6:
        return vee                                        # sin θ ≈ θ: vee is already θ·axis
    if np.pi - theta > 1e-3:
        return (theta / sin_theta) * vee
    # Near π, sin θ → 0 and vee loses the axis; the symmetric part of Rodrigues' formula,
    # (R + Rᵀ)/2 = cos θ I + (1 − cos θ) k kᵀ, still gives k kᵀ and so the axis up to sign.
    K = (0.5 * (R + R.T) - cos_theta * np.eye(3)) / (1.0 - cos_theta)
    i = int(np.argmax(np.diag(K)))
    axis = K[:, i] / np.linalg.norm(K[:, i])
    if axis @ vee < 0.0:
        axis = -axis
    return theta * axis

def quaternion_xyzw(R: NDArray) -> tuple[float, float, float, float]:
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd 1978: largest pivot first)."""
    t = np.trace(R)
    pivots = (t, R[0, 0], R[1, 1], R[2, 2])
    k = int(np.argmax(pivots))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        q = (R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s
    else:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        q = (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4, (R[1, 0] - R[0, 1]) / s
    return tuple(float(x) for x in q)


def quaternion_matrix(x: float, y: float, z: float, w: float) -> NDArray:
    """Rotation matrix of a quaternion (x, y, z, w), normalized first (the inverse of
    :func:`quaternion_xyzw`)."""
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if not np.isfinite(n) or n < 1e-12:
        raise ValueError(f"quaternion ({x}, {y}, {z}, {w}) has no rotation")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
