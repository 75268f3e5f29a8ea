"""The interface both paths of :class:`~kanerobot.dynamics.kane.KaneSystem` share, and the Coriolis matrix by ``getAC``.

A path (:class:`~kanerobot.dynamics.kane.nested.NestedModels`, the default,
or :class:`~kanerobot.dynamics.kane.kanes_method.KanesMethodModels`) gives
the programs :meth:`KaneModels.inverse_dynamics`, :meth:`~KaneModels.h`,
:meth:`~KaneModels.gravity`, :meth:`~KaneModels.mass_matrix`,
:meth:`~KaneModels.velocity_forces` and :meth:`~KaneModels.coriolis_matrix`
(or :meth:`~KaneModels.program` by name, derived once), with the output
names of the Newton-Euler engine.
"""

import abc

import sympy

from kanerobot.dynamics.coriolis import half_a_s
from kanerobot.dynamics.kane.support import MODELS
from kanerobot.errors import KaneRobotError
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names


class KaneModels(abc.ABC):
    """The dynamic models of a :class:`~kanerobot.dynamics.kane.KaneSystem` by one path.

    Parameters
    ----------
    system : KaneSystem
        The symbols, speeds and output names of the robot.
    """

    def __init__(self, system):
        self.system = system
        self._programs = {}

    def program(self, name):
        """The program of model ``name`` (one of :data:`~kanerobot.dynamics.kane.support.MODELS`), derived once."""
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        if name not in self._programs:
            self._programs[name] = getattr(self, name)()
        return self._programs[name]

    def names(self, prefix):
        """``<prefix><suffix>`` per generalized speed (``GAM1 ..``; ``GAMFX0 ..`` first for a floating base)."""
        return [f"{prefix}{suffix}" for suffix in self.system.suffixes]

    @abc.abstractmethod
    def inverse_dynamics(self):
        """``GAM = -Fr_other - Fr*``, rotor inertia included: outputs ``GAM<label>``.

        Gravity, friction ``FV u + FS sign(u)``, the external wrenches ``FX
        .. CZ`` and the base motion are included, as in
        :func:`kanerobot.dynamics.newton_euler.inverse_dynamics`.  Nested
        (default): the inertia forces are formed with ``u'`` directly and
        summed from the leaves to the root (docs/theory/kane.md).  From
        KanesMethod: ``A u' + H`` with ``A`` its ``mass_matrix`` plus
        ``diag(IA)`` and ``H = -(forcing - Fr_GAM)``.
        """

    @abc.abstractmethod
    def h(self):
        """Centrifugal, Coriolis, gravity, friction (and wrench, base) torques
        ``H = GAM`` at ``u' = 0``: outputs ``GAM<label>``."""

    @abc.abstractmethod
    def gravity(self):
        """Gravity torques ``Q``: outputs ``Q<label>``.

        ``Q = -Fr_gravity`` for a fixed base (nested: from the subtrees'
        masses and first moments, docs/theory/kane.md); with a moving base, ``H``
        at ``u = 0`` without friction and wrenches (the base motion is
        kept, as in Newton-Euler's ``gravity_torques``).
        """

    @abc.abstractmethod
    def mass_matrix(self):
        """Inertia matrix ``A``, the coefficients of ``u'`` in ``-Fr*`` plus
        ``diag(IA)``: outputs ``A<i><j>``, i <= j, column by column
        (``A<i>_<j>`` beyond 9 joints).  Nested: from the subtrees'
        inertias (docs/theory/kane.md); from KanesMethod: its ``mass_matrix``."""

    @abc.abstractmethod
    def velocity_forces(self):
        """``h_vel(u) = -Fr*`` at ``u' = 0`` with the base at rest:
        homogeneous quadratic in ``u``; outputs ``HV<label>`` (named
        assignments, which forward-mode differentiation takes line by
        line).  From KanesMethod it is ``nonMM = Fr - forcing``."""

    @abc.abstractmethod
    def mass_matrix_values(self, fm, hv):
        """``{A<i><j>: value}`` in the symbols of ``fm.target``, for the Coriolis matrix of a floating base.

        ``fm`` is the :class:`~kanerobot.symbolic.derivative.ForwardMode` of the
        :meth:`velocity_forces` program ``hv``.
        """

    def coriolis_matrix(self):
        """Coriolis matrix by the seed's ``getAC`` rule, ``C_ij = 1/2 dh_vel,i/du_j``:
        outputs ``C<i><j>`` row by row (``C<i>_<j>`` beyond 9 joints).

        Computed by forward-mode differentiation of the :meth:`velocity_forces`
        program with respect to each ``QP`` (:mod:`kanerobot.symbolic.derivative`),
        each seeded with 1/2 (the derivative along it is then ``1/2 dh_vel/du_j``
        itself, with no product per entry).
        """
        system = self.system
        hv = self.velocity_forces()
        if not system.hamel_blocks:
            return coriolis_from_velocity_forces(hv, system.robot, speeds=system.speed_symbols, rows=self.names("HV"))
        # Quasi-velocities (a free flyer's, a spherical or planar joint's speeds in its own frame):
        # getAC lacks the half of A S that makes A' - 2C skew (docs/theory/coriolis.md).
        n, nu = system.n, list(system.speed_symbols)
        names = matrix_entry_names("A", (n, n))

        def extra(fm):
            entries = self.mass_matrix_values(fm, hv)
            A = sympy.Matrix(n, n, lambda i, j: entries.get(names[min(i, j)][max(i, j)], sympy.S.Zero))
            return half_a_s(A, nu, system.hamel_blocks)

        return coriolis_from_velocity_forces(hv, system.robot, speeds=nu, rows=self.names("HV"), extra=extra)


