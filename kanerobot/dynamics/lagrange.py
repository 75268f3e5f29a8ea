"""Dynamic model by Lagrange's equations, from the link energies (SYMORO+ 5.5).

A third engine, for cross-validation of the Newton-Euler
(:mod:`~kanerobot.dynamics.newton_euler`) and composite-link
(:mod:`~kanerobot.dynamics.composite`) algorithms.  It shares no code with
them (only the robot description, the free flyer's symbols of
:mod:`~kanerobot.dynamics.free_flyer`, :class:`~kanerobot.symbolic.Program`
and, for C, the Christoffel routine of :mod:`~kanerobot.dynamics.coriolis`) and
none of their dynamics: no force or moment is propagated and no composite
inertia is formed.  Everything comes from the Jacobian of each link's frame
origin, the link velocities, the kinetic and potential energies of the links,
and derivatives of programs (:mod:`kanerobot.symbolic.derivative`).

The models: :func:`mass_matrix` (``A(q)`` from the kinetic energies,
``A<i><j>``, with the per-link terms ``AL<j>_<a>_<b>``), :func:`gravity`
(``Q = dU/dq``), :func:`h` and :func:`inverse_dynamics` (Lagrange's
equations, ``GAM<label>``), :func:`coriolis_matrix` (the Christoffel form of
this module's ``A``) and :func:`energy`.  A floating robot's root is a free
flyer whose six speeds ``VX0 .. WZ0`` (the velocity of O_0 and the angular
velocity of link 0, in frame 0) come before the joint rates; its rows take
the Boltzmann-Hamel form, and its outputs are those of
:mod:`~kanerobot.dynamics.floating`: ``GAMFX0 .. GAMCZ0`` (the base wrench,
frame 0, about O_0) then ``GAM<label>``, ``QFX0 .. QCZ0`` then
``Q<label>``, ``A<i><j>`` with the root's speeds first.

The derivation (link Jacobians, kinetic and potential energies, Lagrange's
equations by forward-mode passes, the free-flyer root's Hamel rows) is in
``docs/theory/lagrange.md``.

Scope: serial and tree robots with a fixed base (``W0 = WP0 = V0 = VP0 = 0``;
gravity any) or a floating base carrying link 0, rigid joints.  Closed
loops, wheeled bases, a moving base and flexible joints raise
:class:`KaneRobotError` here; ``kr.derive(robot, "lagrange")`` reaches the
models of every structure.
"""

import dataclasses
import re

import sympy

from kanerobot.dynamics import coriolis as _coriolis
from kanerobot.dynamics.common import link_inertia, program_inputs
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_FORCE_NAMES,
    BASE_VELOCITY,
    QUATERNION,
    RIGID_INERTIAL_NAMES,
    check_floating,
    gravity_in_base,
)
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, INERTIAL_NAMES, WRENCH_NAMES
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

__all__ = ["mass_matrix", "coriolis_matrix", "gravity", "h", "inverse_dynamics", "energy"]

_MASS = ("M", "MX", "MY", "MZ")


