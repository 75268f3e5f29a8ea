"""Dynamic model by Lagrange's equations, from the link energies (SYMORO+ 5.5).

A third engine, for cross-validation of the Newton-Euler
(:mod:`~kanerobot.dynamics.newton_euler`) and composite-link
(:mod:`~kanerobot.dynamics.composite`) algorithms.  It shares none of their
dynamics (only the robot description and its joint models, the frame
placements of :mod:`~kanerobot.dynamics.common`, the root joint of
:mod:`~kanerobot.dynamics.root`, :class:`~kanerobot.symbolic.Program` and,
for C, the Christoffel routine of :mod:`~kanerobot.dynamics.coriolis`): no
force or moment is propagated and no composite inertia is formed.
Everything comes from the Jacobian of each link's frame origin, the link
velocities, the kinetic and potential energies of the links, and
derivatives of programs (:mod:`kanerobot.symbolic.derivative`).

The models: :func:`mass_matrix` (``A(q)`` from the kinetic energies,
``A<i><j>``, with the per-link terms ``AL<j>_<a>_<b>``), :func:`gravity`
(``Q = dU/dq``), :func:`h` and :func:`inverse_dynamics` (Lagrange's
equations, ``GAM<label>``), :func:`coriolis_matrix` (the Christoffel form of
this module's ``A``) and :func:`energy`.  Every joint model is taken
(:mod:`kanerobot.robot.joints`), one row and one column per speed: a
joint's speeds ``nu`` move its configuration at
``JointModel.configuration_rate`` (``q' = QP`` for one speed) and its
frame along its motion subspace ``S``.  Speeds that are not the
derivatives of coordinates (a ball joint's ``WX2 .. WZ2`` in its frame, a
planar joint's ``VX3 VY3 WZ3``, a free flyer's) are quasi-velocities: their
rows take the Boltzmann-Hamel form, the derivatives along a unit speed
(``dT_dRX2``) and the structure terms ``S^T (S nu x* S p)``.  A floating
robot's root is a free flyer whose six speeds ``VX0 .. WZ0`` (the velocity
of O_0 and the angular velocity of link 0, in frame 0) come before the
joints'; its outputs are those of :mod:`~kanerobot.dynamics.floating`:
``GAMFX0 .. GAMCZ0`` (the base wrench, frame 0, about O_0) then
``GAM<label>``, ``QFX0 .. QCZ0`` then ``Q<label>``, ``A<i><j>`` with the
root's speeds first.  A joint of several speeds has the outputs of its
forces (``GAMCX2 .. GAMCZ2``, ``GAMFX3 GAMFY3 GAMCZ3``), as Newton-Euler.

The derivation (link Jacobians, kinetic and potential energies, Lagrange's
equations by forward-mode passes, the free-flyer root's Hamel rows) is in
``docs/theory/lagrange.md``.

Scope: serial and tree robots with a fixed base (``W0 = WP0 = V0 = VP0 = 0``;
gravity any) or a floating base carrying link 0, rigid joints.  Closed
loops, wheeled bases, a moving base and flexible joints raise
:class:`KaneRobotError` here, and so does the Coriolis matrix of a robot
with a joint of quasi-velocities (naming it); ``kr.derive(robot, "lagrange")`` reaches the
models of every structure.
"""

import dataclasses
import functools

import sympy

