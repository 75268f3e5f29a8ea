"""Kane's method for serial and tree robots: sympy's KanesMethod, and the models summed in order n.

:class:`KaneSystem` turns a robot (serial or tree, base fixed, moving with
a known motion, or floating: see *Floating base* below) into the objects a
sympy user works with: a
:class:`~sympy.physics.vector.ReferenceFrame` per frame, a
:class:`~sympy.physics.vector.Point` per origin and centre of mass, a
:class:`~sympy.physics.mechanics.RigidBody` per link, the loads, and a
:class:`~sympy.physics.mechanics.KanesMethod` that forms the generalized
active forces ``Fr`` and the generalized inertia forces ``Fr*`` from the
partial velocities (``KanesMethod.kanes_equations``, ``mass_matrix``,
``forcing``).

The dynamic models are :class:`~kanerobot.symbolic.Program` objects with the
output names of the Newton-Euler engine, so that the engines are
interchangeable.  By default (``KaneSystem.program(name)``, which
:func:`kanerobot.derive`, the numeric functions and the code exports use)
they are written by :class:`NestedKane`: Kane's equations with their sums
over bodies taken in a different order, from the leaves of the tree to the
root (below), so that each costs about what a Newton-Euler pass costs.
``KaneSystem.program(name, source="kanes_method")`` reads the same models off
KanesMethod's ``mass_matrix`` and ``forcing`` instead: an independent path,
with larger programs, that the tests compare with the nested one.

The derivation (notation, Kane's equations, the nested sums K1-K5, B1-B3,
S1-S2, E1, G1-G3, M1-M4, the Coriolis matrix by the seed's ``getAC`` rule,
the floating base as a root joint, costs) is in ``docs/theory/kane.md``.
"""

import dataclasses

import sympy
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia
from sympy.physics.vector import Dyadic, Vector

from kanerobot.dynamics.common import (
    frame_placements,
    link_inertia,
    link_parameter,
    motion_parts,
    program_inputs,
    subtree_wrench,
)
from kanerobot.dynamics.composite import NAMES, column_wrenches, composite_links
from kanerobot.dynamics.coriolis import half_a_s
from kanerobot.dynamics.free_flyer import BASE_ACCELERATION, BASE_FORCE_NAMES, BASE_VELOCITY, QUATERNION, gravity_in_base
from kanerobot.dynamics.root import is_free, root_motion
from kanerobot.errors import KaneRobotError
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, WRENCH_NAMES, Base
from kanerobot.robot.joints import PRISMATIC, REVOLUTE, hat
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program, is_trivial

__all__ = [
    "KaneRHS",
    "KaneSystem",
    "NaiveKane",
    "NestedKane",
    "coriolis_gravity",
    "coriolis_matrix",
    "gravity",
    "gravity_torques",
    "h",
    "inverse_dynamics",
    "mass_matrix",
    "naive_kanes_method",
    "rhs_terms",
]

#: Models a :class:`KaneSystem` derives, by :meth:`KaneSystem.program` name
#: (the names of :data:`kanerobot.dynamics.model.MODELS`).
MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix")
#: Labels of the six speeds of a floating base (``u_VX0 .. u_WZ0``, the
#: program's ``VX0 .. WZ0``): the velocity of O_0 then the angular velocity of
#: link 0, both in frame 0 (pinocchio's free flyer).
BASE_SPEED_LABELS = ("VX0", "VY0", "VZ0", "WX0", "WY0", "WZ0")
#: Models of a floating robot.
FLOATING_MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix")

# ---------------------------------------------------------------------------
# Checks and small helpers
# ---------------------------------------------------------------------------


def check_supported(robot):
    """Raise :class:`KaneRobotError` unless ``robot`` is a serial or tree robot
    with a fixed, moving (known motion) or floating base and rigid joints."""
    if robot.loops:
        raise KaneRobotError(
            f"robot {robot.name} has closed loops (cut at joint {', '.join(robot.cut_joints)}): KaneSystem is for "
            f"serial and tree robots; kr.derive(robot, method='kane') projects the equivalent tree on the loops"
        )
    if robot.floating and BASE not in robot.links:
        raise KaneRobotError(f"robot {robot.name} has a floating base: it must carry link 0 (give its dynamic parameters)")
    if robot.wheeled:
        raise KaneRobotError(
            f"robot {robot.name} has a wheeled mobile base: KaneSystem is for its tree; kr.derive(robot, method='kane') "
            f"adds the wheel constraints (kanerobot.dynamics.wheeled)"
        )
    flexible = robot.flexible_joints
    if flexible:
        raise KaneRobotError(
            f"robot {robot.name} has flexible joints ({', '.join(flexible)}): KaneSystem is for rigid joints; "
            f"kr.derive(robot, method='kane') models the motors as extra coordinates (kanerobot.dynamics.flexible)"
        )


def _moving_base(robot):
    b = robot.base
    return any(sympy.sympify(v) != 0 for v in list(b.W0) + list(b.WP0) + list(b.V0) + list(b.VP0))


def _vector(frame, components):
    """``sum_r components[r] * frame.<r>`` as a sympy Vector."""
    return components[0] * frame.x + components[1] * frame.y + components[2] * frame.z


def _frame_vector(frame, components):
    """The Vector of ``frame`` with these components, made at once (as sympy's
    frames make their unit vectors) rather than by three products and two sums."""
    return Vector([(sympy.Matrix(components), frame)])


def _inertia_dyadic(frame, entries):
    """``inertia(frame, ...)`` for the 3x3 (row-major) ``entries`` of a
    symmetric inertia tensor, made at once: the same Dyadic as
    :func:`sympy.physics.mechanics.inertia`, which adds nine outer products
    one by one (each sum compares every pair of terms, by their printed unit
    vectors)."""
    units = (frame.x, frame.y, frame.z)
    terms = [(entries[3 * r + c], units[r], units[c]) for r in range(3) for c in range(3)]
    return Dyadic([term for term in terms if term[0] != 0])


def _is_zero(v):
    return all(sympy.sympify(e) == 0 for e in v)


def _linear(terms, constant):
    """``sum coefficient * speed + constant`` for 3x1 coefficients, component-wise."""
    return sympy.Matrix(
        [sympy.Add(constant[r], *(coefficient[r] * speed for coefficient, speed in terms)) for r in range(3)]
    )


def _kd_equations(q, u):
    t = dynamicsymbols._t
    return [qk.diff(t) - uk for qk, uk in zip(q, u)]


def _kd_solver(A, b):
    """Solver of the kinematic differential equations ``q' = u``: their
    matrix is the identity, which sympy's LU would factor symbolically."""
    if A == sympy.eye(A.rows):
        return sympy.Matrix(b)
    return A.LUsolve(b)


def _kanes_method(N, q, u):
    """``KanesMethod(N, q, u)`` with the kinematic differential equations ``q' = u``."""
    try:
        return KanesMethod(N, q, u, kd_eqs=_kd_equations(q, u), kd_eqs_solver=_kd_solver)
    except TypeError:  # sympy < 1.13 has no kd_eqs_solver
        return KanesMethod(N, q, u, kd_eqs=_kd_equations(q, u))


def _orient(child, parent, dcm):
    """Orient ``child`` on ``parent`` with ``parent.dcm(child) == dcm``.

    Only the direction cosines are recorded, not the angular velocity that
    ``orient_explicit`` would derive (with trigsimp) and store: the angular
    velocity of every frame is set relative to N, and a second path between
    two frames in sympy's angular velocity graph makes ``ang_vel_in``
    enumerate all the paths of the tree.  Skipped on a sympy without the
    private ``_dcm`` (the frames are then not oriented on each other).
    """
    record = getattr(child, "_dcm", None)
    if record is not None:
        record(parent, sympy.ImmutableMatrix(dcm))


# ---------------------------------------------------------------------------
# The fast system
# ---------------------------------------------------------------------------

#: The attributes of :class:`KaneSystem` built on first access, and their
#: stage: 1 the kinematic recursion, 2 the mechanics objects and KanesMethod.
_LAZY_ATTRIBUTES = dict.fromkeys(
    ("kinematics", "placements", "JW", "JV", "JVI", "JG", "VBI", "CG", "IG", "VGB", "GB", "reaction_axis",
     "W", "WB", "VB", "WPB", "VPB", "GV", "_Ucache"), 1
) | dict.fromkeys(
    ("N", "frames", "origins", "centres", "bodies", "loads", "load_groups", "kanes_method", "IA", "fr", "frstar",
     "mass_matrix_kane", "forcing", "_omega", "_omega_symbols", "_kinematic_deps", "_coincident", "_fr_groups",
     "_aux"), 2
)


def _check_masses(robot):
    """A link without mass has no first moments (its centre of mass would be nowhere)."""
    for j in robot.links:
        d = robot.dynamics[j]
        MS = [d["MX"], d["MY"], d["MZ"]]
        if sympy.sympify(d["M"]) == 0 and not _is_zero(sympy.Matrix(MS)):
            raise KaneRobotError(f"link {j} of {robot.name} has M = 0 but first moments {MS}: give it a mass")