# ------------------------------------------------------------------ public
def mass_matrix(robot, rotor=True, trig=True):
    """Inertia matrix ``A(q)`` from the link kinetic energies (docs/theory/lagrange.md).

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed base, or a floating one carrying
        link 0.
    rotor : bool, optional
        Add ``IA_j`` to ``A_jj``.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23``).

    Returns
    -------
    Program
        Outputs ``A<i><j>`` for i <= j, column by column (``A11, A12, A22,
        A13, ...``, ``A1_12`` beyond 9 speeds), as
        :func:`kanerobot.dynamics.composite.mass_matrix`; (6+n) square with
        a floating base's six speeds first, as
        :func:`kanerobot.dynamics.floating.mass_matrix`.  Intermediate
        variables: placements ``RA``, ``PA``, Jacobian columns ``JV<r><j>_<f>``,
        ``JW<r><j>_<f>`` (component r of the column of joint f for link j, in
        frame j; ``JU`` the vector before rotation) and unit-rate momenta
        ``LM<r><j>_<f>``, ``AM<r><j>_<f>``.  Pruned.

    Raises
    ------
    KaneRobotError
        Closed loops, wheeled or moving base, flexible joints, a floating
        base without link 0 or mass.

    Examples
    --------
    The planar arm of ``frames/planar2.par``: the column of joint 1 for
    link 2 (``JV``), the momentum of link 2 when joint 1 turns (``LM``,
    ``AM``), and the contribution of link 2 to ``A11`` (``AL``):

    >>> import kanerobot as kr
    >>> program = mass_matrix(kr.load(kr.frames_path("planar2")))
    >>> print(program)
    C2 = cos(th2)
    S2 = sin(th2)
    JV12_1 = L1*S2
    JV22_1 = C2*L1
    LM12_1 = JV12_1*M2 - MY2
    LM22_1 = JV22_1*M2 + MX2
    AM32_1 = -JV12_1*MY2 + JV22_1*MX2 + ZZ2
    AL2_1_1 = AM32_1 + JV12_1*LM12_1 + JV22_1*LM22_1
    A11 = AL2_1_1 + IA1 + ZZ1
    A22 = IA2 + ZZ2
    A12 = AM32_1
    >>> list(program.outputs)
    ['A11', 'A12', 'A22']

    A floating robot: the root's block of ``A`` is the spatial inertia of
    the whole robot, its top-left entry the total mass.

    >>> A = mass_matrix(kr.load(kr.frames_path("satellite")))
    >>> A.substitute_back()["A11"]
    M0 + M1 + M2 + M3
    """
    _check(robot, "the inertia matrix")
    names = INERTIAL_NAMES if rotor else RIGID_INERTIAL_NAMES
    model = EnergyModel(robot, energy_program(robot, program_inputs(robot, [robot.q], names), trig))
    A = model.inertia_matrix(rotor)
    n = len(model.speed_labels)
    out = matrix_entry_names("A", (n, n))
    for c in range(n):
        for r in range(c + 1):
            # Named, so that the Coriolis matrix differentiates each entry once
            # per input (cached partials) rather than once per direction.
            model.program.set_output(out[r][c], model.program.assign(out[r][c], A[r, c]))
    model.program.prune()
    return model.program


def coriolis_matrix(robot, mass_matrix_program=None, trig=True):
    """Coriolis matrix ``C(q, qd)``: Christoffel symbols of this module's ``A``.

    ``mass_matrix_program`` defaults to :func:`mass_matrix` of ``robot``.
    Outputs ``C<i><j>`` for all i, j, row by row, a floating base's six
    speeds first (with their Hamel terms); see
    :func:`kanerobot.dynamics.coriolis.coriolis_matrix`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> C = coriolis_matrix(kr.load(kr.frames_path("satellite")))
    >>> len(C.outputs), list(C.inputs)[-4:]
    (81, [WZ0, QP1, QP2, QP3])
    """
    _check(robot, "the Coriolis matrix")
    if mass_matrix_program is None:
        mass_matrix_program = mass_matrix(robot, trig=trig)
    return _coriolis.coriolis_matrix(robot, mass_matrix_program)


def gravity(robot, trig=True):
    """Gravity torques ``Q(q) = dU/dq`` from the potential energy (docs/theory/lagrange.md).

    Returns
    -------
    Program
        Outputs ``Q<label>`` for each joint in ``robot.joint_labels`` order,
        after ``QFX0 .. QCZ0`` for a floating base (its weight and the
        derivatives of U along unit rotations of link 0, docs/theory/lagrange.md;
        inputs then start with q and the quaternion).  Intermediate
        variables: ``GR<r><j>`` (gravity in frame j), ``GP<j>``
        (``G . 0P_j``), ``U`` (potential energy) and the derivatives
        ``d<var>_d<q>``.

    Examples
    --------
    The planar arm in a vertical plane, gravity along -y of frame 0:

    >>> import dataclasses
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> arm = dataclasses.replace(arm, base=kr.Base.from_values(G=[0, "-g", 0]))
    >>> Q = gravity(arm).substitute_back()
    >>> import sympy
    >>> th1, th2, g, L1, M2, MX1, MX2 = sympy.symbols("th1 th2 g L1 M2 MX1 MX2")
    >>> sympy.simplify(Q["Q2"].subs({sympy.Symbol("MY2"): 0}) - g * MX2 * sympy.cos(th1 + th2))
    0

    A floating base: its weight in frame 0 first.

    >>> Q = gravity(kr.load(kr.frames_path("satellite")))
    >>> list(Q.outputs)[:3], Q.output_lines()[0]
    (['QFX0', 'QFY0', 'QFZ0'], ('QFX0', G01*(-M0 - M1 - M2 - M3)))
    """
    _check(robot, "the gravity torques")
    root = RootJoint.of(robot)
    inputs = program_inputs(robot, [robot.q, root.configuration], _MASS, base=root.base_inputs(gravity=True))
    model = EnergyModel(robot, energy_program(robot, inputs, trig))
    U = model.potential_energy()
    fm = _directions(model, time=None)
    for name, value in zip(_output_names(robot, "Q"), model.potential_rows(fm, U)):
        fm.target.set_output(name, value)
    fm.target.prune()
    return fm.target