from kanerobot.dynamics import coriolis as _coriolis
from kanerobot.dynamics.common import angle_labels, frame_placements, link_inertia, program_inputs
from kanerobot.dynamics.free_flyer import RIGID_INERTIAL_NAMES, check_floating
from kanerobot.dynamics.root import root_joint_model, root_motion
from kanerobot.errors import KaneRobotError
from kanerobot.kinematics import along
from kanerobot.robot.description import BASE, INERTIAL_NAMES, WRENCH_NAMES
from kanerobot.robot.joints import JointModel
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program
from kanerobot.symbolic.vectors import cross, plus, product, summed

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
    n = len(model.keys)
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
    root = _root_joint(robot)
    inputs = program_inputs(robot, [robot.q, root.read], _MASS, base=_base_inputs(root))
    model = EnergyModel(robot, energy_program(robot, inputs, trig))
    U = model.potential_energy()
    fm = _directions(model, time=None)
    for name, value in zip(_output_names(model.joints, "Q"), model.potential_rows(fm, U)):
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
@dataclasses.dataclass(frozen=True)
class _Joint:
    """A joint of the energy model as its rows and columns see it: the root joint
    (label ``'0'``, :func:`~kanerobot.dynamics.root.root_joint_model`) or a frame's.

    ``keys`` name its speeds in the model (one per speed), ``parts`` the part
    of the program's names for each (``JV12_<part>``: the frame's stem for a
    single speed, the speed's name otherwise, ``VX0`` for a free flyer's);
    ``coordinates`` its configuration symbols, of which the models read
    ``read`` (a free flyer's orientation only: its position enters U by the
    weight alone, :meth:`EnergyModel.potential_rows`); ``forces`` the
    suffixes of its outputs (``GAM<force>``); ``actuated`` whether it has the
    rotor inertia and friction of a frame (a root joint has none).
    """

    label: str
    stem: str
    model: JointModel
    subspace: tuple
    coordinates: tuple
    read: tuple
    speeds: tuple
    accelerations: tuple
    parts: tuple
    forces: tuple
    actuated: bool

    @property
    def keys(self):
        return tuple((self.label, k) for k in range(len(self.speeds)))

    @functools.cached_property
    def _rate(self):
        """``(placeholder speeds, {read coordinate: dq/dt at them})``: the joint model's rate, built once."""
        nu = _placeholders(len(self.speeds))
        rates = self.model.configuration_rate(self.coordinates, nu)
        return nu, {x: rate for x, rate in zip(self.coordinates, rates) if x in self.read}

    def rates(self, speeds):
        """``{coordinate: dq/dt}`` at ``speeds`` (:meth:`JointModel.configuration_rate`), the read coordinates only."""
        nu, rates = self._rate
        values = dict(zip(nu, (sympy.sympify(v) for v in speeds)))
        return {x: rate.xreplace(values) for x, rate in rates.items()}

    def direction(self, k):
        """``(seeds, label)`` of the forward-mode pass along speed k at unit rate.

        The seeds are the configuration's rate; a pass that is a partial
        derivative (seed 1 on one coordinate) is labelled by that coordinate
        (``dT_dth2``), one along a unit rotation or translation about an axis
        of the joint's frame ``R<axis><stem>``, ``T<axis><stem>`` (``dU_dRX0``).
        """
        seeds = self.rates([sympy.S.One if i == k else sympy.S.Zero for i in range(len(self.speeds))])
        seeds = {x: seed for x, seed in seeds.items() if seed != 0}
        if len(seeds) == 1 and next(iter(seeds.values())) == 1:
            return seeds, str(next(iter(seeds)))
        return seeds, _axis_label(self.subspace, k, self.parts[k], self.stem)


def _axis_label(subspace, k, part, stem):
    """``R<axis><stem>`` or ``T<axis><stem>`` when column k of the subspace is a unit rotation or translation about an axis."""
    for kind, column, other in (("R", subspace[1][:, k], subspace[0][:, k]), ("T", subspace[0][:, k], subspace[1][:, k])):
        if not any(other) and sorted(column) == [0, 0, 1]:
            return f"{kind}{'XYZ'[list(column).index(1)]}{stem}"
    return part


def _symbols(names):
    return tuple(sympy.Symbol(name) for name in names)


@functools.cache
def _placeholders(n):
    """n speeds standing for any (the same symbols every time: sympy's caches then serve every model)."""
    return tuple(sympy.Dummy(f"nu{k}") for k in range(n))


def _root_joint(robot):
    """The root joint (:func:`~kanerobot.dynamics.root.root_joint_model`) as a :class:`_Joint`."""
    return _root_joint_of(root_joint_model(robot), robot.stems[BASE])