def coriolis_from_velocity_forces(hv, robot, speeds=None, rows=None, extra=None):
    """``C_ij = 1/2 dh_vel,i/du_j`` (the seed's ``getAC`` rule) by forward-mode differentiation.

    Parameters
    ----------
    hv : Program
        ``h_vel``, outputs ``HV<label>``.
    robot : Robot
        Gives the joint labels and the speeds ``QP``.
    speeds, rows : sequence, optional
        The speeds and the names of the ``h_vel`` outputs, in order (default
        ``robot.qd`` and ``HV<label>``; a floating base puts its six first).
    extra : callable, optional
        ``extra(fm)`` returns an (n, n) matrix added to ``C``, in the
        symbols of the result (``fm.value`` maps ``hv``'s symbols there).

    Returns
    -------
    Program
        Outputs ``C<i><j>`` row by row.  Each direction ``QP_j`` is seeded
        with 1/2, so that the derivative line ``d<var>_d<QP_j>`` is half the
        derivative of ``<var>`` and ``C_ij`` is the derivative of
        ``HV<label_i>`` along ``QP_j`` itself.
    """
    qd = list(robot.qd) if speeds is None else list(speeds)
    rows = [f"HV{robot.stems[label]}" for label in robot.joint_labels] if rows is None else list(rows)
    n = len(qd)
    names = matrix_entry_names("C", (n, n))
    # The outputs' names stay free: a compound angle made by the trig rules in a
    # derivative line would otherwise take C23.
    fm = ForwardMode(hv, reserved=[name for row in names for name in row])
    target = fm.target
    half = sympy.Rational(1, 2)
    for k, v in enumerate(qd):
        if v != 0:
            fm.add_direction(k, {v: half}, label=str(v))
    outputs = hv.outputs
    plus = extra(fm) if extra is not None else sympy.zeros(n, n)
    for i, row in enumerate(rows):
        expr = outputs[row]
        for j in range(n):
            target.set_output(names[i][j], (fm.derivative(expr, j) if qd[j] != 0 else sympy.S.Zero) + plus[i, j])
    target.prune()
    return target
