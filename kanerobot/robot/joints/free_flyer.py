"""The free flyer: six degrees of freedom, the root joint of a floating robot.

Link 0 hangs from the world by it (pinocchio's ``JointModelFreeFlyer``,
spatial_v2's 'Fb'): seven configuration values ``(x, y, z, qx, qy, qz, qw)``,
the position of O_0 in the world frame and the unit quaternion of ``wR_0``
(scalar last), and six speeds ``(v, w)``, the velocity of O_0 and the angular
velocity of link 0, both in frame 0; its motion subspace is the 6x6 identity.
A configuration is not the integral of the speeds (the quaternion is not a
vector space): :func:`integrate`, :func:`configuration_derivative` and
:func:`base_pose` handle a state whose root is a free flyer, ``q = (x, y,
z, qx, qy, qz, qw, q_1 .. q_n)`` and ``qd = (v, w, qd_1 .. qd_n)``, the
joints after it having one value each (integrated by ``q + dt qd``).
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.robot.joints.model import JointModel
from kanerobot.robot.joints.quaternion import (
    log_rotation,
    normalised_quaternion,
    quaternion_product,
    quaternion_rate,
    quaternion_to_rotation,
    rotation_matrix,
)
from kanerobot.robot.joints.transforms import homogeneous


class FreeFlyer(JointModel):
    """``M(q) = [R(quaternion), (x, y, z)]``; ``S = I6``; nq 7, nv 6.

    Examples
    --------
    >>> import numpy as np
    >>> FreeFlyer().integrate(FreeFlyer().neutral(), [1, 0, 0, 0, 0, np.pi / 2], 1.0).round(12)
    array([0.63661977, 0.63661977, 0.        , 0.        , 0.        ,
           0.70710678, 0.70710678])
    """

    name = "free-flyer"
    nq, nv = 7, 6
    euclidean = False

    def placed(self, R0, P, axis, q):
        R0 = sympy.Matrix(R0)
        return homogeneous(R0 * rotation_matrix(q[3:]), sympy.Matrix(P) + R0 * sympy.Matrix(q[:3]))

    def subspace(self, axis):
        return sympy.Matrix.hstack(sympy.eye(3), sympy.zeros(3, 3)), sympy.Matrix.hstack(sympy.zeros(3, 3), sympy.eye(3))

    def configuration_names(self, stem):
        return (f"X{stem}", f"Y{stem}", f"Z{stem}", *(f"Q{c}{stem}" for c in "XYZW"))

    def speed_names(self, stem):
        return tuple(f"{kind}{c}{stem}" for kind in "VW" for c in "XYZ")

    def acceleration_names(self, stem):
        return tuple(f"D{kind}{c}{stem}" for kind in "VW" for c in "XYZ")

    def force_names(self, stem):
        return tuple(f"{kind}{c}{stem}" for kind in "FC" for c in "XYZ")

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

    def integrate(self, q, v, dt=1.0):
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        return integrate(q, v, dt)

    def difference(self, q0, q1):
        """The twist ``(v, w)`` in frame 0 whose exponential takes ``q0`` to ``q1`` (the inverse of :meth:`integrate`)."""
        q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
        conjugate = q0[..., 3:7] * np.array([-1.0, -1.0, -1.0, 1.0])
        omega = log_rotation(quaternion_product(normalised_quaternion(conjugate), normalised_quaternion(q1[..., 3:7])))
        local = np.einsum("...ji,...j->...i", quaternion_to_rotation(q0[..., 3:7]), q1[..., :3] - q0[..., :3])
        a, b = _translation_factors(np.linalg.norm(omega, axis=-1, keepdims=True))
        V = np.eye(3) + a[..., None] * _hat(omega) + b[..., None] * _hat(omega) @ _hat(omega)
        return np.concatenate([np.linalg.solve(V, local[..., None])[..., 0], omega], axis=-1)

    def configuration_rate(self, q, v):
        return (*(rotation_matrix(q[3:]) * sympy.Matrix(v[:3])), *quaternion_rate(q[3:], v[3:]))

    def configuration_derivative(self, q, v):
        return configuration_derivative(q, v)

    def normalised(self, q):
        q = np.array(q, dtype=float)
        q[..., 3:7] = normalised_quaternion(q[..., 3:7])
        return q

    def random_configuration(self, rng):
        return np.concatenate([rng.uniform(-1.0, 1.0, 3), normalised_quaternion(rng.normal(size=4))])


def _hat(w):
    out = np.zeros(w.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    out[..., 1, 0], out[..., 2, 0], out[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    return out


def _translation_factors(theta):
    """``(1 - cos t)/t^2`` and ``(t - sin t)/t^3``, by their series near 0."""
    small = theta < 1e-4
    safe = np.where(small, 1.0, theta)
    t2 = theta * theta
    a = np.where(small, 0.5 - t2 / 24, (1 - np.cos(safe)) / safe**2)
    b = np.where(small, 1 / 6 - t2 / 120, (safe - np.sin(safe)) / safe**3)
    return a[..., 0], b[..., 0]


def base_pose(q):
    """The base pose ``wT_0`` (OpenSYMORO's ``Z``) of configurations ``q``.

    Parameters
    ----------
    q : array_like, shape (..., 7 + n)
        Position of O_0 in the world frame, quaternion (x y z w), joints.

    Returns
    -------
    numpy.ndarray, shape (..., 4, 4)

    Examples
    --------
    >>> base_pose([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.5])[:3, 3]
    array([1., 2., 3.])
    """
    q = np.asarray(q, dtype=float)
    T = np.zeros(q.shape[:-1] + (4, 4))
    T[..., :3, :3] = quaternion_to_rotation(q[..., 3:7])
    T[..., :3, 3] = q[..., :3]
    T[..., 3, 3] = 1.0
    return T


def configuration_derivative(q, qd):
    """``dq/dt`` of the state: ``(wR_0 v, 1/2 Q (w, 0), qd_joints)``.

    The position moves with the base velocity in the world frame; the
    quaternion with ``dQ/dt = 1/2 Q * (w, 0)`` (quaternion product, ``w`` in
    frame 0), whose value is orthogonal to ``Q``, so its norm is kept to the
    accuracy of the integrator; the joints with their rates.

    Parameters
    ----------
    q : array_like, shape (7 + n,) or (N, 7 + n)
    qd : array_like, shape (6 + n,) or (N, 6 + n)

    Returns
    -------
    numpy.ndarray, shape of ``q``

    Examples
    --------
    A base turning about its z axis at 2 rad/s and moving along its x axis at 1 m/s, turned 90 deg about z:

    >>> s = np.sqrt(0.5)
    >>> configuration_derivative([0, 0, 0, 0, 0, s, s], [1, 0, 0, 0, 0, 2]).round(12) + 0.0
    array([ 0.        ,  1.        ,  0.        ,  0.        ,  0.        ,
            0.70710678, -0.70710678])
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    _check_lengths(q, qd)
    u, w = q[..., 3:6], q[..., 6:7]
    omega = qd[..., 3:6]
    out = np.empty(np.broadcast_shapes(q.shape, qd.shape[:-1] + (q.shape[-1],)))
    out[..., :3] = np.einsum("...ij,...j->...i", quaternion_to_rotation(q[..., 3:7]), qd[..., :3])
    out[..., 3:6] = 0.5 * (w * omega + np.cross(u, omega))
    out[..., 6] = -0.5 * np.sum(u * omega, axis=-1)
    out[..., 7:] = qd[..., 6:]
    return out


def integrate(q, qd, dt):
    """The configuration reached from ``q`` moving at constant ``qd`` for ``dt``.

    The base follows the exponential of its twist (pinocchio's
    ``integrate`` for a free flyer, ``wT_0 exp(dt [v; w])``)::

        wR_0' = wR_0 exp(dt w^),     Q' = Q * (sin(t/2) w/|w|, cos(t/2)),  t = dt |w|
        wx_0' = wx_0 + wR_0 V(dt w) dt v,
        V(p) = 1 + (1 - cos|p|)/|p|^2 p^ + (|p| - sin|p|)/|p|^3 p^ p^

    then the quaternion is normalised (its norm stays 1 to rounding); the
    joints move by ``dt qd``.  No Euler angles, so no singularity.

    Parameters
    ----------
    q : array_like, shape (7 + n,) or (N, 7 + n)
    qd : array_like, shape (6 + n,) or (N, 6 + n)
    dt : float or array_like broadcasting to (N,)

    Returns
    -------
    numpy.ndarray, shape of ``q``

    Examples
    --------
    A quarter turn about z while moving along x: the base ends on an arc of radius 2/pi.

    >>> integrate([0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, np.pi / 2], 1.0).round(12)
    array([0.63661977, 0.63661977, 0.        , 0.        , 0.        ,
           0.70710678, 0.70710678])
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    _check_lengths(q, qd)
    dt = np.asarray(dt, dtype=float)[..., None]
    v, omega = qd[..., :3] * dt, qd[..., 3:6] * dt
    theta = np.linalg.norm(omega, axis=-1, keepdims=True)
    small = theta < 1e-4
    t2 = theta * theta
    safe = np.where(small, 1.0, theta)
    half_sinc = np.where(small, 0.5 - t2 / 48, np.sin(safe / 2) / safe)  # sin(t/2)/t
    a = np.where(small, 0.5 - t2 / 24, (1 - np.cos(safe)) / safe**2)
    b = np.where(small, 1 / 6 - t2 / 120, (safe - np.sin(safe)) / safe**3)
    step = np.concatenate([half_sinc * omega, np.cos(theta / 2)], axis=-1)  # exp of the rotation
    Qn = quaternion_product(normalised_quaternion(q[..., 3:7]), step)
    w_x_v = np.cross(omega, v)
    translation = v + a * w_x_v + b * np.cross(omega, w_x_v)
    out = np.array(np.broadcast_to(q, np.broadcast_shapes(q.shape, qd.shape[:-1] + (q.shape[-1],))))
    out[..., :3] = q[..., :3] + np.einsum("...ij,...j->...i", quaternion_to_rotation(q[..., 3:7]), translation)
    out[..., 3:7] = normalised_quaternion(Qn)
    out[..., 7:] = q[..., 7:] + qd[..., 6:] * dt
    return out


def _check_lengths(q, qd):
    if q.shape[-1] < 7 or qd.shape[-1] != q.shape[-1] - 1:
        raise KaneRobotError(
            f"q needs 7 + n values (base position, quaternion x y z w, joints) and qd 6 + n (base v, w, joint rates); "
            f"got {q.shape[-1]} and {qd.shape[-1]}"
        )
