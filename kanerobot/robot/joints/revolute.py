"""The revolute joint: one rotation ``q`` about a unit axis ``e`` of its frame (``sigma = 0``)."""

import sympy

from kanerobot.robot.joints.model import OneSpeed
from kanerobot.robot.joints.transforms import homogeneous, rot_axis


class Revolute(OneSpeed):
    """``M(q) = Rot(e, q)``; ``S = [0; e]``: speed ``QP`` is the rotation rate about e.

    Examples
    --------
    >>> Revolute().motion_subspace([0, 0, 1]).T
    Matrix([[0, 0, 0, 0, 0, 1]])
    """

    name = "revolute"
    sigma = 0

    def placed(self, R0, P, axis, q):
        (angle,) = q
        return homogeneous(sympy.Matrix(R0) * rot_axis(axis, angle), P)

    def subspace(self, axis):
        return sympy.zeros(3, 1), sympy.Matrix(axis)