class KaneSystem:
    """Kane's method for a robot, on sympy.physics.mechanics objects.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot; the base is fixed, moves with the known
        motion ``W0, WP0, V0, VP0`` of ``robot.base``, or floats
        (``robot.floating``, link 0 a body; docs/theory/kane.md, *Floating base*).
    trig : bool, optional
        Apply the compound-angle rules (``C23``) in the kinematic program.

    Attributes
    ----------
    robot : Robot
    N : ReferenceFrame
        The inertial frame (the robot's frame 0 when the base is fixed).
    frames : dict str -> ReferenceFrame
        One per robot frame, ``'0'`` included, named ``F<label>``.
    origins, centres : dict str -> Point
        Frame origins ``O<label>`` and link centres of mass ``G<label>``.
    bodies : list of RigidBody
        One per link, named ``B<label>``, mass ``M``, mass centre ``G<label>``
        and as inertia the central inertia :attr:`IG` (the inertia
        ``XX .. ZZ`` about the frame origin, moved to the centre of mass).
    loads : list of (Point or ReferenceFrame, Vector)
        All of :attr:`load_groups`, in the order ``torque``, ``friction``,
        ``gravity``, ``wrench``.
    load_groups : dict str -> list
        The loads by kind.
    q, u : list of sympy Function
        ``dynamicsymbols`` of the joint variables (named as the robot's) and
        of the speeds ``u<label>``, in ``robot.joint_labels`` order; for a
        floating base, preceded by the base's six pseudo-coordinates
        ``q_VX0 .. q_WZ0`` and speeds ``u_VX0 .. u_WZ0``.
    speed_labels : list of str
        The key of each speed in the partial velocities :attr:`JW` ..: the
        joint labels, after ``VX0 .. WZ0`` for a floating base.
    n : int
        Number of generalized speeds (``6 +`` joints for a floating base).
    floating : bool
    udot : list of sympy.Derivative
        ``u'``.
    kanes_method : KanesMethod
        After ``kanes_equations(bodies, loads)``: its ``mass_matrix`` and
        ``forcing`` (``Fr - nonMM``) are sympy's.
    kinematics : Program
        The intermediate symbols the vectors are made of, with their
        definitions (robot symbols, not the real twins).
    IG : dict str -> sympy.Matrix
        Per link, the central inertia ``J - M (c.c E - c c^T)`` (``J`` the
        inertia ``XX .. ZZ`` about the frame origin, ``c = MS / M``, 0 when
        ``M = 0``) as symbols of :attr:`kinematics` (``IG<r><c>_<label>``).
    real_symbols : dict str -> sympy.Symbol
        The real twins used in the mechanics objects, by name; :meth:`real`
        maps an expression of robot symbols onto them.
    fr, frstar : sympy.Matrix
        KanesMethod's generalized active and inertia forces (``frstar``
        with the rotor inertia term ``-IA_j u'_j`` added).
    mass_matrix_kane, forcing : sympy.Matrix
        ``kanes_method.mass_matrix`` and ``.forcing``, computed once.

    The kinematic program (:attr:`kinematics`, :attr:`IG` and the partial
    velocities) and the mechanics objects (:attr:`N` .. :attr:`forcing`,
    :attr:`kanes_method` among them) are built on first access, not by the
    constructor: the default (nested) programs need none of them, and
    sympy's ``kanes_equations`` is most of a KanesMethod build's time.

    Methods :meth:`inverse_dynamics`, :meth:`mass_matrix`, :meth:`h`,
    :meth:`gravity`, :meth:`coriolis_matrix` (or :meth:`program` by name,
    derived once) give the programs: by default Kane's equations summed
    from the leaves to the root (:class:`NestedKane`, docs/theory/kane.md), with
    ``source="kanes_method"`` read off KanesMethod's ``mass_matrix`` and
    ``forcing``; :meth:`kanes_method_program` gives those two themselves;
    :meth:`rhs_terms` the right-hand side terms; :meth:`fr_group` ``Fr`` of
    one kind of load.

    Examples
    --------
    >>> import kanerobot as kr
    >>> system = KaneSystem(kr.load(kr.frames_path("planar2")))
    >>> system.kanes_method.mass_matrix.shape
    (2, 2)
    >>> sorted(system.frames)
    ['0', '1', '2']
    >>> print(system.frames["2"].ang_vel_in(system.N))
    (u1(t) + u2(t))*F2.z
    >>> print(system.mass_matrix())  # doctest: +ELLIPSIS
    C2 = cos(th2)
    ...
    A22 = IA2 + ZZ2

    The same inertia matrix read off KanesMethod's ``mass_matrix``:

    >>> from kanerobot.symbolic.printing import matrix_entry_names
    >>> km = system.program("mass_matrix", source="kanes_method")
    >>> sorted(km.outputs) == sorted(system.program("mass_matrix").outputs)
    True
    """

    def __init__(self, robot, trig=True):
        check_supported(robot)
        self.robot = robot
        self.trig = bool(trig)
        self.floating = bool(robot.floating)
        labels = robot.joint_labels
        # A floating base puts its six speeds (its body-frame twist) before the
        # joint rates, as pinocchio's free flyer: see docs/theory/kane.md.
        base = BASE_SPEED_LABELS if self.floating else ()
        self.speed_labels = list(base) + list(labels)
        self.n = len(self.speed_labels)
        self._index = {label: k for k, label in enumerate(self.speed_labels)}
        self.q = [dynamicsymbols(f"q_{key}", real=True) for key in base]
        self.q += [dynamicsymbols(str(x), real=True) for x in robot.q]
        self.u = [dynamicsymbols(f"u_{key}", real=True) for key in base]
        self.u += [dynamicsymbols(f"u{self.robot.stems[label]}", real=True) for label in labels]
        self.real_symbols, self._plain, self._twins = {}, {}, {}
        t = dynamicsymbols._t
        self.udot = [uk.diff(t) for uk in self.u]
        self.GAM = [robot.joint_parameters[label]["GAM"] for label in labels]
        # Program symbols of u and u', and the suffixes of the generalized forces' names.
        if self.floating:
            self._speeds = list(BASE_VELOCITY) + list(robot.qd)
            self._accelerations = list(BASE_ACCELERATION) + list(robot.qdd)
            self._suffixes = list(BASE_FORCE_NAMES) + [robot.stems[label] for label in labels]
            state = [robot.q, QUATERNION, robot.qd, BASE_VELOCITY, robot.qdd, BASE_ACCELERATION]
        else:
            self._speeds, self._accelerations, self._suffixes = list(robot.qd), list(robot.qdd), [robot.stems[label] for label in labels]
            state = [robot.q, robot.qd, robot.qdd]
        # A floating base has no known motion: W0 .. VP0 of robot.base are not used.
        self._moving = _moving_base(robot) and not self.floating
        self._inputs = program_inputs(robot, state, DYNAMIC_NAMES, base=True)
        _check_masses(robot)
        # The kinematic program and the mechanics objects (KanesMethod) are
        # built on first access (__getattr__): the nested programs need neither.
        self._built = 0
        self._programs = {}
        self._kanes_method_programs = {}
        self._nested = None
        self._fixed = None

    def __getattr__(self, name):
        # Called only for an attribute not set yet: the lazily built ones are
        # made by their stage, the others do not exist.
        stage = _LAZY_ATTRIBUTES.get(name)
        if stage is not None and self.__dict__.get("_built", stage) < stage:
            self._build(stage)
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _build(self, stage):
        """Build up to ``stage``: 1 the kinematic program (:meth:`_recursion`), 2 the
        mechanics objects and KanesMethod's equations (:meth:`_mechanics`).

        The stage is marked built before it runs, so that an attribute read
        before it is set raises AttributeError instead of building again;
        a stage that fails is unmarked and what it had set dropped, so the
        next access runs it afresh rather than reading half of it.
        """
        built = self._built
        try:
            if self._built < 1:
                self._built = 1
                self.kinematics = Program(inputs=self._inputs, reserved=self._output_names(), trig=self.trig)
                self._recursion()
            if stage >= 2 and self._built < 2:
                self._built = 2
                self._mechanics()
        except BaseException:
            for name, level in _LAZY_ATTRIBUTES.items():
                if level > built:
                    self.__dict__.pop(name, None)
            self._built = built
            raise

    def _output_names(self):
        """Names the models output: no intermediate variable may take them
        (the compound angle ``C23`` would otherwise take the Coriolis entry's name)."""
        n, labels = self.n, self._suffixes
        names = set()
        for prefix in ("A", "C"):
            names |= {name for row in matrix_entry_names(prefix, (n, n)) for name in row}
        for prefix in ("JVT", "JWT"):
            names |= {name for row in matrix_entry_names(prefix, (n, 3)) for name in row}
        for prefix in ("GAM", "Q", "H", "HV", "a", "c"):
            names |= {f"{prefix}{label}" for label in labels}
        return names

    # ------------------------------------------------------------ kinematics

    def _vec(self, name, v):
        """The components of ``v`` assigned as ``name.format(r=1, 2, ...)``, as a column."""
        assign = self.kinematics.assign
        return sympy.Matrix([assign(name.format(r=r + 1), e) for r, e in enumerate(v)])

    def _U(self, j):
        """jU_j = hat(WPB_j) + hat(W_j)^2 from the products of w (as SYMORO's DV), bias part."""
        if j not in self._Ucache:
            w, wd = self.W[j], self.WPB[j]
            products = [w[0] * w[0], w[0] * w[1], w[0] * w[2], w[1] * w[1], w[1] * w[2], w[2] * w[2]]
            DV = self._vec(f"DV{{r}}_{j}", products)
            U = sympy.Matrix(
                [
                    [-DV[3] - DV[5], DV[1] - wd[2], DV[2] + wd[1]],
                    [DV[1] + wd[2], -DV[0] - DV[5], DV[4] - wd[0]],
                    [DV[2] - wd[1], DV[4] + wd[0], -DV[0] - DV[3]],
                ]
            )
            self._Ucache[j] = self.kinematics.assign_matrix(lambda r, c: f"U{r}{c}_{self.robot.stems[j]}", U)
        return self._Ucache[j]

    def _recursion(self):
        """The kinematic recursion, recorded in :attr:`kinematics` (see docs/theory/kane.md)."""
        robot, p = self.robot, self.kinematics
        b = robot.base
        QP = dict(zip(self.speed_labels, self._speeds))
        self.placements = frame_placements(robot, p)
        self.JW, self.JV, self.JVI, self.JG = {BASE: {}}, {BASE: {}}, {BASE: {}}, {BASE: {}}
        self.VBI, self.CG, self.IG, self.VGB, self.GB, self.reaction_axis = {}, {}, {}, {}, {}, {}
        self._Ucache = {}
        if self.floating:
            self._floating_base(QP)
        else:
            self.W = {BASE: self._vec("W{r}_0", b.W0)}
            self.WB = {BASE: self.W[BASE]}
            self.VB = {BASE: self._vec("VB{r}_0", b.V0)}
            self.WPB = {BASE: self._vec("WPB{r}_0", b.WP0)}
            self.VPB = {BASE: self._vec("VPB{r}_0", b.VP0)}
            self.GV = {BASE: self._vec("GV{r}_0", b.G)}
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            iA_j, iP_j = self.placements[j]
            jA_i = iA_j.T
            a = sympy.Matrix(frame.axis)
            sigma = int(frame.sigma == PRISMATIC)
            sigmabar = int(frame.sigma == REVOLUTE)
            # Partial velocities (coefficients of u_k) of frame j and its origin.
            self.JW[j], self.JV[j], self.JVI[j] = {}, {}, {}
            for k, w_ik in self.JW[i].items():
                self.JW[j][k] = self._vec(f"JW{{r}}_{j}_{k}", jA_i * w_ik)
                self.JVI[j][k] = self._vec(f"JVI{{r}}_{j}_{k}", self.JV[i][k] + w_ik.cross(iP_j))
                self.JV[j][k] = self._vec(f"JV{{r}}_{j}_{k}", jA_i * self.JVI[j][k])
            if frame.is_joint:
                self.JW[j][j] = sigmabar * a
                self.JV[j][j] = sigma * a
                # Direction of the joint's reaction on the antecedent, in its frame: iA_j a_j
                # (independent of the joint variable, so taken at q_j = 0).
                R0 = sympy.Matrix(frame.transform()).xreplace({frame.q: 0})[:3, :3]
                R0 = p.replace_sin_cos(R0)
                self.reaction_axis[j] = self._vec(f"AX{{r}}_{j}", R0 * a)
            # Velocity of the origin due to the base motion alone (u = 0).
            self.WB[j] = self._vec(f"WB{{r}}_{j}", jA_i * self.WB[i])
            self.VBI[j] = self._vec(f"VBI{{r}}_{j}", self.VB[i] + self.WB[i].cross(iP_j))
            self.VB[j] = self._vec(f"VB{{r}}_{j}", jA_i * self.VBI[j])
            # Angular velocity, written as KanesMethod sees it (sum_k JW_jk u_k + WB_j,
            # so that the program names it once for both), and the bias
            # accelerations (u' = 0) of eqs 8 and 10, where jw_i x a_j = jw_j x a_j.
            qd = sympy.sympify(QP.get(j, 0))
            self.W[j] = self._vec(f"W{{r}}_{j}", self._speed_sum(self.JW[j], self.WB[j], QP))
            self.WPB[j] = self._vec(f"WPB{{r}}_{j}", jA_i * self.WPB[i] + sigmabar * self.W[j].cross(qd * a))
            VSP = self._vec(f"VSP{{r}}_{j}", self.VPB[i] + self._U(i) * iP_j)
            self.VPB[j] = self._vec(f"VPB{{r}}_{j}", jA_i * VSP + sigma * 2 * self.W[j].cross(qd * a))
            self.GV[j] = self._vec(f"GV{{r}}_{j}", jA_i * self.GV[i])
            if j in robot.links:
                self._centre_of_mass(j)

    def _floating_base(self, QP):
        """Link 0 of a floating base: its speeds are the first six generalized speeds.

        In frame 0, ``w_0 = [u_WX0 u_WY0 u_WZ0]`` and ``v_O0 = [u_VX0 u_VY0
        u_VZ0]`` (the partial velocities are the unit vectors), with no known
        base motion (``WB = VB = WPB = 0``).  The classical acceleration of
        O_0 is ``v_O0' + w_0 x v_O0``: the derivative of the speeds goes to
        the partial velocities, ``w_0 x v_0`` is the bias ``VPB_0``.  Gravity
        in frame 0 is ``0R_w G`` from the quaternion ``QX0 .. QW0``
        (:func:`kanerobot.dynamics.free_flyer.gravity_in_base`).
        """
        zero, unit = sympy.zeros(3, 1), sympy.eye(3)
        linear, angular = BASE_SPEED_LABELS[:3], BASE_SPEED_LABELS[3:]
        self.JW[BASE] = {key: zero for key in linear} | {key: unit[:, r] for r, key in enumerate(angular)}
        self.JV[BASE] = {key: unit[:, r] for r, key in enumerate(linear)} | {key: zero for key in angular}
        self.WB = {BASE: zero}
        self.VB = {BASE: zero}
        self.WPB = {BASE: zero}
        self.W = {BASE: self._speed_sum(self.JW[BASE], zero, QP)}
        v0 = sympy.Matrix(BASE_VELOCITY[:3])
        self.VPB = {BASE: self._vec("VPB{r}_0", self.W[BASE].cross(v0))}
        self.GV = {BASE: gravity_in_base(self.kinematics, self.robot)}
        self._centre_of_mass(BASE)

    def _centre_of_mass(self, j):
        d = self.robot.dynamics[j]
        M = sympy.sympify(d["M"])
        MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
        if M == 0:  # no first moments either (_check_masses)
            c = sympy.zeros(3, 1)
        else:
            c = self._vec(f"CG{{r}}_{j}", MS / M)
        self.CG[j] = c
        # Central inertia I_G = J_O - M (c.c E - c c^T) = J_O - (MS.c) E + MS c^T (J_O = XX..ZZ):
        # the inertia sympy's RigidBody is given, about G, as intermediate symbols.
        J = sympy.Matrix([[d["XX"], d["XY"], d["XZ"]], [d["XY"], d["YY"], d["YZ"]], [d["XZ"], d["YZ"], d["ZZ"]]])
        IG = sympy.zeros(3, 3)
        for r in range(3):
            for s in range(r, 3):
                if r == s:
                    value = J[r, r] - sympy.Add(*(MS[k] * c[k] for k in range(3) if k != r))
                else:
                    value = J[r, s] + MS[r] * c[s]
                IG[r, s] = IG[s, r] = self.kinematics.assign(f"IG{r + 1}{s + 1}_{self.robot.stems[j]}", value)
        self.IG[j] = IG
        self.JG[j] = {k: self._vec(f"JG{{r}}_{j}_{k}", v + self.JW[j][k].cross(c)) for k, v in self.JV[j].items()}
        self.VGB[j] = self._vec(f"VGB{{r}}_{j}", self.VB[j] + self.WB[j].cross(c))
        self.GB[j] = self._vec(f"GB{{r}}_{j}", self.VPB[j] + self._U(j) * c)

    # --------------------------------------------------- mechanics objects

    def _speed_sum(self, partials, constant, speeds):
        """``sum_k partials[k] * speeds[k] + constant`` (``speeds`` indexed by
        joint position, or a dict by joint label)."""
        if isinstance(speeds, dict):
            return _linear([(v, speeds[k]) for k, v in partials.items()], constant)
        return _linear([(v, speeds[self._index[k]]) for k, v in partials.items()], constant)

    def _real_speed_sum(self, partials, constant, speeds):
        """The components of :meth:`_speed_sum` (``speeds`` by joint position)
        with real twins, built from the twins of the coefficients."""
        real = self.real
        terms = [(v, speeds[self._index[k]]) for k, v in partials.items()]
        return [sympy.Add(real(constant[r]), *(real(v[r]) * speed for v, speed in terms)) for r in range(3)]

    def real(self, expr):
        """``expr`` with every symbol replaced by its real twin (the symbols of
        the mechanics objects; see :attr:`real_symbols`)."""
        if isinstance(expr, sympy.Symbol):
            twin = self._twins.get(expr)
            if twin is not None:
                return twin
        expr = sympy.sympify(expr)
        if expr.is_Number:
            return expr
        twins = self._twins
        for s in expr.free_symbols:
            if s not in twins and isinstance(s, sympy.Symbol) and not s.is_real and s != dynamicsymbols._t:
                twin = self.real_symbols.get(s.name)
                if twin is None:
                    twin = self.real_symbols[s.name] = sympy.Symbol(s.name, real=True)
                    self._plain[twin] = s
                twins[s] = twin
        return expr.xreplace(twins)

    def _v(self, frame, components):
        """A Vector of ``frame`` with real symbols."""
        return _frame_vector(frame, [self.real(c) for c in components])

    def _mechanics(self):
        robot = self.robot
        to_time = dict(zip(robot.q, self.q))
        N = ReferenceFrame("N")
        self.N = N
        self.frames, self.origins, self.centres = {}, {}, {}
        self._omega = {}
        origin = Point("O0")
        if self.floating:
            # Frame 0 is not oriented on N: every vector is given in the frame of
            # the body it belongs to, and gravity carries the base orientation.
            base = ReferenceFrame("F0")
            self._omega[BASE] = self._real_speed_sum(self.JW[BASE], self.WB[BASE], self.u)
            base.set_ang_vel(N, _frame_vector(base, self._omega[BASE]))
            base.set_ang_acc(N, _frame_vector(base, self._real_speed_sum(self.JW[BASE], self.WPB[BASE], self.udot)))
            origin.set_vel(N, _frame_vector(base, self._real_speed_sum(self.JV[BASE], self.VB[BASE], self.u)))
            origin.set_acc(N, _frame_vector(base, self._real_speed_sum(self.JV[BASE], self.VPB[BASE], self.udot)))
        elif self._moving:
            base = ReferenceFrame("F0")
            base.set_ang_vel(N, self._v(base, self.WB[BASE]))
            base.set_ang_acc(N, self._v(base, self.WPB[BASE]))
            origin.set_vel(N, self._v(base, self.VB[BASE]))
            origin.set_acc(N, self._v(base, self.VPB[BASE]))
        else:
            base = N
            origin.set_vel(N, 0)
            origin.set_acc(N, 0)
        self.frames[BASE], self.origins[BASE] = base, origin
        self._omega_symbols = {}  # component of a KanesMethod angular velocity -> W symbol
        self._kinematic_deps = None
        bodies = []
        if self.floating:
            bodies.append(self._body(BASE, base, origin))
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            T = self.real(sympy.Matrix(frame.transform()).xreplace(to_time))
            B = ReferenceFrame(f"F{self.robot.stems[j]}")
            _orient(B, self.frames[i], T[:3, :3])
            O = self.origins[i].locatenew(f"O{self.robot.stems[j]}", _vector(self.frames[i], T[:3, 3]))
            omega = self._real_speed_sum(self.JW[j], self.WB[j], self.u)
            self._omega[j] = omega
            for r in range(3):
                if not omega[r].is_Atom and isinstance(self.W[j][r], sympy.Symbol):
                    self._omega_symbols[omega[r]] = self.W[j][r]
            B.set_ang_vel(N, _frame_vector(B, omega))
            B.set_ang_acc(N, _frame_vector(B, self._real_speed_sum(self.JW[j], self.WPB[j], self.udot)))
            O.set_vel(N, _frame_vector(B, self._real_speed_sum(self.JV[j], self.VB[j], self.u)))
            O.set_acc(N, _frame_vector(B, self._real_speed_sum(self.JV[j], self.VPB[j], self.udot)))
            self.frames[j], self.origins[j] = B, O
            if j in robot.links:
                bodies.append(self._body(j, B, O))
        self.bodies = bodies
        self.load_groups = self._loads()
        self.loads = [load for group in self.load_groups.values() for load in group]
        self.kanes_method = _kanes_method(N, self.q, self.u)
        fr, frstar = self.kanes_method.kanes_equations(self.bodies, self.loads or None)
        IA = sympy.Matrix([self.real(self._link_value(label, "IA")) if label in robot.joint_labels else 0
                           for label in self.speed_labels])
        self.IA = IA
        self.fr = fr
        self.frstar = frstar - sympy.Matrix([IA[k] * self.udot[k] for k in range(self.n)])
        # KanesMethod's properties build new matrices at every access.
        self.mass_matrix_kane = self.kanes_method.mass_matrix
        self.forcing = self.kanes_method.forcing
        self._fr_groups = {}
        self._aux = None

    def _body(self, j, B, O):
        """The RigidBody of link j (frame ``B``, origin ``O``), its centre of mass
        moving as the kinematic program says."""
        N = self.N
        d = {name: self.real(value) for name, value in self.robot.dynamics[j].items()}
        G = O.locatenew(f"G{self.robot.stems[j]}", self._v(B, self.CG[j]))
        G.set_vel(N, _frame_vector(B, self._real_speed_sum(self.JG[j], self.VGB[j], self.u)))
        G.set_acc(N, _frame_vector(B, self._real_speed_sum(self.JG[j], self.GB[j], self.udot)))
        self.centres[j] = G
        IG = [self.real(v) for v in self.IG[j]]
        I_G = _inertia_dyadic(B, IG)
        return RigidBody(f"B{self.robot.stems[j]}", G, B, d["M"], (I_G, G))

    def generalized_active_forces(self, loads):
        """``Fr`` of ``loads`` alone (a list of (Point or ReferenceFrame,
        Vector)), formed by a KanesMethod on the same frames and speeds."""
        if not loads:
            return sympy.zeros(self.n, 1)
        if self._aux is None:
            self._aux = _kanes_method(self.N, self.q, self.u)
        fr, _ = self._aux.kanes_equations([], list(loads))
        return fr

    def _symbolic(self, values):
        """The real twins of ``values`` when they are all symbols or zeros, else None."""
        values = [sympy.sympify(v) for v in values]
        if all(isinstance(v, sympy.Symbol) or v == 0 for v in values):
            return [self.real(v) for v in values if v != 0]
        return None

    def fr_group(self, name):
        """``Fr`` of one load group: ``torque``, ``friction``, ``gravity`` or ``wrench``.

        ``Fr`` is linear in the loads, so when the magnitudes of the other
        groups are plain symbols the group is read off :attr:`fr` by setting
        them to zero (friction vanishes at ``u = 0``: ``sign(0) = 0``);
        otherwise it is formed by a KanesMethod of its own.
        """
        if name not in self._fr_groups:
            torques = self._symbolic(self.GAM)
            wrenches = self._symbolic([self.robot.dynamics[j][w] for j in self.robot.links for w in WRENCH_NAMES])
            out = None
            if name == "torque" and torques is not None:
                out = self.fr - self.fr.xreplace(dict.fromkeys(torques, 0))
            elif name == "gravity" and torques is not None and wrenches is not None:
                zero = dict.fromkeys(torques + wrenches + self.u, 0)
                out = self.fr.xreplace(zero)
            if out is None:
                out = self.generalized_active_forces(self.load_groups[name])
            self._fr_groups[name] = out
        return self._fr_groups[name]

    def _fr_without_torques(self):
        torques = self._symbolic(self.GAM)
        if torques is not None:
            return self.fr.xreplace(dict.fromkeys(torques, 0))
        return self.fr - self.fr_group("torque")

    def _link_value(self, label, name):
        return sympy.sympify(self.robot.dynamics[label][name]) if label in self.robot.dynamics else sympy.S.Zero

    def _joint_pair(self, j, magnitude):
        """A torque (revolute) or force (prismatic) ``magnitude`` along joint j's
        axis on frame j, and its reaction on the antecedent in the antecedent's frame."""
        frame = self.robot.frame(j)
        i = frame.antecedent
        B, a = self.frames[j], sympy.Matrix(frame.axis)
        out = []
        if frame.sigma == REVOLUTE:
            out.append((B, magnitude * self._v(B, a)))
            if i != BASE or self.floating:  # a floating base is a body: the reaction works on it
                out.append((self.frames[i], -magnitude * self._v(self.frames[i], self.reaction_axis[j])))
        else:
            out.append((self.origins[j], magnitude * self._v(B, a)))
            if i != BASE or self.floating:
                # The point of the antecedent that coincides with O_j.
                P = self._coincident.get(j)
                if P is None:
                    Bi = self.frames[i]
                    P = self.origins[i].locatenew(f"O{self.robot.stems[j]}_{self.robot.stems[i]}", self.origins[j].pos_from(self.origins[i]))
                    P.set_vel(self.N, _frame_vector(Bi, self._real_speed_sum(self.JVI[j], self.VBI[j], self.u)))
                    self._coincident[j] = P
                out.append((P, -magnitude * self._v(self.frames[i], self.reaction_axis[j])))
        return out

    def _loads(self):
        robot = self.robot
        self._coincident = {}
        groups = {"torque": [], "friction": [], "gravity": [], "wrench": []}
        for k, j in enumerate(robot.joint_labels):
            gam = self.real(self.GAM[k])
            if gam != 0:
                groups["torque"] += self._joint_pair(j, gam)
            FV, FS = self.real(self._link_value(j, "FV")), self.real(self._link_value(j, "FS"))
            u = self.u[self._index[j]]
            friction = -(FV * u + FS * sympy.sign(u))
            if friction != 0:
                groups["friction"] += self._joint_pair(j, friction)
        for j in robot.links:
            if j == BASE and not self.floating:  # a fixed or moving base takes every load
                continue
            B = self.frames[j]
            M = self.real(self._link_value(j, "M"))
            # The weight M_j GV_j, named FG_j in the kinematic program.
            if M != 0 and not _is_zero(self.GV[j]):
                weight = self._vec(f"FG{{r}}_{j}", self._link_value(j, "M") * self.GV[j])
                groups["gravity"].append((self.centres[j], self._v(B, weight)))
            d = robot.dynamics[j]
            f = sympy.Matrix([d["FX"], d["FY"], d["FZ"]])
            m = sympy.Matrix([d["CX"], d["CY"], d["CZ"]])
            # The link exerts (f, m) on the environment: the environment exerts the opposite.
            if not _is_zero(f):
                groups["wrench"].append((self.origins[j], -self._v(B, f)))
            if not _is_zero(m):
                groups["wrench"].append((B, -self._v(B, m)))
        return groups

    # -------------------------------------------------------------- programs

    def _leaves(self, values, speeds=True, accelerations=True):
        """How the leaves of KanesMethod's expressions become program values:
        real twins -> the robot's or the kinematic program's symbols (through
        ``values``), ``u`` -> QP, ``u'`` -> QDP (or 0)."""
        out = {twin: values.get(plain, plain) for twin, plain in self._plain.items()}
        # The angular velocities KanesMethod carries (sum_k JW_jk u_k + WB_j)
        # are the program's W_j: one name for both.
        for j, omega in self._omega.items():
            for r in range(3):
                if not omega[r].is_Atom and speeds:
                    w = self.W[j][r]
                    out[omega[r]] = values.get(w, w)
        for k in range(self.n):
            out[self.udot[k]] = self._accelerations[k] if accelerations else sympy.S.Zero
            out[self.u[k]] = self._speeds[k] if speeds else sympy.S.Zero
        return out

    def _kinematics_needed(self, leaves):
        """The kinematic symbols the KanesMethod leaves ``leaves`` (real twins,
        angular velocity components) stand for, and every symbol their
        definitions use."""
        deps = self._kinematic_deps
        if deps is None:
            defs = dict(self.kinematics.assignments(include_dead=True))
            deps = self._kinematic_deps = {s: [x for x in e.free_symbols if x in defs] for s, e in defs.items()}
        stack = []
        for leaf in leaves:
            plain = self._plain.get(leaf)
            if plain is None:
                plain = self._omega_symbols.get(leaf)
            if plain is not None and plain in deps:
                stack.append(plain)
        needed = set()
        while stack:
            sym = stack.pop()
            if sym not in needed:
                needed.add(sym)
                stack.extend(x for x in deps[sym] if x not in needed)
        return needed

    def _program(self, outputs, *, speeds=True, finish=None, prefix="K", extra_inputs=(), chunk=None):
        """A program made of the kinematic definitions (with ``QP = 0`` when
        not ``speeds``) and of ``outputs``, a list of (name, expression of
        KanesMethod's symbols); ``finish(program, values)`` may turn the
        emitted values into the final list of (name, expression).  Pruned.

        Only the kinematic definitions the outputs use are copied (the
        leaves met by :func:`_emit` and what their definitions need)."""
        program = Program(inputs=list(self._inputs) + list(extra_inputs))
        keys = self._leaves({}, speeds=speeds, accelerations=False)

        def prepare(found):
            needed = self._kinematics_needed(found)
            # Values that are not the symbol itself (QP = 0, or a line the copy names otherwise).
            changed = {} if speeds else {v: sympy.S.Zero for v in self._speeds if isinstance(v, sympy.Symbol)}
            values = {}
            for sym, expr in self.kinematics.assignments(include_dead=True):
                if sym in needed:
                    value = values[sym] = program.assign(sym.name, expr.xreplace(changed) if changed else expr)
                    if value != sym:
                        changed[sym] = value
            return self._leaves(values, speeds=speeds, accelerations=False)

        emitted = _emit(program, [expr for _, expr in outputs], keys, prefix, chunk, prepare=prepare)
        lines = list(zip([name for name, _ in outputs], emitted))
        if finish is not None:
            lines = finish(program, lines)
        for name, expr in lines:
            program.set_output(name, expr)
        program.prune()
        return program

    def program(self, name, source="nested"):
        """The program of model ``name`` (one of :data:`MODELS`), derived once.

        Parameters
        ----------
        name : str
            ``"inverse_dynamics"``, ``"mass_matrix"``, ``"h"``, ``"gravity"``
            or ``"coriolis_matrix"``.
        source : {"nested", "kanes_method"}, optional
            ``"nested"`` (the default, what :func:`kanerobot.derive` and the
            numeric functions and code exports use): Kane's equations summed
            from the leaves to the root (docs/theory/kane.md).  ``"kanes_method"``:
            the same models read off KanesMethod's ``mass_matrix`` and
            ``forcing``, an independent path kept for cross-checks (larger
            programs).  Both serve a floating robot (the free flyer's six
            speeds first).
        """
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        store = self._source(source)
        if name not in store:
            store[name] = getattr(self, name)(source=source)
        return store[name]

    def _source(self, source):
        """The cache of programs of ``source``."""
        if source == "nested":
            return self._programs
        if source == "kanes_method":
            return self._kanes_method_programs
        raise KaneRobotError(f"unknown source {source!r}: 'nested' or 'kanes_method'")

    @property
    def nested(self):
        """The :class:`NestedKane` builder of this system's order-n programs."""
        if self._nested is None:
            self._nested = NestedKane(self.robot, self._inputs, self._output_names(), trig=self.trig)
        return self._nested

    def _names(self, prefix):
        return [f"{prefix}{suffix}" for suffix in self._suffixes]

    def _mass_matrix_entries(self):
        """``[(A<i><j>, KanesMethod.mass_matrix[i, j] + IA_i delta_ij)]``, i <= j, column by column."""
        MM = self.mass_matrix_kane
        n = self.n
        names = matrix_entry_names("A", (n, n))
        return [(names[r][c], MM[r, c] + (self.IA[r] if r == c else 0)) for c in range(n) for r in range(c + 1)]

    def _h_expressions(self):
        """``-forcing`` with the joint torques left out: ``H`` (KanesMethod's
        ``forcing = Fr - nonMM`` is Kane's equations at ``u' = 0``)."""
        forcing = self.forcing
        torques = self._symbolic(self.GAM)
        if torques is not None:
            return [-e for e in forcing.xreplace(dict.fromkeys(torques, 0))]
        torque = self.fr_group("torque")
        return [-(forcing[k] - torque[k]) for k in range(self.n)]

    def kanes_method_program(self):
        """KanesMethod's own ``mass_matrix`` and ``forcing`` as one program.

        Outputs ``MM<i><j>`` (i <= j, column by column, ``MM<i>_<j>``
        beyond 9 joints; no rotor inertia) and ``FORCING<label>`` (``Fr -
        nonMM``, the joint torques ``GAM`` included): Kane's equations are
        ``MM u' = FORCING``, or with the rotor inertias ``(MM + diag(IA)) u'
        = FORCING``.  Every expression is KanesMethod's, with the kinematic
        symbols it is made of defined before it (:attr:`kinematics`): the
        independent path the tests check the nested programs against.
        """
        if "kanes_method" not in self._kanes_method_programs:
            MM, n = self.mass_matrix_kane, self.n
            names = matrix_entry_names("MM", (n, n))
            outputs = [(names[r][c], MM[r, c]) for c in range(n) for r in range(c + 1)]
            outputs += list(zip(self._names("FORCING"), list(self.forcing)))
            self._kanes_method_programs["kanes_method"] = self._program(outputs)
        return self._kanes_method_programs["kanes_method"]

    def inverse_dynamics(self, source="nested"):
        """``GAM = -Fr_other - Fr*``, rotor inertia included: outputs ``GAM<label>``.

        Gravity, friction ``FV u + FS sign(u)``, the external wrenches ``FX
        .. CZ`` and the base motion are included, as in
        :func:`kanerobot.dynamics.newton_euler.inverse_dynamics`.  Nested
        (default): the inertia forces are formed with ``u'`` directly and
        summed from the leaves to the root (docs/theory/kane.md).  From
        KanesMethod: ``A u' + H`` with ``A`` its ``mass_matrix`` plus
        ``diag(IA)`` and ``H = -(forcing - Fr_GAM)``.
        """
        if source == "nested":
            return self.nested.generalized_forces("GAM")
        self._source(source)
        n = self.n
        entries = self._mass_matrix_entries()
        h = list(zip(self._names("H"), self._h_expressions()))
        qdd = list(self._accelerations)

        def finish(program, lines):
            A = {}
            values = dict(lines)
            names = matrix_entry_names("A", (n, n))
            for c in range(n):
                for r in range(c + 1):
                    A[r, c] = A[c, r] = values[names[r][c]]
            gam = []
            for k, label in enumerate(self._suffixes):
                total = values[f"H{label}"] + sympy.Add(*(A[k, m] * qdd[m] for m in range(n)))
                gam.append((f"GAM{label}", total))
            return gam

        return self._program(entries + h, finish=finish)

    def h(self, source="nested"):
        """Centrifugal, Coriolis, gravity, friction (and wrench, base) torques
        ``H = GAM`` at ``u' = 0``: outputs ``GAM<label>``."""
        if source == "nested":
            return self.nested.generalized_forces("GAM", accelerations=False, rotor=False)
        self._source(source)
        return self._program(list(zip(self._names("GAM"), self._h_expressions())))

    def gravity(self, source="nested"):
        """Gravity torques ``Q``: outputs ``Q<label>``.

        ``Q = -Fr_gravity`` for a fixed base (nested: from the subtrees'
        masses and first moments, docs/theory/kane.md); with a moving base, ``H``
        at ``u = 0`` without friction and wrenches (the base motion is
        kept, as in Newton-Euler's ``gravity_torques``).
        """
        if source == "nested":
            if not self._moving:
                return self.nested.gravity_forces()
            return self.nested.generalized_forces("Q", speeds=False, accelerations=False, friction=False,
                                                  rotor=False, wrench=False)
        self._source(source)
        if not self._moving:
            g = self.fr_group("gravity")
            return self._program(list(zip(self._names("Q"), [-e for e in g])), speeds=False)
        torques = self._symbolic(self.GAM)
        wrenches = self._symbolic([self.robot.dynamics[j][w] for j in self.robot.links for w in WRENCH_NAMES])
        if torques is not None and wrenches is not None:
            forcing = self.forcing.xreplace(dict.fromkeys(torques + wrenches, 0))
            Q = [-e for e in forcing]
        else:
            g = self.fr_group("gravity")
            Q = [-(g[k] + self.frstar[k]) for k in range(self.n)]
        return self._program(list(zip(self._names("Q"), Q)), speeds=False)

    def mass_matrix(self, source="nested"):
        """Inertia matrix ``A``, the coefficients of ``u'`` in ``-Fr*`` plus
        ``diag(IA)``: outputs ``A<i><j>``, i <= j, column by column
        (``A<i>_<j>`` beyond 9 joints).  Nested: from the subtrees'
        inertias (docs/theory/kane.md); from KanesMethod: its ``mass_matrix``."""
        if source == "nested":
            return self.nested.mass_matrix()
        self._source(source)
        return self._program(self._mass_matrix_entries())

    def velocity_forces(self, source="nested"):
        """``h_vel(u) = -Fr*`` at ``u' = 0`` with the base at rest:
        homogeneous quadratic in ``u``; outputs ``HV<label>`` (named
        assignments, which forward-mode differentiation takes line by
        line).  From KanesMethod it is ``nonMM = Fr - forcing``."""
        if source == "nested":
            return self.nested.generalized_forces("HV", accelerations=False, gravity=False, friction=False,
                                                  rotor=False, wrench=False, base=False, named=True)
        self._source(source)
        if self._moving:
            if self._fixed is None:
                robot = self.robot
                base = Base(Z=robot.base.Z, G=robot.base.G)
                self._fixed = KaneSystem(dataclasses.replace(robot, base=base), trig=self.trig)
            return self._fixed.velocity_forces(source)
        nonmm = self.fr - self.forcing
        outputs = list(zip(self._names("HV"), list(nonmm)))
        if self.floating:
            # The Coriolis matrix of a floating base needs A too (coriolis.half_a_s).
            outputs += self._mass_matrix_entries()

        def finish(program, lines):
            # Outputs named as assignments: ForwardMode differentiates assignments line by line.
            return [(name, program.assign(name, expr)) for name, expr in lines]

        return self._program(outputs, finish=finish)

    def coriolis_matrix(self, source="nested"):
        """Coriolis matrix by the seed's ``getAC`` rule, ``C_ij = 1/2 dh_vel,i/du_j``:
        outputs ``C<i><j>`` row by row (``C<i>_<j>`` beyond 9 joints).

        Computed by forward-mode differentiation of the :meth:`velocity_forces`
        program with respect to each ``QP`` (:mod:`kanerobot.symbolic.derivative`),
        each seeded with 1/2 (the derivative along it is then ``1/2 dh_vel/du_j``
        itself, with no product per entry).
        """
        hv = self.velocity_forces(source)
        if not self.floating:
            return coriolis_from_velocity_forces(hv, self.robot)
        # Quasi-velocities: getAC lacks the half of A S that makes A' - 2C skew.
        n, nu = self.n, list(BASE_VELOCITY) + list(self.robot.qd)
        names = matrix_entry_names("A", (n, n))

        def extra(fm):
            if source == "nested":  # A joins the derivative program, which does not differentiate it
                entries = fm.target.splice(self.program("mass_matrix"))
            else:  # KanesMethod's velocity_forces carries A among its outputs
                entries = {name: fm.value(hv.outputs[name]) for row in names for name in row if name in hv.outputs}
            A = sympy.Matrix(n, n, lambda i, j: entries.get(names[min(i, j)][max(i, j)], sympy.S.Zero))
            return half_a_s(A, nu)

        return coriolis_from_velocity_forces(hv, self.robot, speeds=nu, rows=self._names("HV"), extra=extra)

    # ------------------------------------------------------------- RHS terms

    def rhs_terms(self, frames=None):
        """The right-hand side of ``A u' + C u + Q = F`` split as the seed's ``kanesRHS``.

        Parameters
        ----------
        frames : sequence of str, optional
            Frames at whose origin the environment applies a force and a
            moment, both expressed in that frame (default: the leaves of
            the tree, ``('10l', '10r')`` for Krang).

        Returns
        -------
        KaneRHS
            See :class:`KaneRHS`.  Every term is ``Fr`` of its loads, formed
            by a KanesMethod.
        """
        robot = self.robot
        if self.floating:
            raise KaneRobotError(f"robot {robot.name} has a floating base: rhs_terms is for a fixed or moving base")
        if frames is None:
            frames = [f.label for f in robot.frames if not robot.children(f.label)]
        frames = [str(f) for f in frames]
        for f in frames:
            robot.frame(f)  # raises for an unknown label
        taken = {s.name for s in self._inputs}
        symbols, programs, jacobians = {}, {}, {}
        n = self.n
        torque = self.fr_group("torque")
        programs["a"] = self._program(list(zip(self._names("a"), list(torque))), speeds=False)
        names_v = matrix_entry_names("JVT", (n, 3))
        names_w = matrix_entry_names("JWT", (n, 3))
        for m, label in enumerate(frames):
            F = sympy.Matrix([_free_symbol(f"FE{c}{self.robot.stems[label]}", taken) for c in "XYZ"])
            T = sympy.Matrix([_free_symbol(f"TE{c}{self.robot.stems[label]}", taken) for c in "XYZ"])
            symbols[label] = (F, T)
            B, O = self.frames[label], self.origins[label]
            bf = self.generalized_active_forces([(O, self._v(B, F))])
            bm = self.generalized_active_forces([(B, self._v(B, T))])
            programs[f"b{2 * m + 1}"] = self._program(
                list(zip(self._names(f"b{2 * m + 1}_"), list(bf))), speeds=False, extra_inputs=list(F)
            )
            programs[f"b{2 * m + 2}"] = self._program(
                list(zip(self._names(f"b{2 * m + 2}_"), list(bm))), speeds=False, extra_inputs=list(T)
            )
            entries = []
            for r in range(n):
                for c in range(3):
                    entries.append((names_v[r][c], sympy.diff(bf[r], self.real(F[c]))))
            for r in range(n):
                for c in range(3):
                    entries.append((names_w[r][c], sympy.diff(bm[r], self.real(T[c]))))
            jacobians[label] = self._program(entries, speeds=False)
        gravity = self.fr_group("gravity")
        programs["c"] = self._program(list(zip(self._names("c"), list(gravity))), speeds=False)
        return KaneRHS(frames=tuple(frames), a=programs["a"], b={k: v for k, v in programs.items() if k.startswith("b")},
                       c=programs["c"], jacobians=jacobians, wrench_symbols=symbols)


