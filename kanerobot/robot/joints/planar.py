"""The planar joint: a translation ``(x, y)`` and a rotation ``theta`` in the xy plane of its frame.

Configuration ``(X, Y, TH)<stem>``: ``M(q) = Trans(x, y, 0) Rot(z, theta)``
(pinocchio's ``JointModelPlanar``, whose configuration holds ``cos theta,
sin theta`` instead of theta); speeds ``(VX, VY, WZ)<stem>``, the velocity of
O_j relative to the antecedent and the rotation rate, in frame j, so that
``S`` is constant: ``S_lin = [e_x e_y 0]``, ``S_ang = [0 0 e_z]``.
:meth:`Planar.integrate` follows the exponential map of SE(2).
"""

import numpy as np
import sympy

from kanerobot.robot.joints.model import JointModel
from kanerobot.robot.joints.transforms import homogeneous, rot_z


def _v2(phi):
    """``V(phi)`` of SE(2)'s exponential, and its entries' series near 0: ``[[a, -b], [b, a]]``."""
    small = np.abs(phi) < 1e-4
    safe = np.where(small, 1.0, phi)
    a = np.where(small, 1 - phi**2 / 6, np.sin(safe) / safe)
    b = np.where(small, phi / 2 - phi**3 / 24, (1 - np.cos(safe)) / safe)
    return a, b


def _rotate(theta, x, y):
    c, s = np.cos(theta), np.sin(theta)
    return c * x - s * y, s * x + c * y


class Planar(JointModel):
    """``M(q) = Trans(x, y, 0) Rot(z, theta)``; nq = nv = 3.

    Examples
    --------
    Half a turn at unit speed forward: the origin ends on a circle of radius 1/pi.

    >>> import numpy as np
    >>> joint = Planar()
    >>> joint.integrate(joint.neutral(), [1.0, 0.0, np.pi], 1.0).round(12) + 0.0
    array([0.        , 0.63661977, 3.14159265])
    >>> joint.difference(joint.neutral(), [0.0, 2 / np.pi, np.pi]).round(12) + 0.0
    array([1.        , 0.        , 3.14159265])
    """

    name = "planar"
    nq = nv = 3
    euclidean = False

    def placed(self, R0, P, axis, q):
        x, y, theta = q
        R0 = sympy.Matrix(R0)
        return homogeneous(R0 * rot_z(theta), sympy.Matrix(P) + R0 * sympy.Matrix([x, y, 0]))

    def subspace(self, axis):
        S_lin = sympy.Matrix([[1, 0, 0], [0, 1, 0], [0, 0, 0]])
        S_ang = sympy.Matrix([[0, 0, 0], [0, 0, 0], [0, 0, 1]])
        return S_lin, S_ang

    def configuration_names(self, stem):
        return (f"X{stem}", f"Y{stem}", f"TH{stem}")

    def speed_names(self, stem):
        return (f"VX{stem}", f"VY{stem}", f"WZ{stem}")

    def acceleration_names(self, stem):
        return (f"DVX{stem}", f"DVY{stem}", f"DWZ{stem}")

    def force_names(self, stem):
        return (f"FX{stem}", f"FY{stem}", f"CZ{stem}")

    def integrate(self, q, v, dt=1.0):
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float) * np.asarray(dt, dtype=float)[..., None]
        a, b = _v2(v[..., 2])
        local = (a * v[..., 0] - b * v[..., 1], b * v[..., 0] + a * v[..., 1])
        dx, dy = _rotate(q[..., 2], *local)
        return np.stack([q[..., 0] + dx, q[..., 1] + dy, q[..., 2] + v[..., 2]], axis=-1)

    def difference(self, q0, q1):
        q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
        phi = q1[..., 2] - q0[..., 2]
        lx, ly = _rotate(-q0[..., 2], q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1])
        a, b = _v2(phi)
        det = a * a + b * b  # V^-1 = [[a, b], [-b, a]] / det
        return np.stack([(a * lx + b * ly) / det, (a * ly - b * lx) / det, phi], axis=-1)

    def configuration_rate(self, q, v):
        c, s = sympy.cos(q[2]), sympy.sin(q[2])
        return (c * v[0] - s * v[1], s * v[0] + c * v[1], sympy.sympify(v[2]))

    def configuration_derivative(self, q, v):
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        dx, dy = _rotate(q[..., 2], v[..., 0], v[..., 1])
        return np.stack([dx, dy, v[..., 2]], axis=-1)

    def random_configuration(self, rng):
        return np.array([*rng.uniform(-1.0, 1.0, 2), rng.uniform(-np.pi, np.pi)])
