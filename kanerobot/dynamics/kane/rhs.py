"""The right-hand side of Kane's equations split as the seed's ``kanesRHS`` (:class:`KaneRHS`)."""

import dataclasses

import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program


@dataclasses.dataclass
class KaneRHS:
    """Right-hand side terms of Kane's equations, as the seed's ``kanesRHS``.

    ``F = a + b1 + b2 + b3 + b4 + c`` for two frames (Krang's hands), with:

    Attributes
    ----------
    frames : tuple of str
        The frames where the environment applies wrenches.
    a : Program
        ``Fr`` of the joint torques and their reactions, outputs
        ``a<label>``; equals ``GAM<label>`` (seed eq. 15: the identity).
    b : dict str -> Program
        ``b1`` (``J_1^T f_1``, force at the origin of ``frames[0]``),
        ``b2`` (``J_1^T m_1``, moment), ``b3``, ``b4`` for ``frames[1]``
        ...; outputs ``b<k>_<label>``; inputs include the wrench symbols.
    c : Program
        ``Fr`` of gravity, outputs ``c<label>`` (``-Q`` for a fixed base).
    jacobians : dict str -> Program
        For each frame, the transposed Jacobians as outputs ``JVT<i><c>``
        (n x 3, partial velocities of the origin, in the frame) and
        ``JWT<i><c>`` (partial angular velocities): ``b = JVT f``, ``JWT m``.
    wrench_symbols : dict str -> (Matrix, Matrix)
        The force ``FE<X|Y|Z><label>`` and moment ``TE<X|Y|Z><label>``
        symbols applied by the environment, in that frame.
    """

    frames: tuple
    a: Program
    b: dict
    c: Program
    jacobians: dict
    wrench_symbols: dict


def _free_symbol(name, taken):
    if name in taken:
        raise KaneRobotError(f"the robot already has a symbol {name}: rename it to use rhs_terms")
    return sympy.Symbol(name)


def system_rhs_terms(system, frames=None):
    """:meth:`KaneSystem.rhs_terms <kanerobot.dynamics.kane.KaneSystem.rhs_terms>` of ``system``.

    Every term is ``Fr`` of its loads, formed by a KanesMethod on the
    system's frames (:attr:`~kanerobot.dynamics.kane.KaneSystem.mechanics`).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> rhs = system_rhs_terms(KaneSystem(kr.load(kr.frames_path("planar2"))))
    >>> rhs.frames, sorted(rhs.b), sorted(rhs.a.outputs)
    (('2',), ['b1', 'b2'], ['a1', 'a2'])
    """
    robot = system.robot
    if system.floating:
        raise KaneRobotError(f"robot {robot.name} has a floating base: rhs_terms is for a fixed or moving base")
    if frames is None:
        frames = [f.label for f in robot.frames if not robot.children(f.label)]
    frames = [str(f) for f in frames]
    for f in frames:
        robot.frame(f)  # raises for an unknown label
    mechanics, write, names = system.mechanics, system.kanes_method_models.writer.program, system.kanes_method_models.names
    taken = {s.name for s in system.inputs}
    symbols, programs, jacobians = {}, {}, {}
    torque = mechanics.fr_group("torque")
    programs["a"] = write(list(zip(names("a"), list(torque))), speeds=False)
    for m, label in enumerate(frames):
        F = sympy.Matrix([_free_symbol(f"FE{c}{robot.stems[label]}", taken) for c in "XYZ"])
        T = sympy.Matrix([_free_symbol(f"TE{c}{robot.stems[label]}", taken) for c in "XYZ"])
        symbols[label] = (F, T)
        B, O = mechanics.frames[label], mechanics.origins[label]
        bf = mechanics.generalized_active_forces([(O, mechanics.real_vector(B, F))])
        bm = mechanics.generalized_active_forces([(B, mechanics.real_vector(B, T))])
        programs[f"b{2 * m + 1}"] = write(list(zip(names(f"b{2 * m + 1}_"), list(bf))), speeds=False, extra_inputs=list(F))
        programs[f"b{2 * m + 2}"] = write(list(zip(names(f"b{2 * m + 2}_"), list(bm))), speeds=False, extra_inputs=list(T))
        jacobians[label] = write(_jacobian_entries(system, bf, bm, F, T), speeds=False)
    gravity = mechanics.fr_group("gravity")
    programs["c"] = write(list(zip(names("c"), list(gravity))), speeds=False)
    return KaneRHS(frames=tuple(frames), a=programs["a"], b={k: v for k, v in programs.items() if k.startswith("b")},
                   c=programs["c"], jacobians=jacobians, wrench_symbols=symbols)


def _jacobian_entries(system, bf, bm, F, T):
    """``JVT<i><c> = d bf_i / d F_c`` then ``JWT<i><c> = d bm_i / d T_c``."""
    n = system.n
    names_v = matrix_entry_names("JVT", (n, 3))
    names_w = matrix_entry_names("JWT", (n, 3))
    entries = []
    for r in range(n):
        for c in range(3):
            entries.append((names_v[r][c], sympy.diff(bf[r], system.real(F[c]))))
    for r in range(n):
        for c in range(3):
            entries.append((names_w[r][c], sympy.diff(bm[r], system.real(T[c]))))
    return entries