def _free_symbol(name, taken):
    if name in taken:
        raise KaneRobotError(f"the robot already has a symbol {name}: rename it to use rhs_terms")
    return sympy.Symbol(name)


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


# ---------------------------------------------------------------------------
# Kane's equations summed from the leaves to the root
# ---------------------------------------------------------------------------


def _sigmas(frame):
    """``(sigma_j, sigmabar_j)``: (1, 0) for a prismatic joint, (0, 1) for a revolute one, (0, 0) for a fixed frame."""
    return int(frame.sigma == PRISMATIC), int(frame.sigma == REVOLUTE)


# Small vector algebra on tuples of sympy expressions (sympy's Matrix costs more
# than the arithmetic on 3-vectors); zeros are skipped, sums are made at once.


def _total(terms):
    terms = [t for t in terms if t != 0]
    return sympy.Add(*terms) if terms else sympy.S.Zero


def _mv(A, v):
    """``A v``, A a 3x3 as rows."""
    return tuple(_total(A[r][c] * v[c] for c in range(3) if A[r][c] != 0 and v[c] != 0) for r in range(3))


def _mtv(A, v):
    """``A^T v``, A a 3x3 as rows."""
    return tuple(_total(A[c][r] * v[c] for c in range(3) if A[c][r] != 0 and v[c] != 0) for r in range(3))


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return _total(x * y for x, y in zip(a, b) if x != 0 and y != 0)