def h(robot, trig=True):
    """``H(q, qd) = C qd + Q + FV qd + FS sign(qd) + J^T wrench`` (outputs ``GAM<label>``).

    Lagrange's equations with ``qdd = 0`` (docs/theory/lagrange.md): the time
    derivative of the generalized momenta, minus dT/dq, plus dU/dq, friction
    and the external wrenches (a floating base's rows first, in the
    Boltzmann-Hamel form).  Inputs: q, QP, the
    geometric parameters, ``XX .. M``, ``FV FS``, ``FX .. CZ`` and gravity;
    a floating base's quaternion after q and its speeds after QP.
    """
    return _lagrange(robot, qdd=False, trig=trig)


def inverse_dynamics(robot, trig=True):
    """Joint torques ``GAM = A qdd + H`` by Lagrange's equations (outputs ``GAM<label>``).

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed base, or a floating one carrying
        link 0.
    trig : bool, optional

    Returns
    -------
    Program
        Inputs: q, QP, QDP, the geometric parameters, ``XX .. M, IA, FV, FS,
        FX .. CZ`` and gravity; a floating base's quaternion ``QX0 .. QW0``
        after q, speeds ``VX0 .. WZ0`` after QP and their derivatives
        ``DVX0 .. DWZ0`` after QDP, as
        :func:`kanerobot.dynamics.floating.inverse_dynamics`.  Outputs
        ``GAM<label>``, after ``GAMFX0 .. GAMCZ0`` (the base wrench, frame
        0, about O_0) for a floating base.  Intermediate variables as in
        :func:`mass_matrix` and :func:`gravity`, plus the link velocities
        ``V<r><j>``, ``W<r><j>``, link momenta ``LM<r><j>``, ``AM<r><j>``,
        generalized momenta ``PQ<label>`` (per link ``PL<j>_<label>``), and
        the derivatives ``d<var>_dt``, ``d<var>_d<q>`` (``dPQ1_dt``,
        ``dT_dth2`` for dT/dq_2).

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = inverse_dynamics(kr.load(kr.frames_path("planar2")))
    >>> list(program.outputs)
    ['GAM1', 'GAM2']
    >>> program = inverse_dynamics(kr.load(kr.frames_path("satellite")))
    >>> list(program.outputs)[5:]
    ['GAMCZ0', 'GAM1', 'GAM2', 'GAM3']
    """
    return _lagrange(robot, qdd=True, trig=trig)


def energy(robot, trig=True):
    """Kinetic and potential energies as a program (outputs ``T`` and ``U``).

    ``T = 1/2 qd^T A qd`` (the rotor inertia ``IA`` included) and ``U`` as in
    :func:`gravity`; for checks and for energy-based identification.

    Raises
    ------
    KaneRobotError
        As :func:`mass_matrix`, and for a floating base, whose potential
        energy needs the base position the models do not take.
    """
    _check(robot, "the energy")
    if robot.floating:
        raise KaneRobotError(
            f"the energy of {robot.name} by Lagrange: {robot.name} has a floating base, whose potential energy "
            f"needs the position of O_0, which no model takes; use gravity(robot) for the forces it gives"
        )
    inputs = program_inputs(robot, [robot.q, robot.qd], INERTIAL_NAMES, base=True)
    model = EnergyModel(robot, energy_program(robot, inputs, trig))
    T = model.kinetic_energy(rotor=True)
    U = model.potential_energy()
    model.program.set_output("T", T)
    model.program.set_output("U", U)
    model.program.prune()
    return model.program