@functools.cache
def _root_joint_of(model, stem):
    """The :class:`_Joint` of a root joint model, built once (its orientation and rates are the same for every robot)."""
    coordinates = _symbols(model.configuration_names(stem))
    rotation = model.placed(sympy.eye(3), sympy.zeros(3, 1), None, coordinates)[:3, :3]
    return _Joint(
        label=BASE,
        stem=stem,
        model=model,
        subspace=model.subspace(None),
        coordinates=coordinates,
        read=tuple(x for x in coordinates if rotation.has(x)),
        speeds=_symbols(model.speed_names(stem)),
        accelerations=_symbols(model.acceleration_names(stem)),
        parts=_speed_parts(model, stem),
        forces=model.force_names(stem),
        actuated=False,
    )


def _speed_parts(model, stem):
    """The part of the names of each speed: the stem for one speed (``JV12_1``), the speeds' names otherwise."""
    return (stem,) if model.nv == 1 else model.speed_names(stem)


def _joints(robot):
    """The root joint then each joint of ``robot``, in the order of the speeds."""
    out = [_root_joint(robot)]
    for label in robot.joint_labels:
        frame = robot.frame(label)
        model, stem = frame.joint, frame.stem
        joint = _Joint(
            label=label,
            stem=stem,
            model=model,
            subspace=model.subspace(frame.axis),
            coordinates=frame.coordinates,
            read=frame.coordinates,
            speeds=robot.joint_speeds[label],
            accelerations=robot.joint_accelerations[label],
            parts=_speed_parts(model, stem),
            forces=model.force_names(stem),
            actuated=label in robot.dynamics,
        )
        out.append(joint)
    return out


def _base_inputs(root):
    """The ``base`` argument of :func:`~kanerobot.dynamics.common.program_inputs`: a root
    without speeds is a fixed base, its motion (zero, checked) and gravity; a
    root with speeds carries its motion in the state, so gravity only."""
    return ("G",) if root.speeds else True


def _reserved(robot):
    """Names of the Coriolis matrix program (``C23``, ``CA23``, ``CN23``),
    kept free of intermediate variables: a compound angle ``cos(th2 + th3)``
    is then named ``C23_1`` and the output ``C23`` of :func:`coriolis_matrix`
    keeps its name (a floating base's six speeds count)."""
    n = root_joint_model(robot).nv + len(robot.qd)
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