def _add(*vectors):
    return tuple(_total(v[r] for v in vectors) for r in range(3))


def _scale(s, v):
    return tuple(s * x for x in v) if s != 0 else (sympy.S.Zero,) * 3


def _rows(M):
    """A 3x3 sympy Matrix as a tuple of rows."""
    return tuple(tuple(M[r, c] for c in range(3)) for r in range(3))


def _column(v):
    return tuple(sympy.sympify(x) for x in v)


#: The names of NestedKane's A (module notes): subtree inertias ``JT, MST, MT``, ``MSA`` (``iA_j MST_j``),
#: ``PM``, ``KJ, KJA`` and ``PT`` (eq. 28), column forces and moments ``FC, NC, NCA``.
_SUBTREE_NAMES = dict(
    NAMES,
    J="JT{r}{c}_{j}",
    MS="MST{r}_{j}",
    M="MT{j}",
    AS="MSA{r}_{j}",
    PM="PM{r}_{j}",
    rotation="K",
    transport="PT{r}{c}_{j}",
    E="FC{r}_{i}_{j}",
    N="NC{r}_{i}_{j}",
    NA="NCA{r}_{i}_{j}",
)


class NestedKane:
    """Kane's equations of a tree summed from the leaves to the root, as programs.

    The order-n evaluation of docs/theory/kane.md: the generalized forces are
    the kinematic recursion K1-K5, the forces of each body moved to its frame
    origin (B1-B3), their sums over the subtrees (S1-S2) and one projection
    on the joint axis per generalized speed (E1); the gravity torques and
    the inertia matrix sum the subtrees' masses, first moments and inertias
    (G1-G3, M1-M4).  See docs/theory/kane.md for the derivation from Kane's
    sums and for the names of the intermediate variables.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot (see :func:`check_supported`).
    inputs : sequence of sympy.Symbol
        The inputs of every program, in order.
    reserved : iterable of str, optional
        Names no intermediate variable may take (the outputs' names).
    trig : bool, optional
        Apply the compound-angle rules (``C23``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.common import program_inputs
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> nested = NestedKane(arm, program_inputs(arm, [arm.q, arm.qd, arm.qdd], base=True))
    >>> print(nested.mass_matrix())
    C2 = cos(th2)
    S2 = sin(th2)
    MSA1_2 = C2*MX2 - MY2*S2
    PM1_2 = L1*M2
    NC3_1_2 = L1*MSA1_2 + ZZ2
    PT22_2 = L1*(2*MSA1_2 + PM1_2)
    JT33_1 = PT22_2 + ZZ1 + ZZ2
    A11 = IA1 + JT33_1
    A12 = NC3_1_2
    A22 = IA2 + ZZ2
    """

    def __init__(self, robot, inputs, reserved=(), trig=True):
        check_supported(robot)
        self.robot = robot
        self.inputs = list(inputs)
        self.reserved = {str(name) for name in reserved}
        self.trig = bool(trig)

    # ------------------------------------------------------------ helpers

    def _start(self):
        """A new program with the frame placements ``iA_j``, ``iP_j`` (C, S, RA, PA)."""
        self._p = Program(inputs=self.inputs, reserved=self.reserved, trig=self.trig)
        self._placements = frame_placements(self.robot, self._p)
        self._A = {j: _rows(A) for j, (A, _) in self._placements.items()}
        self._P = {j: _column(P) for j, (_, P) in self._placements.items()}
        return self._p

    def _vec(self, name, j, v):
        """The components of ``v`` assigned as ``<name><r>_<j>``, r = 1, 2, ..."""
        assign = self._p.assign
        return tuple(assign(f"{name}{r + 1}_{self.robot.stems[j]}", x) for r, x in enumerate(v))

    def _recorder(self, j):
        """``record(name, value)`` of :func:`~kanerobot.kinematics.forward_step`: vectors
        named ``<name><r>_<j>``, matrices ``<name><r><c>_<j>``."""

        def record(name, value):
            if value.cols == 1:
                return sympy.Matrix(self._vec(name, j, value))
            assign = self._p.assign
            return sympy.Matrix(3, 3, lambda r, c: assign(f"{name}{r + 1}{c + 1}_{self.robot.stems[j]}", value[r, c]))

        return record

    def _euler_moment(self, j, J, wd, U, DV, named=False):
        """``J_j alpha_j + w_j x J_j w_j`` from ``U_j`` (rows), the products ``DV`` of w_j's components
        and their differences DD (B3): five products per component instead of the 24 of
        ``J alpha + w x (J w)``; the differences are named (``DD``) when ``named``."""
        xx, xy, xz, yy, yz, zz = DV
        XX, XY, XZ, YY, YZ, ZZ = J[0][0], J[0][1], J[0][2], J[1][1], J[1][2], J[2][2]
        JD = [self._p.assign(f"JD{r + 1}_{self.robot.stems[j]}", d) for r, d in enumerate((ZZ - YY, XX - ZZ, YY - XX))]
        DD = (yy - zz, zz - xx, xx - yy)
        if named:
            DD = [self._p.assign(f"DD{r + 1}_{self.robot.stems[j]}", d) for r, d in enumerate(DD)]
        return (
            XX * wd[0] - XY * U[2][0] + XZ * U[1][0] + YZ * DD[0] + JD[0] * yz,
            YY * wd[1] + XY * U[2][1] - YZ * U[0][1] + XZ * DD[1] + JD[1] * xz,
            ZZ * wd[2] - XZ * U[1][2] + YZ * U[0][2] + XY * DD[2] + JD[2] * xy,
        )

    def _inertia(self, j):
        """``(J_j, MS_j, M_j)`` as rows, column and scalar (zeros for a frame without a link)."""
        J, MS, M = link_inertia(self.robot, j)
        return _rows(J), _column(MS), sympy.sympify(M)

    def _parameter(self, j, name, flag=True):
        return link_parameter(self.robot, j, name) if flag else sympy.S.Zero

    # ------------------------------------------------------------ programs

    def generalized_forces(self, output, *, speeds=True, accelerations=True, gravity=True, friction=True,
                           rotor=True, wrench=True, base=True, named=False):
        """``-(F_r + F*_r)`` without the joint torques: the torques that satisfy Kane's equations.

        Parameters
        ----------
        output : str
            Prefix of the outputs, ``<output><label>`` per joint.
        speeds, accelerations : bool, optional
            Use ``QP`` and ``QDP``; False sets them to 0.
        gravity, friction, rotor, wrench : bool, optional
            Include the weights, the friction ``FV u + FS sign(u)``, the
            rotor inertias ``IA u'`` and the environment's wrenches ``FX ..
            CZ``.
        base : bool, optional
            Include the base motion ``W0, WP0, VP0``; False puts the base at rest.
        named : bool, optional
            Name each body's force and moment (``FB``, ``NB``, ``DD``) even
            where they are used once: a program to differentiate then takes
            them line by line, once per speed (the Coriolis matrix); else
            they are written where they are used (fewer lines).

        Returns
        -------
        Program
            Pruned.
        """
        robot = self.robot
        program = self._start()
        A, P = self._A, self._P
        free = is_free(robot)
        labels = robot.joint_labels
        QP = {label: sympy.sympify(v) if speeds else sympy.S.Zero for label, v in zip(labels, robot.qd)}
        QDP = {label: sympy.sympify(v) if accelerations else sympy.S.Zero for label, v in zip(labels, robot.qdd)}
        # Gravity is an active force, the weight of each body (K5), not a base acceleration.
        w0, wdot0, Vdot0 = root_motion(program, robot, qd=speeds, qdd=accelerations, gravity=False, base=base)
        motion = {BASE: root_link_motion(w0, wdot0, Vdot0, self._recorder(BASE))}
        zero = (sympy.S.Zero,) * 3
        GV = {BASE: self._vec("GV", BASE, (_column(gravity_in_base(program, robot)) if free else _column(robot.base.G))
                              if gravity else zero)}
        FB, NB = {}, {}

        def body_forces(j):
            """Forces of body j about its origin (B1-B3)."""
            m = motion[j]
            U = _rows(m.U)
            J, MS, M = self._inertia(j)
            AG = self._vec("AG", j, _add(_column(m.Vdot), _scale(-1, GV[j])))
            fe = tuple(self._parameter(j, name, wrench) for name in ("FX", "FY", "FZ"))
            me = tuple(self._parameter(j, name, wrench) for name in ("CX", "CY", "CZ"))
            FB[j] = _add(_scale(M, AG), _mv(U, MS), fe)                                                 # B1
            NB[j] = self._euler_moment(j, J, _column(m.wdot), U, _column(m.DV), named)                  # B3
            if named:
                FB[j], NB[j] = self._vec("FB", j, FB[j]), self._vec("NB", j, NB[j])
            NB[j] = _add(NB[j], _cross(MS, AG), me)                                                     # B2

        # Kinematics (K1-K4: kinematics.forward_step; K5) and the
        # forces of each body about its origin (B1-B3), base to leaves; link 0 is a body on a free flyer.
        if free:
            body_forces(BASE)
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            sigma_a, sigmabar_a = motion_parts(frame)
            qd, qdd = QP.get(j, sympy.S.Zero), QDP.get(j, sympy.S.Zero)
            iA_j, iP_j = self._placements[j]
            motion[j] = forward_step(motion[i], iA_j.T, iP_j, sigma_a, sigmabar_a, qd, qdd, self._recorder(j))
            GV[j] = self._vec("GV", j, _mtv(A[j], GV[i]))                                                    # K5
            body_forces(j)
        # Sums over the subtrees (S1-S2), leaves to base, and the generalized forces (E1).
        FT, NT, FTA, out = {}, {}, {}, {}

        def subtree_forces(j):
            kids = robot.children(j)
            sums = subtree_wrench(FB[j], NB[j], [(self._placements[k][0], P[k], FTA[k], NT[k]) for k in kids])
            FT[j], NT[j] = self._vec("FT", j, sums[0]), self._vec("NT", j, sums[1])                  # S1, S2

        for frame in reversed(robot.frames):
            j = frame.label
            subtree_forces(j)
            FTA[j] = self._vec("FTA", j, _mv(A[j], FT[j]))
            if frame.is_joint:
                a = _column(frame.axis)
                sigma, sigmabar = _sigmas(frame)
                qd, qdd = QP[j], QDP[j]
                out[j] = (
                    _dot(_add(_scale(sigma, FT[j]), _scale(sigmabar, NT[j])), a)                                # E1
                    + self._parameter(j, "IA", rotor) * qdd
                    + self._parameter(j, "FV", friction) * qd
                    + self._parameter(j, "FS", friction) * sympy.sign(qd)
                )
        if free:  # the free flyer's partial velocities are the unit twists of frame 0: E1 is the whole wrench
            subtree_forces(BASE)
            for name, value in zip(BASE_FORCE_NAMES, FT[BASE] + NT[BASE]):
                program.set_output(output + name, value)
        for j in robot.joint_labels:
            program.set_output(f"{output}{self.robot.stems[j]}", out[j])
        program.prune()
        return program

    def gravity_forces(self):
        """``Q_r = -F_r`` of the weights alone (at rest): outputs ``Q<label>``.

        From the subtrees' masses ``MT`` and first moments ``MST`` (G1-G3 of
        docs/theory/kane.md) and the gravity ``GV`` in each frame (K5).  On a
        free flyer the sums reach link 0, whose partial velocities are the
        unit twists of frame 0: ``Q_0 = -[MT_0 GV_0; MST_0 x GV_0]``
        (outputs ``QFX0 .. QCZ0`` first), with ``GV_0 = 0R_w G``.
        """
        robot = self.robot
        program = self._start()
        A, P = self._A, self._P
        free = is_free(robot)
        GV = {BASE: self._vec("GV", BASE, _column(gravity_in_base(program, robot) if free else robot.base.G))}
        for frame in robot.frames:
            GV[frame.label] = self._vec("GV", frame.label, _mtv(A[frame.label], GV[frame.antecedent]))         # K5
        MT, MST, Q = {}, {}, {}

        def subtree_mass(j):
            _, MS, M = self._inertia(j)
            for k in robot.children(j):
                MS = _add(MS, self._vec("MSA", k, _mv(A[k], MST[k])), self._vec("PM", k, _scale(MT[k], P[k])))  # G2
                M = M + MT[k]                                                                                  # G1
            MT[j] = program.assign(f"MT{self.robot.stems[j]}", M)
            MST[j] = self._vec("MST", j, MS)

        for frame in reversed(robot.frames):
            j = frame.label
            subtree_mass(j)
            if frame.is_joint:
                sigma, sigmabar = _sigmas(frame)
                moment = _add(_scale(sigma * MT[j], GV[j]), _scale(sigmabar, _cross(MST[j], GV[j])))
                Q[j] = -_dot(moment, _column(frame.axis))                                                     # G3
        if free:
            subtree_mass(BASE)
            base = _scale(-MT[BASE], GV[BASE]) + _scale(-1, _cross(MST[BASE], GV[BASE]))                      # G3
            for name, value in zip(BASE_FORCE_NAMES, base):
                program.set_output(f"Q{name}", value)
        for j in robot.joint_labels:
            program.set_output(f"Q{self.robot.stems[j]}", Q[j])
        program.prune()
        return program

    def mass_matrix(self, rotor=True):
        """``A`` from the subtrees' inertias (M1-M4 of docs/theory/kane.md): outputs ``A<i><j>``, i <= j.

        On a free flyer the sums reach link 0: its six speeds come first,
        their block is the spatial inertia of the whole robot about O_0,
        ``[MT_0 I, -hat(MST_0); hat(MST_0), JT_0]``, and each column's
        inertia forces are carried down to link 0 for the base rows.

        Parameters
        ----------
        rotor : bool, optional
            Add ``IA_j`` to ``A_jj``.
        """
        robot = self.robot
        program = self._start()
        free = is_free(robot)
        columns = {}  # (row, column) -> entry; a row is a joint label, or (BASE, r) for the base's six
        # The composite links and columns of composite.mass_matrix (M1-M4), under this module's names;
        # column j as soon as subtree j is complete: its first step reuses the subtree's first moment
        # and inertia rotated into frame a(j) for M2 (the program names each distinct expression once).
        for j, *subtree in composite_links(program, robot, self._placements, root=free, names=_SUBTREE_NAMES):
            if j == BASE:  # the whole robot's spatial inertia about O_0 (M1-M2 at link 0)
                J0, MS0, M0 = subtree
                block = sympy.Matrix.vstack(sympy.Matrix.hstack(M0 * sympy.eye(3), -hat(MS0)), sympy.Matrix.hstack(hat(MS0), J0))
                columns.update((((BASE, r), (BASE, c)), block[r, c]) for r in range(6) for c in range(r, 6))
                continue
            if not robot.frame(j).is_joint:
                continue
            for i, f, n in column_wrenches(program, robot, self._placements, j, subtree, root=free, names=_SUBTREE_NAMES):
                if i == BASE:  # the free flyer: every component of the wrench is a row
                    columns.update((((BASE, r), j), x) for r, x in enumerate(list(f) + list(n)))
                else:
                    linear, angular = motion_parts(robot.frame(i))  # sigma_i a_i, sigmabar_i a_i
                    columns[i, j] = linear.dot(f) + angular.dot(n)
            columns[j, j] += self._parameter(j, "IA", rotor)
        rows = ([(BASE, r) for r in range(6)] if free else []) + list(robot.joint_labels)
        names = matrix_entry_names("A", (len(rows), len(rows)))
        for c, j in enumerate(rows):
            for r, i in enumerate(rows[: c + 1]):
                program.set_output(names[r][c], columns.get((i, j), sympy.S.Zero))
        program.prune()
        return program


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