# ------------------------------------------------------------ internals
def _reserved(robot):
    """Names of the Coriolis matrix program (``C23``, ``CA23``, ``CN23``),
    kept free of intermediate variables: a compound angle ``cos(th2 + th3)``
    is then named ``C23_1`` and the output ``C23`` of :func:`coriolis_matrix`
    keeps its name (a floating base's six speeds count)."""
    n = len(RootJoint.of(robot).labels) + len(robot.joint_labels)
    return {name for prefix in ("C", "CA", "CN") for row in matrix_entry_names(prefix, (n, n)) for name in row}


def energy_program(robot, inputs, trig):
    """An empty :class:`~kanerobot.symbolic.Program` for a Lagrange model of ``robot``.

    Its inputs are ``inputs``; the output names of the Coriolis matrix
    (``C23`` ...) are kept free of intermediate variables (see
    :func:`_reserved`); ``trig`` as in :class:`~kanerobot.symbolic.Program`.
    """
    return Program(inputs=inputs, reserved=_reserved(robot), trig=trig)


def _check(robot, what):
    if robot.floating:
        # A free-flyer root: the checks of every floating-base engine.
        check_floating(robot, f"{what} by Lagrange")
        return
    if robot.loops:
        kind = "closed loops"
    elif robot.wheeled:
        kind = "a wheeled base"
    else:
        kind = None
    if kind:
        raise KaneRobotError(
            f"{what} of {robot.name} by Lagrange: {robot.name} has {kind}; this module handles "
            f"serial and tree robots with a fixed or floating base only (kanerobot.derive(robot, 'lagrange') "
            f"dispatches every structure to its Lagrange model)"
        )
    moving = [key for key in ("W0", "WP0", "V0", "VP0") if any(sympy.sympify(v) != 0 for v in getattr(robot.base, key))]
    if moving:
        raise KaneRobotError(
            f"{what} of {robot.name} by Lagrange: the base moves ({', '.join(moving)} not zero); the Lagrange "
            f"engine assumes a fixed base (use method='newton-euler' for a base with a known motion)"
        )
    flexible = robot.flexible_joints
    if flexible:
        raise KaneRobotError(
            f"{what} of {robot.name} by Lagrange: flexible joints ({', '.join(flexible)}) are not handled"
        )


def _frame_placements(robot, program):
    """``label -> (iA_j, iP_j)`` of every frame, ``cos``/``sin`` named ``C<label>``,
    ``S<label>`` after the joint's frame (``C4l`` for Krang's ``q_1l``), entries
    that are not trivial named ``RA<r><c><j>`` and ``PA<r><j>``."""
    stem = robot.stems
    owner = {f.q: f.stem for f in robot.frames if f.is_joint}

    def label(angle):
        for q, frame_label in owner.items():
            if angle.has(q):
                return frame_label
        return re.sub(r"[^A-Za-z0-9]", "", str(angle)) or "a"

    out = {}
    for frame in robot.frames:
        j = frame.label
        T = program.replace_sin_cos(sympy.Matrix(frame.transform()), labels=label)
        out[j] = (
            program.assign_matrix(lambda r, c, j=j: f"RA{r}{c}{stem[j]}", T[:3, :3]),
            program.assign_matrix(lambda r, c, j=j: f"PA{r}{stem[j]}", T[:3, 3]),
        )
    return out


