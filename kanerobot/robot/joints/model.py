"""The joint model protocol: what every recursion asks of a joint.

A frame j is placed on its antecedent i = a(j) by a fixed placement
``[R0, P; 0 1]`` followed by its joint's motion ``M(q_j)``; the joint's
relative twist, in frame j, linear part first, is ``S_j qd_j`` with a motion
subspace ``S_j`` (6 x nv) constant in frame j (pinocchio's joint models,
Featherstone's ``jcalc``).  A joint model gives:

- its sizes ``nq`` (configuration values) and ``nv`` (speeds);
- :meth:`JointModel.placed`, the transform ``iT_j`` from a placement;
- :meth:`JointModel.subspace`, ``(S_lin, S_ang)``, each 3 x nv;
- :meth:`JointModel.configuration_rate`, ``dq/dt`` at speeds ``v`` (symbolic);
- the names of its symbols (:meth:`JointModel.configuration_names`,
  :meth:`JointModel.speed_names`, :meth:`JointModel.acceleration_names`,
  :meth:`JointModel.force_names`);
- numerically: :meth:`JointModel.neutral`, :meth:`JointModel.integrate`,
  :meth:`JointModel.difference`, :meth:`JointModel.configuration_derivative`,
  :meth:`JointModel.random_configuration`.

Because ``S_j`` is constant in frame j, the joint's bias acceleration
(Featherstone's ``c_J``) is zero, and the velocity-product terms of the link
accelerations follow from ``S_j`` alone (:func:`kanerobot.kinematics.forward_step`).
``sigma`` is the joint's code in SYMORO's files (0 revolute, 1 prismatic,
2 fixed); joints those files cannot hold have None.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import sympy

from kanerobot.robot.joints.transforms import homogeneous


@dataclass(frozen=True)
class JointModel:
    """A joint type: sizes, transform, motion subspace, symbols, integration.

    Subclasses set the class attributes and override the methods; instances
    hold nothing (the axis and the placement belong to the frame), so two
    joints of one type compare equal.
    """

    #: Name of the type in robot files and messages.
    name: ClassVar[str] = ""
    #: Configuration values and speeds.
    nq: ClassVar[int] = 0
    nv: ClassVar[int] = 0
    #: SYMORO's code of the type (``sigma`` of a .par file), None when its files cannot hold it.
    sigma: ClassVar[int | None] = None
    #: True when the configuration is a vector space (``integrate`` is ``q + dt v``).
    euclidean: ClassVar[bool] = True

    # ------------------------------------------------------------ symbolic
    def placed(self, R0, P, axis, q: Sequence[sympy.Expr]) -> sympy.Matrix:
        """``iT_j = [R0, P; 0 1] M(q)``, 4x4, for a general frame."""
        return homogeneous(R0, P)

    def subspace(self, axis) -> tuple[sympy.Matrix, sympy.Matrix]:
        """``(S_lin, S_ang)``: the linear and angular rows of the motion subspace in frame j, each 3 x nv."""
        return sympy.zeros(3, self.nv), sympy.zeros(3, self.nv)

    def motion_subspace(self, axis) -> sympy.Matrix:
        """``S_j``, 6 x nv, linear rows first (Khalil's ``[sigma a; sigmabar a]`` for one speed)."""
        S_lin, S_ang = self.subspace(axis)
        return sympy.Matrix.vstack(S_lin, S_ang)

    def configuration_rate(self, q: Sequence[sympy.Expr], v: Sequence[sympy.Expr]) -> tuple[sympy.Expr, ...]:
        """``dq/dt`` at speeds ``v`` as ``nq`` sympy expressions, ``tangent(q) v``: :meth:`configuration_derivative` for programs."""
        if self.euclidean and self.nq == self.nv:
            return tuple(sympy.sympify(x) for x in v)
        return tuple(self.tangent(q) * sympy.Matrix(v))

    def configuration_names(self, stem: str) -> tuple[str, ...]:
        """Names of the ``nq`` configuration symbols of the joint of frame ``stem``."""
        return ()

    def speed_names(self, stem: str) -> tuple[str, ...]:
        """Names of the ``nv`` speeds (``QP<stem>`` for one speed)."""
        return ()

    def acceleration_names(self, stem: str) -> tuple[str, ...]:
        """Names of the ``nv`` accelerations (``QDP<stem>`` for one speed)."""
        return ()

    def force_names(self, stem: str) -> tuple[str, ...]:
        """Suffixes of the ``nv`` generalized forces' outputs (``GAM<suffix>``)."""
        return ()

    def tangent(self, q: Sequence[sympy.Expr]) -> sympy.Matrix:
        """``dq/dv`` at ``v = 0``, nq x nv: the motion of ``q`` along ``integrate(q, e_k)``, symbolically
        (:meth:`configuration_derivative` is ``tangent(q) v``)."""
        return sympy.eye(self.nq, self.nv)

    def tangent_names(self, stem: str) -> tuple[str, ...]:
        """Labels of the ``nv`` columns of :meth:`tangent` (derivatives with respect to the configuration)."""
        return self.configuration_names(stem)

    # ------------------------------------------------------------- numeric
    def neutral(self) -> np.ndarray:
        """The configuration at which ``M(q)`` is the identity, shape (nq,)."""
        return np.zeros(self.nq)

    def integrate(self, q, v, dt=1.0) -> np.ndarray:
        """The configuration reached from ``q`` at constant speeds ``v`` after ``dt``; shapes (..., nq), (..., nv)."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        return q + np.asarray(dt, dtype=float)[..., None] * v if np.ndim(dt) else q + dt * v

    def difference(self, q0, q1) -> np.ndarray:
        """The speeds ``v`` with ``integrate(q0, v, 1) == q1``, shape (..., nv)."""
        return np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float)

    def configuration_derivative(self, q, v) -> np.ndarray:
        """``dq/dt`` at speeds ``v``, shape (..., nq)."""
        return np.asarray(v, dtype=float) + 0 * np.asarray(q, dtype=float)

    def normalised(self, q) -> np.ndarray:
        """``q`` brought back onto the configuration manifold (a unit quaternion renormalised)."""
        return np.asarray(q, dtype=float)

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        """A configuration drawn at random (angles in [-pi, pi], positions in [-1, 1])."""
        return rng.uniform(-np.pi, np.pi, self.nq)

    def __repr__(self):
        return f"{type(self).__name__}()"


class OneSpeed(JointModel):
    """A joint of one coordinate and one speed (revolute, prismatic): ``q<stem>``, ``QP<stem>``, ``QDP<stem>``, ``GAM<stem>``."""

    nq = nv = 1

    def configuration_names(self, stem):
        return (f"q{stem}",)

    def speed_names(self, stem):
        return (f"QP{stem}",)

    def acceleration_names(self, stem):
        return (f"QDP{stem}",)

    def force_names(self, stem):
        return (stem,)