# ---------------------------------------------------------------------------
# Emitting expressions into a program
# ---------------------------------------------------------------------------


def _emit(program, exprs, leaves, prefix, chunk=None, prepare=None):
    """``exprs`` rebuilt as program values, every repeated subexpression named.

    One pass over the expression DAG: leaves are mapped by ``leaves`` (real
    twins, dynamicsymbols), every distinct node is rebuilt once (so a
    substituted zero cancels what it multiplies), and a node met more than
    once is assigned to ``program`` as ``<prefix><k>``.  Linear in the size
    of the DAG (neither ``xreplace`` nor ``sympy.cse`` are: they rebuild or
    compare every occurrence).  With ``chunk``, sums of more terms are
    split into named partial sums of ``chunk`` terms (same operations,
    shorter lines; the Coriolis matrix no longer asks for them, since
    forward-mode differentiation takes sums and products apart node by
    node and remembers every node's derivative).  With ``prepare``, the
    leaves met are passed to ``prepare(found)`` once the DAG is walked, and
    the mapping it returns (the keys of ``leaves`` at least) replaces
    ``leaves``: the caller can then define in ``program`` only what they need.
    """
    exprs = [sympy.sympify(e) for e in exprs]
    counts = {}
    found = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if e in leaves:
            found.add(e)
            continue
        if e.is_Atom:
            continue
        seen = counts.get(e, 0)
        counts[e] = seen + 1
        if not seen:
            stack.extend(e.args)
    if prepare is not None:
        leaves = prepare(found)
    memo = {}
    number = [0]

    def build(e):
        if e in leaves:
            return leaves[e]
        if e.is_Atom:
            return e
        done = memo.get(e)
        if done is not None:
            return done
        args = [build(a) for a in e.args]
        value = e.func(*args)
        while chunk and value.is_Add and len(value.args) > chunk:
            terms = value.args
            parts = []
            for start in range(0, len(terms), chunk):
                group = sympy.Add(*terms[start:start + chunk])
                if len(terms) - start > 1:
                    number[0] += 1
                    group = program.assign(f"{prefix}{number[0]}", group)
                parts.append(group)
            value = sympy.Add(*parts)
        if counts.get(e, 0) > 1 and not is_trivial(value):
            number[0] += 1
            value = program.assign(f"{prefix}{number[0]}", value)
        memo[e] = value
        return value

    return [build(e) for e in exprs]