@dataclasses.dataclass(frozen=True)
class RootJoint:
    """The joint between the world and link 0, where the link recursions start.

    Fixed (``RootJoint()``, a fixed base): no speed, link 0 at rest.  A
    free flyer (a floating base, :meth:`of`): six speeds ``VX0 .. WZ0``,
    the body twist of link 0 in frame 0 (quasi-velocities, before the
    joints' speeds), the quaternion ``QX0 .. QW0`` the only part of its
    configuration the models read, the speeds' derivatives ``DVX0 ..
    DWZ0`` and the names of its generalized forces ``FX0 .. CZ0``.
    """

    speeds: tuple = ()
    configuration: tuple = ()
    accelerations: tuple = ()
    force_names: tuple = ()

    @classmethod
    def of(cls, robot):
        """The root joint of ``robot``: a free flyer when it floats, fixed otherwise."""
        if not robot.floating:
            return cls()
        return cls(BASE_VELOCITY, QUATERNION, BASE_ACCELERATION, BASE_FORCE_NAMES)

    @property
    def labels(self):
        """Labels of the speeds (``VX0 .. WZ0``), in the names of the Jacobian columns (``JV12_VX0``)."""
        return tuple(s.name for s in self.speeds)

    def base_inputs(self, gravity):
        """The ``base`` argument of :func:`~kanerobot.dynamics.common.program_inputs`:
        a fixed base's motion (zero, checked) and gravity, a free flyer's
        gravity only (its motion is the state)."""
        if not self.speeds:
            return gravity
        return ("G",) if gravity else False

    def columns(self):
        """``(label, (Jv, Jw))`` of each speed at O_0 in frame 0: the unit vectors, linear then angular."""
        zero, unit = sympy.zeros(3, 1), sympy.eye(3)
        linear = [(label, (unit[:, k], zero)) for k, label in enumerate(self.labels[:3])]
        angular = [(label, (zero, unit[:, k])) for k, label in enumerate(self.labels[3:])]
        return tuple(linear + angular)

    def velocity(self):
        """``(v, w)`` of link 0 in frame 0."""
        if not self.speeds:
            return sympy.zeros(3, 1), sympy.zeros(3, 1)
        return sympy.Matrix(self.speeds[:3]), sympy.Matrix(self.speeds[3:])

    def gravity(self, program, robot):
        """Gravity in frame 0: ``robot.base.G``, or rotated by the free flyer's quaternion (assigned ``G0<r>``)."""
        if not self.speeds:
            return sympy.Matrix(robot.base.G)
        return gravity_in_base(program, robot)

    def add_directions(self, fm):
        """Forward-mode passes along the free flyer's unit body rotations:
        the quaternion rate ``dquat = 1/2 quat (x) (e_k, 0)``."""
        if not self.speeds:
            return
        quaternion = self.configuration
        u, w = sympy.Matrix(quaternion[:3]), quaternion[3]
        half = sympy.Rational(1, 2)
        for k, axis in enumerate("XYZ"):
            e = sympy.eye(3)[:, k]
            du = half * (w * e + u.cross(e))
            seeds = {quaternion[r]: du[r] for r in range(3)} | {w: -half * u[k]}
            fm.add_direction(("rotation", k), seeds, label=f"R{axis}0")

    def potential_rows(self, fm, U, robot, gravity):
        """``dU/d(p_0, theta_0)``: the weight ``-M 0g``, then the rotation passes."""
        if not self.speeds:
            return []
        mass = sympy.Add(*(sympy.sympify(robot.dynamics[j]["M"]) for j in robot.links))
        return [-mass * fm.value(g) for g in gravity] + [fm.derivative(U, ("rotation", k)) for k in range(3)]

    def hamel_rows(self, fm, PQ):
        """``d/dt p + V x* p`` on the free flyer's rows (Boltzmann-Hamel)."""
        if not self.speeds:
            return []
        v, w = self.velocity()
        p_v = sympy.Matrix([fm.value(PQ[label]) for label in self.labels[:3]])
        p_w = sympy.Matrix([fm.value(PQ[label]) for label in self.labels[3:]])
        hamel = list(w.cross(p_v)) + list(w.cross(p_w) + v.cross(p_v))
        return [fm.derivative(PQ[label], "t") + hamel[k] for k, label in enumerate(self.labels)]


