"""Unit quaternions ``(x, y, z, w)`` (scalar last, pinocchio's order), numerically and symbolically.

The free flyer's and the spherical joint's orientation: :func:`quaternion_to_rotation`
(numeric, normalised first), :func:`rotation_matrix` (symbolic, of a unit
quaternion), :func:`rotation_to_quaternion` and the exponential map
:func:`exp_rotation` of an angular displacement.
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError


def quaternion_to_rotation(quaternion):
    """Rotation matrix of a quaternion ``(x, y, z, w)`` (scalar last), normalised first.

    Parameters
    ----------
    quaternion : array_like, shape (..., 4)

    Returns
    -------
    numpy.ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> quaternion_to_rotation([0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)]).round(12)  # 90 deg about z
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    q = normalised_quaternion(np.asarray(quaternion, dtype=float))
    x, y, z, w = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def rotation_to_quaternion(R):
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` of a rotation matrix (Shepperd's method).

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    numpy.ndarray, shape (..., 4)

    Examples
    --------
    >>> R = quaternion_to_rotation([0.1, -0.2, 0.3, 0.9])
    >>> q = rotation_to_quaternion(R)
    >>> np.allclose(q, np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9]))
    True
    """
    R = np.asarray(R, dtype=float)
    trace = np.trace(R, axis1=-2, axis2=-1)
    # The largest of 4w^2, 4x^2, 4y^2, 4z^2 gives the best-conditioned formula.
    candidates = np.stack([trace, R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]], axis=-1)
    best = np.argmax(candidates, axis=-1)
    q = np.empty(R.shape[:-2] + (4,))
    diag = (R[..., 0, 0], R[..., 1, 1], R[..., 2, 2])
    for case in range(4):
        mask = best == case
        if not np.any(mask):
            continue
        r = R[mask]
        if case == 0:
            s = 2 * np.sqrt(1 + trace[mask])
            out = [(r[:, 2, 1] - r[:, 1, 2]) / s, (r[:, 0, 2] - r[:, 2, 0]) / s, (r[:, 1, 0] - r[:, 0, 1]) / s, s / 4]
        else:
            a = case - 1
            b, c = (a + 1) % 3, (a + 2) % 3
            s = 2 * np.sqrt(1 + 2 * diag[a][mask] - trace[mask])
            out = [None] * 4
            out[a] = s / 4
            out[b] = (r[:, b, a] + r[:, a, b]) / s
            out[c] = (r[:, c, a] + r[:, a, c]) / s
            out[3] = (r[:, c, b] - r[:, b, c]) / s
        q[mask] = np.stack(out, axis=-1)
    q *= np.where(q[..., 3:] < 0, -1.0, 1.0)
    return q


def normalised_quaternion(quaternion):
    """``quaternion / |quaternion|`` over the last axis; raises for a zero or non-finite one."""
    norm = np.linalg.norm(quaternion, axis=-1, keepdims=True)
    if np.any(norm == 0) or not np.all(np.isfinite(norm)):
        raise KaneRobotError("the base quaternion (q[3:7], x y z w) is zero or not finite: give a unit quaternion")
    return quaternion / norm


def quaternion_product(p, q):
    """``p * q`` for quaternions ``(x, y, z, w)``."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    return np.concatenate([pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)], axis=-1)


def exp_rotation(omega):
    """The unit quaternion of the rotation by the vector ``omega`` (angle ``|omega|`` about ``omega/|omega|``).

    Parameters
    ----------
    omega : numpy.ndarray, shape (..., 3)

    Returns
    -------
    numpy.ndarray, shape (..., 4)
        ``(sin(t/2) omega/t, cos(t/2))`` with ``t = |omega|``, by its series near 0.

    Examples
    --------
    >>> exp_rotation(np.array([0.0, 0.0, np.pi / 2])).round(12)
    array([0.        , 0.        , 0.70710678, 0.70710678])
    """
    theta = np.linalg.norm(omega, axis=-1, keepdims=True)
    small = theta < 1e-4
    safe = np.where(small, 1.0, theta)
    half_sinc = np.where(small, 0.5 - theta * theta / 48, np.sin(safe / 2) / safe)  # sin(t/2)/t
    return np.concatenate([half_sinc * omega, np.cos(theta / 2)], axis=-1)


def log_rotation(quaternion):
    """The rotation vector ``omega`` with ``exp_rotation(omega) == quaternion`` (up to sign), ``|omega| <= pi``.

    Parameters
    ----------
    quaternion : numpy.ndarray, shape (..., 4)

    Returns
    -------
    numpy.ndarray, shape (..., 3)

    Examples
    --------
    >>> log_rotation(exp_rotation(np.array([0.3, -0.2, 0.1]))).round(12)
    array([ 0.3, -0.2,  0.1])
    """
    q = normalised_quaternion(np.asarray(quaternion, dtype=float))
    q = q * np.where(q[..., 3:] < 0, -1.0, 1.0)  # the shorter of the two rotations
    u, w = q[..., :3], q[..., 3:]
    s = np.linalg.norm(u, axis=-1, keepdims=True)
    theta = 2 * np.arctan2(s, w)
    small = s < 1e-8
    return np.where(small, 2 * u / np.where(small, w, 1.0), u * theta / np.where(small, 1.0, s))


def rotation_matrix(quaternion):
    """Symbolic rotation matrix of a unit quaternion ``(x, y, z, w)``.

    The norm is taken to be 1 (the numeric code normalises the quaternion
    before it evaluates a program), so no division appears.

    Examples
    --------
    >>> import sympy
    >>> x, y, z, w = sympy.symbols("x y z w")
    >>> rotation_matrix((x, y, z, w))[0, :]
    Matrix([[-2*y**2 - 2*z**2 + 1, -2*w*z + 2*x*y, 2*w*y + 2*x*z]])
    """
    x, y, z, w = quaternion
    return sympy.Matrix(
        [
            [1 - 2 * (y**2 + z**2), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x**2 + z**2), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x**2 + y**2)],
        ]
    )


def quaternion_rate(quaternion, omega):
    """Symbolic ``dQ/dt = 1/2 Q * (omega, 0)`` of a unit quaternion ``(x, y, z, w)`` turning at ``omega`` (its own frame).

    Examples
    --------
    >>> import sympy
    >>> x, y, z, w = sympy.symbols("x y z w")
    >>> quaternion_rate((x, y, z, w), (0, 0, 1))
    (y/2, -x/2, w/2, -z/2)
    """
    u, w, omega = sympy.Matrix(quaternion[:3]), quaternion[3], sympy.Matrix(omega)
    half = sympy.Rational(1, 2)
    return (*(half * (w * omega + u.cross(omega))), -half * u.dot(omega))