# ---------------------------------------------------------------------------
# Module-level functions (one model each)
# ---------------------------------------------------------------------------


def inverse_dynamics(robot):
    """:meth:`KaneSystem.inverse_dynamics` of a fresh system."""
    return KaneSystem(robot).inverse_dynamics()


def coriolis_gravity(robot):
    """:meth:`KaneSystem.h` of a fresh system."""
    return KaneSystem(robot).h()


def gravity_torques(robot):
    """:meth:`KaneSystem.gravity` of a fresh system."""
    return KaneSystem(robot).gravity()


def mass_matrix(robot):
    """:meth:`KaneSystem.mass_matrix` of a fresh system."""
    return KaneSystem(robot).mass_matrix()


def coriolis_matrix(robot):
    """:meth:`KaneSystem.coriolis_matrix` of a fresh system."""
    return KaneSystem(robot).coriolis_matrix()


def rhs_terms(robot, frames=None):
    """:meth:`KaneSystem.rhs_terms` of a fresh system."""
    return KaneSystem(robot).rhs_terms(frames)


# Every engine module names its models as kanerobot.dynamics.model.MODELS does; the
# first names above stay for existing code.
h = coriolis_gravity
gravity = gravity_torques


# ---------------------------------------------------------------------------
# The textbook build, for benchmarks and cross-checks
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class NaiveKane:
    """What :func:`naive_kanes_method` builds.

    Attributes
    ----------
    kanes_method : KanesMethod
        After ``kanes_equations(bodies, loads)``.
    N : ReferenceFrame
        The base frame 0 (inertial).
    frames : dict str -> ReferenceFrame
    bodies, loads : list
    q, u : list of sympy Function
        ``dynamicsymbols`` in ``robot.joint_labels`` order.
    """

    kanes_method: KanesMethod
    N: ReferenceFrame
    frames: dict
    bodies: list
    loads: list
    q: list
    u: list

    def substitutions(self, robot):
        """``{q(t): q, u(t): QP, u'(t): QDP}``: the robot's symbols for the dynamicsymbols."""
        t = dynamicsymbols._t
        out = {}
        for qt, ut, q, qd, qdd in zip(self.q, self.u, robot.q, robot.qd, robot.qdd):
            out[ut.diff(t)] = qdd
            out[qt.diff(t)] = qd
            out[qt] = q
            out[ut] = qd
        return out