class EnergyModel:
    """Jacobian columns and energies of one robot, recorded into ``program``
    on demand (each piece once).

    The speeds are the root joint's (:class:`RootJoint`: none for a fixed
    base, six for a free flyer) then the joints'.
    """

    def __init__(self, robot, program):
        self.robot = robot
        self.program = program
        self.root = RootJoint.of(robot)
        self.speed_labels = self.root.labels + tuple(robot.joint_labels)
        self.placements = _frame_placements(robot, program)
        self._columns = None
        self._unit_momenta = {}
        self._link_momenta = None
        self._gravity = None

    def _stem(self, key):
        """The part of names for ``key``: a frame's stem, a root speed's own name."""
        return self.robot.stems.get(key, key)

    # ------------------------------------------------------ kinematics
    def columns(self):
        """``label -> {joint: (Jv, Jw)}``: the Jacobian columns of each frame's
        origin in its own frame, joints in root-path order."""
        if self._columns is not None:
            return self._columns
        p = self.program
        cols = {BASE: dict(self.root.columns())}
        for frame in self.robot.frames:
            j, i = frame.label, frame.antecedent
            iA_j, iP_j = self.placements[j]
            jA_i = iA_j.T
            own = {}
            for f, (Jv, Jw) in cols[i].items():
                JU = p.assign_matrix(lambda r, c, f=f, j=j: f"JU{r}{self._stem(j)}_{self._stem(f)}", Jv + Jw.cross(iP_j))
                own[f] = (
                    p.assign_matrix(lambda r, c, f=f, j=j: f"JV{r}{self._stem(j)}_{self._stem(f)}", jA_i * JU),
                    p.assign_matrix(lambda r, c, f=f, j=j: f"JW{r}{self._stem(j)}_{self._stem(f)}", jA_i * Jw),
                )
            if frame.is_joint:
                own[j] = frame.joint.subspace(frame.axis)
            cols[j] = own
        self._columns = cols
        return cols

    def unit_momenta(self, j):
        """``joint -> (LM, AM)``: momentum of link j when that joint moves at unit rate."""
        if j not in self._unit_momenta:
            p = self.program
            J, MS, M = link_inertia(self.robot, j)
            out = {}
            for f, (Jv, Jw) in self.columns()[j].items():
                out[f] = (
                    p.assign_matrix(lambda r, c, f=f: f"LM{r}{self._stem(j)}_{self._stem(f)}", M * Jv + Jw.cross(MS)),
                    p.assign_matrix(lambda r, c, f=f: f"AM{r}{self._stem(j)}_{self._stem(f)}", J * Jw + MS.cross(Jv)),
                )
            self._unit_momenta[j] = out
        return self._unit_momenta[j]

    # ---------------------------------------------------------- energies
    def inertia_matrix(self, rotor):
        """n x n sympy matrix of expressions (not assigned)."""
        labels = self.speed_labels
        index = {label: k for k, label in enumerate(labels)}
        n = len(labels)
        terms = {}
        cols = self.columns()
        for j in self.robot.links:  # link 0 on a fixed root has no column: it adds nothing
            momenta = self.unit_momenta(j)
            joints = sorted(cols[j], key=index.__getitem__)
            for ib, b in enumerate(joints):
                LM, AM = momenta[b]
                for a in joints[: ib + 1]:
                    Jv, Jw = cols[j][a]
                    # Named per link: the entries of A are then sums of names,
                    # cheap to differentiate for the Coriolis matrix.
                    part = self.program.assign(f"AL{self._stem(j)}_{self._stem(a)}_{self._stem(b)}", Jv.dot(LM) + Jw.dot(AM))
                    terms.setdefault((index[a], index[b]), []).append(part)
        A = sympy.zeros(n, n)
        for (r, c), parts in terms.items():
            A[r, c] = A[c, r] = sympy.Add(*parts)
        if rotor:
            for k, label in enumerate(labels):
                if label in self.robot.joint_labels and label in self.robot.dynamics:
                    A[k, k] += self.robot.dynamics[label]["IA"]
        return A

    def velocities(self):
        """``label -> (v, w)`` of each link: velocity of O_j and angular
        velocity, in frame j, by the velocity recursion (SYMORO+ eq. 6a-c,
        fixed base), assigned ``V<r><j>``, ``W<r><j>`` (``VU`` is
        ``iV_i + iw_i x iP_j``).  Equal to ``Jv qd`` and ``Jw qd`` of
        :meth:`columns`; the recursion makes their derivatives cheaper."""
        p = self.program
        qd = self.robot.joint_speeds
        out = {BASE: self.root.velocity()}
        for frame in self.robot.frames:
            j, i = frame.label, frame.antecedent
            iA_j, iP_j = self.placements[j]
            jA_i = iA_j.T
            vi, wi = out[i]
            S_lin, S_ang = frame.joint.subspace(frame.axis)
            VU = p.assign_matrix(lambda r, c, j=j: f"VU{r}{self._stem(j)}", vi + wi.cross(iP_j))
            rates = qd.get(j, ())
            qdj = sympy.Matrix(len(rates), 1, list(rates))
            v = p.assign_matrix(lambda r, c, j=j: f"V{r}{self._stem(j)}", jA_i * VU + S_lin * qdj)
            w = p.assign_matrix(lambda r, c, j=j: f"W{r}{self._stem(j)}", jA_i * wi + S_ang * qdj)
            out[j] = (v, w)
        return {j: out[j] for j in self.robot.links}

    def link_momenta(self):
        """``label -> (v, w, LM, AM)``: velocities and momenta (about O_j) of each link."""
        if self._link_momenta is None:
            p = self.program
            out = {}
            for j, (v, w) in self.velocities().items():
                J, MS, M = link_inertia(self.robot, j)
                LM = p.assign_matrix(lambda r, c, j=j: f"LM{r}{self._stem(j)}", M * v + w.cross(MS))
                AM = p.assign_matrix(lambda r, c, j=j: f"AM{r}{self._stem(j)}", J * w + MS.cross(v))
                out[j] = (v, w, LM, AM)
            self._link_momenta = out
        return self._link_momenta

    def kinetic_energy(self, rotor):
        """``T`` assigned: 1/2 sum_j (v . LM + w . AM) (+ 1/2 IA qd^2)."""
        terms = [self.program.assign(f"TL{self._stem(j)}", v.dot(LM) + w.dot(AM)) for j, (v, w, LM, AM) in self.link_momenta().items()]
        if rotor:
            for label, qd in zip(self.robot.joint_labels, self.robot.qd):
                if label in self.robot.dynamics:
                    terms.append(self.robot.dynamics[label]["IA"] * qd**2)
        return self.program.assign("T", sympy.Add(*terms) / 2)

    def generalized_momenta(self):
        """``speed label -> PQ``: dT/dqd without the rotor term, assigned."""
        cols = self.columns()
        momenta = self.link_momenta()
        terms = {label: [] for label in self.speed_labels}
        for j, (_, _, LM, AM) in momenta.items():
            for f, (Jv, Jw) in cols[j].items():
                terms[f].append(self.program.assign(f"PL{self._stem(j)}_{self._stem(f)}", Jv.dot(LM) + Jw.dot(AM)))
        return {f: self.program.assign(f"PQ{self._stem(f)}", sympy.Add(*parts)) for f, parts in terms.items()}

    def gravity(self):
        """Gravity in frame 0 (:meth:`RootJoint.gravity`), assigned once."""
        if self._gravity is None:
            self._gravity = self.root.gravity(self.program, self.robot)
        return self._gravity

    def potential_energy(self):
        """``U`` assigned: -sum_j (M_j G . 0P_j + jG . jMS_j), frame 0's
        position left out on a free flyer (its weight is in
        :meth:`potential_rows`)."""
        p = self.program
        G = {BASE: self.gravity()}
        GP = {BASE: sympy.S.Zero}
        for frame in self.robot.frames:
            j, i = frame.label, frame.antecedent
            iA_j, iP_j = self.placements[j]
            G[j] = p.assign_matrix(lambda r, c, j=j: f"GR{r}{self._stem(j)}", iA_j.T * G[i])
            GP[j] = p.assign(f"GP{self._stem(j)}", GP[i] + G[i].dot(iP_j))
        terms = []
        for j in self.robot.links:
            _, MS, M = link_inertia(self.robot, j)
            terms.append(M * GP[j] + G[j].dot(MS))
        return p.assign("U", -sympy.Add(*terms))

    def wrench_torques(self):
        """``speed label -> J^T [f; m]`` summed over the links with a wrench."""
        cols = self.columns()
        terms = {label: [] for label in self.speed_labels}
        for j in self.robot.links:
            d = self.robot.dynamics[j]
            f = sympy.Matrix([d[n] for n in WRENCH_NAMES[:3]])
            m = sympy.Matrix([d[n] for n in WRENCH_NAMES[3:]])
            if f == sympy.zeros(3, 1) and m == sympy.zeros(3, 1):
                continue
            for joint, (Jv, Jw) in cols[j].items():
                terms[joint].append(Jv.dot(f) + Jw.dot(m))
        return {label: sympy.Add(*parts) for label, parts in terms.items()}


    def potential_rows(self, fm, U):
        """``dU/d(root speeds, q)``: the root joint's rows
        (:meth:`RootJoint.potential_rows`), then one joint pass each."""
        rows = self.root.potential_rows(fm, U, self.robot, self.gravity())
        return rows + [fm.derivative(U, ("q", x)) for x in self.robot.q]


