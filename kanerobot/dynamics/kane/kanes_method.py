"""The KanesMethod path of :class:`~kanerobot.dynamics.kane.KaneSystem`: the models read off sympy's KanesMethod.

The design card's route: Kane's equations formed by
:class:`sympy.physics.mechanics.KanesMethod` on the system's frames, bodies
and loads (:class:`~kanerobot.dynamics.kane.mechanics.Mechanics`), the models
read off its ``mass_matrix`` and ``forcing``.  An independent path, with
larger programs, that the tests compare with the nested one
(``KaneSystem.program(name, source="kanes_method")``).
"""

import dataclasses
import functools

import sympy

from kanerobot.dynamics.kane.emit import KanesMethodWriter
from kanerobot.dynamics.kane.models import KaneModels
from kanerobot.robot.description import Base
from kanerobot.symbolic.printing import matrix_entry_names


class KanesMethodModels(KaneModels):
    """The models of a :class:`~kanerobot.dynamics.kane.KaneSystem` read off KanesMethod's ``mass_matrix`` and ``forcing``.

    Every expression is KanesMethod's, with the kinematic symbols it is made
    of defined before it (the system's ``kinematics``).

    Parameters
    ----------
    system : KaneSystem

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> print(KanesMethodModels(KaneSystem(kr.load(kr.frames_path("planar2")))).program("mass_matrix"))  # doctest: +ELLIPSIS
    C2 = cos(th2)
    ...
    A22 = IA2 + IG33_2 + M2*(CG1_2**2 + CG2_2**2)
    """

    def __init__(self, system):
        super().__init__(system)
        self._kanes_method_program = None

    @functools.cached_property
    def writer(self):
        """The :class:`~kanerobot.dynamics.kane.emit.KanesMethodWriter` of the system's programs."""
        return KanesMethodWriter(self.system)

    @functools.cached_property
    def fixed(self):
        """The system of the robot on a base at rest (its velocity forces)."""
        system = self.system
        robot = system.robot
        base = Base(Z=robot.base.Z, G=robot.base.G)
        return type(system)(dataclasses.replace(robot, base=base), trig=system.trig)

    def mass_matrix_entries(self):
        """``[(A<i><j>, KanesMethod.mass_matrix[i, j] + IA_i delta_ij)]``, i <= j, column by column."""
        mechanics = self.system.mechanics
        MM, IA = mechanics.mass_matrix_kane, mechanics.IA
        n = self.system.n
        names = matrix_entry_names("A", (n, n))
        return [(names[r][c], MM[r, c] + (IA[r] if r == c else 0)) for c in range(n) for r in range(c + 1)]

    def h_expressions(self):
        """``-forcing`` with the joint torques left out: ``H`` (KanesMethod's
        ``forcing = Fr - nonMM`` is Kane's equations at ``u' = 0``)."""
        mechanics = self.system.mechanics
        forcing = mechanics.forcing
        torques = mechanics.torque_symbols()
        if torques is not None:
            return [-e for e in forcing.xreplace(dict.fromkeys(torques, 0))]
        torque = mechanics.fr_group("torque")
        return [-(forcing[k] - torque[k]) for k in range(self.system.n)]

    def kanes_method_program(self):
        """KanesMethod's own ``mass_matrix`` and ``forcing`` as one program.

        Outputs ``MM<i><j>`` (i <= j, column by column, ``MM<i>_<j>``
        beyond 9 joints; no rotor inertia) and ``FORCING<label>`` (``Fr -
        nonMM``, the joint torques ``GAM`` included): Kane's equations are
        ``MM u' = FORCING``, or with the rotor inertias ``(MM + diag(IA)) u'
        = FORCING``.  Every expression is KanesMethod's, with the kinematic
        symbols it is made of defined before it (the system's ``kinematics``):
        the independent path the tests check the nested programs against.
        """
        if self._kanes_method_program is None:
            mechanics, n = self.system.mechanics, self.system.n
            MM = mechanics.mass_matrix_kane
            names = matrix_entry_names("MM", (n, n))
            outputs = [(names[r][c], MM[r, c]) for c in range(n) for r in range(c + 1)]
            outputs += list(zip(self.names("FORCING"), list(mechanics.forcing)))
            self._kanes_method_program = self.writer.program(outputs)
        return self._kanes_method_program

    def inverse_dynamics(self):
        """``A u' + H`` with ``A`` KanesMethod's ``mass_matrix`` plus ``diag(IA)`` and ``H = -(forcing - Fr_GAM)``."""
        n = self.system.n
        entries = self.mass_matrix_entries()
        h = list(zip(self.names("H"), self.h_expressions()))
        qdd = list(self.system.acceleration_symbols)

        def finish(program, lines):
            A = {}
            values = dict(lines)
            names = matrix_entry_names("A", (n, n))
            for c in range(n):
                for r in range(c + 1):
                    A[r, c] = A[c, r] = values[names[r][c]]
            gam = []
            for k, label in enumerate(self.system.suffixes):
                total = values[f"H{label}"] + sympy.Add(*(A[k, m] * qdd[m] for m in range(n)))
                gam.append((f"GAM{label}", total))
            return gam

        return self.writer.program(entries + h, finish=finish)

    def h(self):
        return self.writer.program(list(zip(self.names("GAM"), self.h_expressions())))

    def gravity(self):
        """``Q = -Fr_gravity`` for a fixed base; with a moving base, ``-forcing`` without the
        torques and wrenches at ``u = 0`` (the base motion is kept, as in Newton-Euler's ``gravity_torques``)."""
        mechanics = self.system.mechanics
        if not self.system.moving:
            g = mechanics.fr_group("gravity")
            return self.writer.program(list(zip(self.names("Q"), [-e for e in g])), speeds=False)
        torques = mechanics.torque_symbols()
        wrenches = mechanics.wrench_symbols()
        if torques is not None and wrenches is not None:
            forcing = mechanics.forcing.xreplace(dict.fromkeys(torques + wrenches, 0))
            Q = [-e for e in forcing]
        else:
            g = mechanics.fr_group("gravity")
            Q = [-(g[k] + mechanics.frstar[k]) for k in range(self.system.n)]
        return self.writer.program(list(zip(self.names("Q"), Q)), speeds=False)

    def mass_matrix(self):
        """KanesMethod's ``mass_matrix`` plus ``diag(IA)``."""
        return self.writer.program(self.mass_matrix_entries())

    def velocity_forces(self):
        """``nonMM = Fr - forcing`` (of the robot on a base at rest when the base moves)."""
        system = self.system
        if system.moving:
            return self.fixed.velocity_forces(source="kanes_method")
        mechanics = system.mechanics
        nonmm = mechanics.fr - mechanics.forcing
        outputs = list(zip(self.names("HV"), list(nonmm)))
        if system.hamel_blocks:
            # The Coriolis matrix of quasi-velocities needs A too (coriolis.half_a_s).
            outputs += self.mass_matrix_entries()

        def finish(program, lines):
            # Outputs named as assignments: ForwardMode differentiates assignments line by line.
            return [(name, program.assign(name, expr)) for name, expr in lines]

        return self.writer.program(outputs, finish=finish)

    def mass_matrix_values(self, fm, hv):
        # KanesMethod's velocity_forces carries A among its outputs.
        names = matrix_entry_names("A", (self.system.n, self.system.n))
        return {name: fm.value(hv.outputs[name]) for row in names for name in row if name in hv.outputs}