def naive_kanes_method(robot):
    """Kane's equations the textbook way, on the same bodies and loads as :class:`KaneSystem`.

    Frames are oriented link by link (``orient_explicit`` with the robot's
    ``iA_j(q(t))``), origins located with ``locatenew`` and given their
    velocities by ``v2pt_theory`` (``v1pt_theory`` after a prismatic joint),
    centres of mass at ``MS / M``, rigid bodies with the inertia ``XX .. ZZ``
    about the frame origins, and the loads (gravity in frame 0, joint torques
    ``GAM`` and their reactions, friction, external wrenches); sympy derives
    every velocity and acceleration and ``KanesMethod.kanes_equations`` does
    the rest, with no intermediate variables.  This is the baseline of
    ``benchmarks/kane_vs_naive.py`` and a cross-check for small robots: its
    expressions grow about threefold per link (an RX-90 takes seconds, Krang
    does not finish in useful time).

    Rotor inertias ``IA`` are not part of it (``mass_matrix`` has no
    ``diag(IA)``).  Fixed base only.

    Returns
    -------
    NaiveKane
    """
    check_supported(robot)
    if _moving_base(robot):
        raise KaneRobotError(f"naive_kanes_method: robot {robot.name} has a moving base; only a fixed base is handled")
    labels = robot.joint_labels
    symbols = list(robot.q)
    q = [dynamicsymbols(str(x)) for x in symbols]
    u = [dynamicsymbols(f"u{robot.stems[label]}") for label in labels]
    index = {label: k for k, label in enumerate(labels)}
    to_time = dict(zip(symbols, q))
    N = ReferenceFrame("N")
    O = Point("O0")
    O.set_vel(N, 0)
    frames, points = {BASE: N}, {BASE: O}
    bodies = []
    loads = []
    G = sympy.Matrix(robot.base.G)
    for frame in robot.frames:
        j, i = frame.label, frame.antecedent
        T = sympy.Matrix(frame.transform()).xreplace(to_time)
        parent = frames[i]
        B = ReferenceFrame(f"F{robot.stems[j]}")
        B.orient_explicit(parent, T[:3, :3])
        P = points[i].locatenew(f"O{robot.stems[j]}", _vector(parent, T[:3, 3]))
        if frame.sigma == PRISMATIC:
            P.set_vel(parent, P.pos_from(points[i]).dt(parent))
            P.v1pt_theory(points[i], N, parent)
        else:
            P.v2pt_theory(points[i], N, parent)
        frames[j], points[j] = B, P
        if j in robot.links:
            d = robot.dynamics[j]
            M = sympy.sympify(d["M"])
            MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
            c = MS / M if M != 0 else sympy.zeros(3, 1)
            C = P.locatenew(f"G{robot.stems[j]}", _vector(B, c))
            C.v2pt_theory(P, N, B)
            I_O = inertia(B, d["XX"], d["YY"], d["ZZ"], d["XY"], d["YZ"], d["XZ"])
            bodies.append(RigidBody(f"B{robot.stems[j]}", C, B, M, (I_O, P)))
            if M != 0 and not _is_zero(G):
                loads.append((C, M * _vector(N, G)))
            f = sympy.Matrix([d["FX"], d["FY"], d["FZ"]])
            m = sympy.Matrix([d["CX"], d["CY"], d["CZ"]])
            if not _is_zero(f):
                loads.append((P, -_vector(B, f)))
            if not _is_zero(m):
                loads.append((B, -_vector(B, m)))
        if frame.is_joint:
            k = index[j]
            link = robot.dynamics.get(j, {})
            FV, FS = sympy.sympify(link.get("FV", 0)), sympy.sympify(link.get("FS", 0))
            magnitude = robot.joint_parameters[j]["GAM"] - FV * u[k] - FS * sympy.sign(u[k])
            axis = _vector(B, sympy.Matrix(frame.axis))
            if frame.sigma == REVOLUTE:
                loads.append((B, magnitude * axis))
                if i != BASE:
                    loads.append((parent, -magnitude * axis))
            else:
                loads.append((P, magnitude * axis))
                if i != BASE:
                    # The point of the antecedent that coincides with O_j.
                    Pi = points[i].locatenew(f"O{robot.stems[j]}_{robot.stems[i]}", P.pos_from(points[i]))
                    Pi.v2pt_theory(points[i], N, parent)
                    loads.append((Pi, -magnitude * axis))
    km = KanesMethod(N, q, u, kd_eqs=_kd_equations(q, u))
    km.kanes_equations(bodies, loads)
    return NaiveKane(km, N, frames, bodies, loads, q, u)