def _directions(model, time):
    """Forward-mode passes over ``model.program``: time (seeds ``time``),
    each joint, then the root joint's (:meth:`RootJoint.add_directions`)."""
    fm = ForwardMode(model.program)
    if time is not None:
        fm.add_direction("t", time, label="t")
    for x in model.robot.q:
        fm.add_direction(("q", x), {x: 1}, label=str(x))
    model.root.add_directions(fm)
    return fm


def _output_names(robot, prefix):
    """``<prefix><root force>`` (``GAMFX0 ..``) then ``<prefix><label>``."""
    return [f"{prefix}{name}" for name in RootJoint.of(robot).force_names] + [f"{prefix}{robot.stems[label]}" for label in robot.joint_labels]


def _lagrange(robot, qdd, trig):
    what = "the inverse dynamic model" if qdd else "the vector H"
    _check(robot, what)
    root = RootJoint.of(robot)
    state = [robot.q, root.configuration, robot.qd, root.speeds] + ([robot.qdd, root.accelerations] if qdd else [])
    names = (INERTIAL_NAMES if qdd else RIGID_INERTIAL_NAMES) + ("FV", "FS") + WRENCH_NAMES
    inputs = program_inputs(robot, state, names, base=root.base_inputs(gravity=True))
    model = EnergyModel(robot, energy_program(robot, inputs, trig))
    PQ = model.generalized_momenta()
    momenta = model.link_momenta()
    U = model.potential_energy()
    wrench = model.wrench_torques()

    # d/dt: joints move at QP; with accelerations, QP and the root's speeds
    # change at QDP and DVX0 .. DWZ0 (T does not depend on the root's pose).
    time = dict(zip(robot.q, robot.qd))
    if qdd:
        time |= {v: a for v, a in zip(robot.qd, robot.qdd) if isinstance(v, sympy.Symbol)}
        time |= dict(zip(root.speeds, root.accelerations))
    fm = _directions(model, time)
    rows = root.hamel_rows(fm, PQ) + joint_rows(fm, robot, PQ, momenta, qdd)
    potential = model.potential_rows(fm, U)
    for name, row, dU, label in zip(_output_names(robot, "GAM"), rows, potential, model.speed_labels):
        fm.target.set_output(name, row + dU + fm.value(wrench[label]))
    fm.target.prune()
    return fm.target