class EnergyModel:
    """Jacobian columns and energies of one robot, recorded into ``program``
    on demand (each piece once).

    The speeds are the root joint's (none for a fixed base, six for a free
    flyer) then the joints', each joint's ``nv`` of them (:func:`_joints`);
    a column, a momentum or a row belongs to one speed, keyed
    ``(joint label, k)``.
    """

    def __init__(self, robot, program, joints=None):
        self.robot = robot
        self.program = program
        self.joints = _joints(robot) if joints is None else joints
        self.root = self.joints[0]
        self.keys = tuple(key for joint in self.joints for key in joint.keys)
        self._part = {key: part for joint in self.joints for key, part in zip(joint.keys, joint.parts)}
        self.placements = frame_placements(robot, program)
        self._columns = None
        self._unit_momenta = {}
        self._link_momenta = None
        self._gravity = None

    def _stem(self, key):
        """The part of names for ``key``: a frame's stem, a speed's part (:class:`_Joint`)."""
        return self._part[key] if isinstance(key, tuple) else self.robot.stems[key]

    # ------------------------------------------------------ kinematics
    def columns(self):
        """``label -> {speed key: (Jv, Jw)}``: the Jacobian columns of each frame's
        origin in its own frame, speeds in root-path order."""
        if self._columns is not None:
            return self._columns
        p = self.program
        cols = {BASE: _unit_columns(self.root)}
        joint = {j.label: j for j in self.joints}
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
                own.update(_unit_columns(joint[j]))
            cols[j] = own
        self._columns = cols
        return cols

    def unit_momenta(self, j):
        """``speed key -> (LM, AM)``: momentum of link j when that speed is 1, the others 0."""
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
        index = {key: k for k, key in enumerate(self.keys)}
        n = len(self.keys)
        terms: dict[tuple[int, int], list[sympy.Expr]] = {}  # (row, column) of A -> its parts
        cols = self.columns()
        for j in self.robot.links:  # link 0 on a fixed root has no column: it adds nothing
            momenta = self.unit_momenta(j)
            speeds = sorted(cols[j], key=index.__getitem__)
            for ib, b in enumerate(speeds):
                LM, AM = momenta[b]
                for a in speeds[: ib + 1]:
                    Jv, Jw = cols[j][a]
                    # Named per link: the entries of A are then sums of names,
                    # cheap to differentiate for the Coriolis matrix.
                    part = self.program.assign(f"AL{self._stem(j)}_{self._stem(a)}_{self._stem(b)}", Jv.dot(LM) + Jw.dot(AM))
                    terms.setdefault((index[a], index[b]), []).append(part)
        A = sympy.zeros(n, n)
        for (r, c), parts in terms.items():
            A[r, c] = A[c, r] = sympy.Add(*parts)
        if rotor:
            for joint in self.joints:
                if joint.actuated:
                    for key in joint.keys:
                        A[index[key], index[key]] += self.robot.dynamics[joint.label]["IA"]
        return A

    def velocities(self):
        """``label -> (v, w)`` of each link: velocity of O_j and angular
        velocity, in frame j, by the velocity recursion (SYMORO+ eq. 6a-c),
        assigned ``V<r><j>``, ``W<r><j>`` (``VU`` is ``iV_i + iw_i x iP_j``),
        link 0 moving with the root joint's speeds.  Equal to ``Jv qd`` and
        ``Jw qd`` of :meth:`columns`; the recursion makes their derivatives
        cheaper.  (:func:`kanerobot.kinematics.forward_step` is the
        recursion of the accelerations, without the velocity of O_j; the
        joints' part is :func:`kanerobot.kinematics.along`, as there.)"""
        p = self.program
        joint = {j.label: j for j in self.joints}
        out = {BASE: _twist(self.root.subspace, self.root.speeds)}
        for frame in self.robot.frames:
            j, i = frame.label, frame.antecedent
            iA_j, iP_j = self.placements[j]
            jA_i = iA_j.T
            vi, wi = out[i]
            v_rel, w_rel = _twist(joint[j].subspace, joint[j].speeds) if j in joint else (sympy.zeros(3, 1),) * 2
            VU = p.assign_matrix(lambda r, c, j=j: f"VU{r}{self._stem(j)}", vi + wi.cross(iP_j))
            v = p.assign_matrix(lambda r, c, j=j: f"V{r}{self._stem(j)}", jA_i * VU + v_rel)
            w = p.assign_matrix(lambda r, c, j=j: f"W{r}{self._stem(j)}", jA_i * wi + w_rel)
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
        """``T`` assigned: 1/2 sum_j (v . LM + w . AM) (+ 1/2 IA qd^2 for each speed of a joint)."""
        terms = [self.program.assign(f"TL{self._stem(j)}", v.dot(LM) + w.dot(AM)) for j, (v, w, LM, AM) in self.link_momenta().items()]
        if rotor:
            for joint in self.joints:
                if joint.actuated:
                    terms.extend(self.robot.dynamics[joint.label]["IA"] * qd**2 for qd in joint.speeds)
        return self.program.assign("T", sympy.Add(*terms) / 2)

    def generalized_momenta(self):
        """``speed key -> PQ``: dT/dnu without the rotor term, assigned."""
        cols = self.columns()
        momenta = self.link_momenta()
        terms: dict[tuple[str, int], list[sympy.Expr]] = {key: [] for key in self.keys}
        for j, (_, _, LM, AM) in momenta.items():
            for f, (Jv, Jw) in cols[j].items():
                terms[f].append(self.program.assign(f"PL{self._stem(j)}_{self._stem(f)}", Jv.dot(LM) + Jw.dot(AM)))
        return {f: self.program.assign(f"PQ{self._stem(f)}", sympy.Add(*parts)) for f, parts in terms.items()}

    def gravity(self):
        """Gravity in frame 0, assigned once: minus link 0's acceleration at rest
        (:func:`~kanerobot.dynamics.root.root_motion`; ``robot.base.G``, or
        rotated by a free flyer's quaternion, ``G0<r>``)."""
        if self._gravity is None:
            _, _, Vdot = root_motion(self.program, self.robot, qd=False, qdd=False, base=False)
            self._gravity = -Vdot
        return self._gravity

    def potential_energy(self):
        """``U`` assigned: -sum_j (M_j G . 0P_j + jG . jMS_j), frame 0's
        position left out (a free flyer's weight is in :meth:`potential_rows`)."""
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
        """``speed key -> J^T [f; m]`` summed over the links with a wrench."""
        cols = self.columns()
        terms: dict[tuple[str, int], list[sympy.Expr]] = {key: [] for key in self.keys}
        for j in self.robot.links:
            d = self.robot.dynamics[j]
            f = sympy.Matrix([d[n] for n in WRENCH_NAMES[:3]])
            m = sympy.Matrix([d[n] for n in WRENCH_NAMES[3:]])
            if f == sympy.zeros(3, 1) and m == sympy.zeros(3, 1):
                continue
            for key, (Jv, Jw) in cols[j].items():
                terms[key].append(Jv.dot(f) + Jw.dot(m))
        return {key: sympy.Add(*parts) for key, parts in terms.items()}

    def potential_rows(self, fm, U):
        """``dU`` along each speed at unit rate (one forward pass each, :func:`_directions`).

        U leaves out the position of O_0, which only the root joint moves: its
        speeds add the work of the whole weight along their translation,
        ``-M G . S_lin`` (a free flyer's ``-M 0g``).
        """
        rows = []
        for joint in self.joints:
            for k, key in enumerate(joint.keys):
                row = fm.derivative(U, key)
                S_lin = joint.subspace[0][:, k]
                if joint.label == BASE and any(S_lin):
                    mass = sympy.Add(*(sympy.sympify(self.robot.dynamics[j]["M"]) for j in self.robot.links))
                    row += -mass * fm.value(self.gravity().dot(S_lin))
                rows.append(row)
        return rows


