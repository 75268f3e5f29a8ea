"""Joint models: the one place that knows what sigma means.

A frame j is placed on its antecedent i = a(j) by a fixed transform followed
by the joint motion about (sigma = 0) or along (sigma = 1) a unit axis e
expressed in frame j; sigma = 2 is a fixed frame.  Every algorithm asks this
module for ``iT_j(q)``, the axis and the motion subspace instead of testing
sigma itself (the role of ``jcalc`` in Featherstone's spatial_v2).

Khalil-Kleinfinger parameters give (SYMORO+ eq. 1-b)::

    iT_j = Rot(z, gamma) Trans(z, b) Rot(x, alpha) Trans(x, d) Rot(z, theta) Trans(z, r)

with the joint variable q = theta (revolute) or r (prismatic) and e = z_j.
A general frame gives ``iT_j = [R0, P; 0 1] * Motion(e, q)``: R0 and P are
the rotation and position at q = 0 and e is the joint axis in frame j (the
form of the Krang report, seed 001).

The **free flyer** is the root joint of a floating robot (link 0 hangs from
the world by it; pinocchio's ``JointModelFreeFlyer``, spatial_v2's 'Fb'):
seven configuration values ``(x, y, z, qx, qy, qz, qw)``, the position of
O_0 in the world frame and the unit quaternion of ``wR_0`` (scalar last),
and six speeds ``(v, w)``, the velocity of O_0 and the angular velocity of
link 0, both in frame 0; its motion subspace is the 6x6 identity.  A
configuration is not the integral of the speeds (the quaternion is not a
vector space): :func:`integrate`, :func:`configuration_derivative` and
:func:`base_pose` handle a state whose root is a free flyer, ``q = (x, y,
z, qx, qy, qz, qw, q_1 .. q_n)`` and ``qd = (v, w, qd_1 .. qd_n)``, the
joints after it being revolute or prismatic (one value each, integrated
by ``q + dt qd``).  :data:`JOINT_SIZES` is the ``(nq, nv)`` of every type.
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError

REVOLUTE, PRISMATIC, FIXED, FREE_FLYER = 0, 1, 2, 3
JOINT_TYPES = {REVOLUTE: "revolute", PRISMATIC: "prismatic", FIXED: "fixed", FREE_FLYER: "free-flyer"}
#: ``(nq, nv)``: configuration values and speeds of each joint type.
JOINT_SIZES = {REVOLUTE: (1, 1), PRISMATIC: (1, 1), FIXED: (0, 0), FREE_FLYER: (7, 6)}


def rot_x(angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rot_axis(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues).

    Axes along a coordinate direction give the plain elementary rotation,
    without the (1 - cos) terms that Rodrigues' formula would leave in.
    """
    e = sympy.Matrix(axis)
    c, s = sympy.cos(angle), sympy.sin(angle)
    skew = hat(e)
    return sympy.eye(3) * c + skew * s + (e * e.T) * (1 - c)


def hat(v):
    """Skew-symmetric matrix of a 3-vector: ``hat(a) * b == a x b``."""
    return sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def homogeneous(R, P):
    """4x4 homogeneous transform from a 3x3 rotation and a 3-vector."""
    T = sympy.eye(4)
    T[:3, :3] = R
    T[:3, 3] = sympy.Matrix(P)
    return T


def kk_transform(gamma, b, alpha, d, theta, r):
    """Khalil-Kleinfinger transform iT_j (SYMORO+ eq. 1-b)."""
    cg, sg = sympy.cos(gamma), sympy.sin(gamma)
    ca, sa = sympy.cos(alpha), sympy.sin(alpha)
    ct, st = sympy.cos(theta), sympy.sin(theta)
    return sympy.Matrix(
        [
            [cg * ct - sg * ca * st, -cg * st - sg * ca * ct, sg * sa, d * cg + r * sg * sa],
            [sg * ct + cg * ca * st, -sg * st + cg * ca * ct, -cg * sa, d * sg - r * cg * sa],
            [sa * st, sa * ct, ca, r * ca + b],
            [0, 0, 0, 1],
        ]
    )


def general_transform(R0, P, axis, sigma, q):
    """iT_j of a general frame: fixed placement (R0, P) then the joint motion."""
    R0, P, e = sympy.Matrix(R0), sympy.Matrix(P), sympy.Matrix(axis)
    if sigma == REVOLUTE:
        return homogeneous(R0 * rot_axis(e, q), P)
    if sigma == PRISMATIC:
        return homogeneous(R0, P + R0 * e * q)
    return homogeneous(R0, P)


