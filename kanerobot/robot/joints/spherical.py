"""The spherical (ball) joint: a rotation given by a unit quaternion, three angular speeds.

Configuration ``(QX, QY, QZ, QW)<stem>``, the unit quaternion of the
rotation ``R`` of frame j on its placement (scalar last, pinocchio's
``JointModelSpherical``); speeds ``(WX, WY, WZ)<stem>``, the angular velocity
of link j relative to its antecedent, in frame j; ``S = [0; I3]``.  The
quaternion is not a vector space: :meth:`Spherical.integrate` follows the
exponential map, so there is no singular configuration (no Euler angles).
"""

import numpy as np
import sympy

from kanerobot.robot.joints.model import JointModel
from kanerobot.robot.joints.quaternion import (
    exp_rotation,
    log_rotation,
    normalised_quaternion,
    quaternion_product,
    quaternion_rate,
    rotation_matrix,
)
from kanerobot.robot.joints.transforms import homogeneous


class Spherical(JointModel):
    """``M(q) = [R(q), 0]``; nq 4, nv 3.

    Examples
    --------
    A quarter turn about z at 1 rad/s, then back to where it started:

    >>> import numpy as np
    >>> ball = Spherical()
    >>> q1 = ball.integrate(ball.neutral(), [0.0, 0.0, np.pi / 2])
    >>> q1.round(12)
    array([0.        , 0.        , 0.70710678, 0.70710678])
    >>> ball.difference(q1, ball.neutral()).round(12) + 0.0
    array([ 0.        ,  0.        , -1.57079633])
    """

    name = "spherical"
    nq, nv = 4, 3
    euclidean = False

    def placed(self, R0, P, axis, q):
        return homogeneous(sympy.Matrix(R0) * rotation_matrix(q), P)

    def subspace(self, axis):
        return sympy.zeros(3, 3), sympy.eye(3)

    def configuration_names(self, stem):
        return tuple(f"Q{c}{stem}" for c in "XYZW")

    def speed_names(self, stem):
        return tuple(f"W{c}{stem}" for c in "XYZ")

    def acceleration_names(self, stem):
        return tuple(f"DW{c}{stem}" for c in "XYZ")

    def force_names(self, stem):
        return tuple(f"C{c}{stem}" for c in "XYZ")

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0])

    def integrate(self, q, v, dt=1.0):
        omega = np.asarray(v, dtype=float) * np.asarray(dt, dtype=float)[..., None]
        return normalised_quaternion(quaternion_product(normalised_quaternion(np.asarray(q, dtype=float)), exp_rotation(omega)))

    def difference(self, q0, q1):
        conjugate = np.asarray(q0, dtype=float) * np.array([-1.0, -1.0, -1.0, 1.0])
        return log_rotation(quaternion_product(normalised_quaternion(conjugate), normalised_quaternion(np.asarray(q1, dtype=float))))

    def configuration_rate(self, q, v):
        return quaternion_rate(q, v)

    def configuration_derivative(self, q, v):
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        u, w = q[..., :3], q[..., 3:]
        return np.concatenate([0.5 * (w * v + np.cross(u, v)), -0.5 * np.sum(u * v, axis=-1, keepdims=True)], axis=-1)

    def normalised(self, q):
        return normalised_quaternion(np.asarray(q, dtype=float))

    def random_configuration(self, rng):
        q = rng.normal(size=4)
        return q / np.linalg.norm(q)