def _unit_columns(joint):
    """``{speed key: (Jv, Jw)}`` of a joint's speeds at its frame's origin: the columns of its motion subspace."""
    S_lin, S_ang = joint.subspace
    return {key: (S_lin[:, k], S_ang[:, k]) for k, key in enumerate(joint.keys)}


def _twist(subspace, rates):
    """``(S_lin rates, S_ang rates)`` as 3x1 matrices (:func:`~kanerobot.kinematics.along`)."""
    return tuple(sympy.Matrix(along(S, rates)) for S in subspace)


def _directions(model, time):
    """Forward-mode passes over ``model.program``: time (seeds ``time``), then
    one along each speed at unit rate (:meth:`_Joint.direction`), keyed as the speed."""
    fm = ForwardMode(model.program)
    labels = angle_labels(model.robot)
    if time is not None:
        fm.add_direction("t", {x: fm.target.replace_sin_cos(v, labels=labels) for x, v in time.items()}, label="t")
    for joint in model.joints:
        for k, key in enumerate(joint.keys):
            seeds, label = joint.direction(k)
            fm.add_direction(key, {x: fm.target.replace_sin_cos(v, labels=labels) for x, v in seeds.items()}, label=label)
    return fm


def _output_names(joints, prefix):
    """``<prefix><force>`` of each speed: the root joint's (``GAMFX0 ..``), then the joints' (``GAM<stem>``, ``GAMCX2 ..``)."""
    return [f"{prefix}{name}" for joint in joints for name in joint.forces]