def motion_subspace(sigma, axis):
    """6-vector ``[sigma e; (1 - sigma) e]`` of a joint in its own frame.

    Linear part first, as in Khalil's ``j a_j = [0 0 sigma 0 0 sigma_bar]``.
    A fixed frame has the zero vector.
    """
    e = sympy.Matrix(axis)
    if sigma == REVOLUTE:
        return sympy.Matrix.vstack(sympy.zeros(3, 1), e)
    if sigma == PRISMATIC:
        return sympy.Matrix.vstack(e, sympy.zeros(3, 1))
    return sympy.zeros(6, 1)


class JointVariableError(ValueError):
    """The joint's theta, r or q is not ``variable + constant``."""


def split_joint_variable(expr, label="", known=()):
    """``(q, offset)`` of a joint expression ``q + offset``.

    Published Denavit-Hartenberg tables written as Khalil-Kleinfinger
    parameters carry constant shifts (``th2 - pi/2``, ``th3 + 0.3``,
    ``r2 + L0``).  The joint variable is the symbol that appears alone with
    coefficient +1; the offset is what remains and may not contain it.  When
    several symbols appear alone (``r2 + L0``), the one named after the joint
    (``th2``, ``r2``, ``q2``, ``theta2``) wins, then one not in ``known`` (the
    names of the robot's other parameters, if the caller knows them).

    Parameters
    ----------
    expr : sympy.Expr
        theta of a revolute KK frame, r of a prismatic one, q of a general frame.
    label : str
        The frame's label, for the naming rule.
    known : iterable of str, optional
        Names that are certainly not this joint's variable.

    Returns
    -------
    tuple
        ``(sympy.Symbol, sympy.Expr)``.

    Raises
    ------
    JointVariableError
        With a message saying what the expression must look like.

    Examples
    --------
    >>> import sympy
    >>> th2, r2, L0 = sympy.symbols("th2 r2 L0")
    >>> split_joint_variable(th2 - sympy.pi / 2, "2")
    (th2, -pi/2)
    >>> split_joint_variable(r2 + L0, "2")
    (r2, L0)
    """
    if isinstance(expr, sympy.Symbol):
        return expr, sympy.S.Zero
    alone = [term for term in sympy.Add.make_args(expr) if isinstance(term, sympy.Symbol)]
    if len(alone) > 1:
        named = [s for s in alone if s.name in {f"{p}{label}" for p in ("th", "r", "q", "theta", "q_")}]
        unknown = [s for s in alone if s.name not in set(known)]
        alone = named if len(named) == 1 else unknown
    if len(alone) != 1:
        what = "no symbol appears alone" if not alone else "several symbols could be it: " + ", ".join(map(str, alone))
        raise JointVariableError(
            f"{expr} is not 'joint variable + constant' ({what}); write it as the joint's own symbol plus an "
            f"offset, e.g. th{label} - pi/2 or r{label} + L0"
        )
    variable = alone[0]
    offset = expr - variable
    if variable in offset.free_symbols:
        raise JointVariableError(
            f"{expr}: the joint variable {variable} appears in its offset {offset}; the offset must be a constant"
        )
    return variable, offset


# ------------------------------------------------ the free flyer, numerically
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
    Qn = _quaternion_product(normalised_quaternion(q[..., 3:7]), step)
    w_x_v = np.cross(omega, v)
    translation = v + a * w_x_v + b * np.cross(omega, w_x_v)
    out = np.array(np.broadcast_to(q, np.broadcast_shapes(q.shape, qd.shape[:-1] + (q.shape[-1],))))
    out[..., :3] = q[..., :3] + np.einsum("...ij,...j->...i", quaternion_to_rotation(q[..., 3:7]), translation)
    out[..., 3:7] = normalised_quaternion(Qn)
    out[..., 7:] = q[..., 7:] + qd[..., 6:] * dt
    return out


def _quaternion_product(p, q):
    """``p * q`` for quaternions ``(x, y, z, w)``."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    return np.concatenate([pw * qv + qw * pv + np.cross(pv, qv), pw * qw - np.sum(pv * qv, axis=-1, keepdims=True)], axis=-1)


def _check_lengths(q, qd):
    if q.shape[-1] < 7 or qd.shape[-1] != q.shape[-1] - 1:
        raise KaneRobotError(
            f"q needs 7 + n values (base position, quaternion x y z w, joints) and qd 6 + n (base v, w, joint rates); "
            f"got {q.shape[-1]} and {qd.shape[-1]}"
        )