def joint_rows(fm, robot, PQ, momenta, accelerations):
    """``d/dt PQ_a - dT/dq_a + IA_a qdd_a + FV_a qd_a + FS_a sign(qd_a)`` for each joint a.

    ``fm`` has the time direction ``"t"`` and one direction ``("q", q_a)``
    per joint; ``momenta`` is :meth:`EnergyModel.link_momenta`.  dT/dq comes by
    the chain rule through the link velocities: the partial derivatives of
    ``T_j = 1/2 (v . LM + w . AM)`` with respect to v and w are the link
    momenta LM and AM.
    """
    rows = []
    for label, x, qd_j, qdd_j in zip(robot.joint_labels, robot.q, robot.qd, robot.qdd):
        key = ("q", x)
        terms = []
        for v, w, LM, AM in momenta.values():
            for k in range(3):
                terms.append(fm.value(LM[k]) * fm.derivative(v[k], key) + fm.value(AM[k]) * fm.derivative(w[k], key))
        value = fm.derivative(PQ[label], "t") - fm.target.assign(fm.name_for("T", key), sympy.Add(*terms))
        d = robot.dynamics.get(label)
        if d is not None:
            if accelerations:
                value += d["IA"] * qdd_j
            value += d["FV"] * qd_j + d["FS"] * sympy.sign(qd_j)
        rows.append(value)
    return rows