def _lagrange(robot, qdd, trig):
    what = "the inverse dynamic model" if qdd else "the vector H"
    _check(robot, what)
    joints = _joints(robot)
    root = joints[0]
    state = [robot.q, root.read, robot.qd, root.speeds] + ([robot.qdd, root.accelerations] if qdd else [])
    names = (INERTIAL_NAMES if qdd else RIGID_INERTIAL_NAMES) + ("FV", "FS") + WRENCH_NAMES
    inputs = program_inputs(robot, state, names, base=_base_inputs(root))
    model = EnergyModel(robot, energy_program(robot, inputs, trig), joints)
    PQ = model.generalized_momenta()
    momenta = model.link_momenta()
    U = model.potential_energy()
    wrench = model.wrench_torques()

    # d/dt: the configurations move at their rates (q' = QP for one speed); with
    # accelerations, the speeds change at theirs (QDP, DVX0 .. DWZ0).
    time: dict[sympy.Symbol, sympy.Expr] = {}
    for joint in joints:
        time |= joint.rates(joint.speeds)
        if qdd:
            time |= {v: a for v, a in zip(joint.speeds, joint.accelerations) if isinstance(v, sympy.Symbol)}
    fm = _directions(model, time)
    rows = joint_rows(fm, model, PQ, momenta, qdd)
    potential = model.potential_rows(fm, U)
    for name, row, dU, key in zip(_output_names(joints, "GAM"), rows, potential, model.keys):
        fm.target.set_output(name, row + dU + fm.value(wrench[key]))
    fm.target.prune()
    return fm.target


def joint_rows(fm, model, PQ, momenta, accelerations):
    """Lagrange's equations in the speeds, without dU and the wrenches, one row per speed.

    ``d/dt PQ_r - X_r(T) + S_r^T (xi x* S p) + IA qdd_r + FV qd_r + FS sign(qd_r)``
    (Boltzmann-Hamel): ``X_r`` is the pass along speed r (``fm`` has it and
    the time direction ``"t"``), ``xi = S nu`` the joint's relative twist
    and ``p`` its momenta ``PQ`` (the structure constants of its speeds:
    zero for one speed, ``V x* p`` for a free flyer, ``w x p`` for a ball
    joint); rotor and friction on the joints of frames.  ``momenta`` is
    :meth:`EnergyModel.link_momenta`.  ``X_r(T)`` comes by the chain rule
    through the link velocities: the partial derivatives of ``T_j = 1/2
    (v . LM + w . AM)`` with respect to v and w are the link momenta LM and
    AM.
    """
    rows = []
    for joint in model.joints:
        hamel = _structure_terms(joint, [fm.value(PQ[key]) for key in joint.keys])
        d = model.robot.dynamics.get(joint.label) if joint.actuated else None
        for key, qd_r, qdd_r, structure in zip(joint.keys, joint.speeds, joint.accelerations, hamel):
            terms = []
            for v, w, LM, AM in momenta.values():
                for k in range(3):
                    terms.append(fm.value(LM[k]) * fm.derivative(v[k], key) + fm.value(AM[k]) * fm.derivative(w[k], key))
            value = fm.derivative(PQ[key], "t") - fm.target.assign(fm.name_for("T", key), sympy.Add(*terms)) + structure
            if d is not None:
                if accelerations:
                    value += d["IA"] * qdd_r
                value += d["FV"] * qd_r + d["FS"] * sympy.sign(qd_r)
            rows.append(value)
    return rows


def _structure_terms(joint, p):
    """``S^T (xi x* S p)``, ``xi = S nu`` the joint's relative twist, ``p`` its momenta: the
    Boltzmann-Hamel terms of its speeds, ``V x* p`` of a free flyer (``w x p_v``, ``w x p_w +
    v x p_v``), zero for one speed."""
    S_lin, S_ang = joint.subspace
    v, w, f, n = along(S_lin, joint.speeds), along(S_ang, joint.speeds), along(S_lin, p), along(S_ang, p)
    force, moment = cross(w, f), plus(cross(w, n), cross(v, f))
    return [summed([product(S_lin[r, k], force[r]) for r in range(3)] + [product(S_ang[r, k], moment[r]) for r in range(3)]) for k in range(len(p))]
