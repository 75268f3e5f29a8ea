"""The prismatic joint: one translation ``q`` along a unit axis ``e`` of its frame (``sigma = 1``)."""

import sympy

from kanerobot.robot.joints.model import OneSpeed
from kanerobot.robot.joints.transforms import homogeneous


class Prismatic(OneSpeed):
    """``M(q) = Trans(e q)``; ``S = [e; 0]``: speed ``QP`` is the sliding rate along e.

    Examples
    --------
    >>> Prismatic().motion_subspace([1, 0, 0]).T
    Matrix([[1, 0, 0, 0, 0, 0]])
    """

    name = "prismatic"
    sigma = 1

    def placed(self, R0, P, axis, q):
        (length,) = q
        R0 = sympy.Matrix(R0)
        return homogeneous(R0, sympy.Matrix(P) + R0 * sympy.Matrix(axis) * length)

    def subspace(self, axis):
        return sympy.Matrix(axis), sympy.zeros(3, 1)

    def random_configuration(self, rng):
        return rng.uniform(-1.0, 1.0, 1)
