"""Kane's method on :mod:`sympy.physics.mechanics`, kept small by body-frame kinematics.

:class:`KaneSystem` turns a robot (serial or tree, base fixed or moving with
a known motion) into the objects a sympy user works with: a
:class:`~sympy.physics.vector.ReferenceFrame` per frame, a
:class:`~sympy.physics.vector.Point` per origin and centre of mass, a
:class:`~sympy.physics.mechanics.RigidBody` per link, the loads, and a
:class:`~sympy.physics.mechanics.KanesMethod` that forms the generalized
active forces ``Fr`` and the generalized inertia forces ``Fr*`` from the
partial velocities.  The dynamic models are then read off KanesMethod's
results as :class:`~kanerobot.symbolic.Program` objects with the output
names of the Newton-Euler engine, so that the engines are interchangeable.

Why it scales
-------------
Naive KanesMethod (:func:`naive_kanes_method`) orients the frames link by
link and lets sympy find velocities and accelerations: every vector is then
a function of all the joint angles, dot products express one frame in
another, and the expressions grow about threefold per link.  Here each body
receives its kinematics *in its own frame*, as vectors whose components are
linear in the speeds ``u`` and their derivatives ``u'``::

    w_j  = sum_k JW_jk u_k + WB_j        alpha_j = sum_k JW_jk u'_k + WPB_j
    v_Oj = sum_k JV_jk u_k + VB_j        a_Oj    = sum_k JV_jk u'_k + VPB_j
    v_Gj = sum_k JG_jk u_k + VGB_j       a_Gj    = sum_k JG_jk u'_k + GB_j

(``ReferenceFrame.set_ang_vel``, ``set_ang_acc``, ``Point.set_vel``,
``set_acc``).  The coefficients are *symbols* of an intermediate program
(:attr:`KaneSystem.kinematics`) computed by the kinematic recursion of
SYMORO+ (eqs 6-10), in frame j (i its antecedent)::

    JW_jk = jA_i JW_ik                  JV_jk = jA_i (JV_ik + JW_ik x iP_j)
    JW_jj = sigmabar_j a_j              JV_jj = sigma_j a_j
    JG_jk = JV_jk + JW_jk x c_j         c_j = MS_j / M_j  (CG; 0 when M_j = 0)
    IG_j = J_j - M_j (c_j.c_j E - c_j c_j^T) = J_j - (MS_j.c_j) E + MS_j c_j^T:
        the central inertia, J_j the inertia XX..ZZ about the origin
    WB, VB: the velocities due to the base motion alone
    W_j = sum_k JW_jk QP_k + WB_j       (the angular velocity, one name
                                         for the program and for KanesMethod)
    WPB, VPB, GB: the bias accelerations (eqs 8 and 10 with qdd = 0)
    GV_j = jA_i GV_i, GV_0 = G: gravity in frame j; FG_j = M_j GV_j

The loads are given in the frame of the body they act on too (the weight
``FG_j`` at the centre of mass, the joint torque ``GAM_j`` along
``a_j`` and its reaction along ``iA_j a_j`` in the antecedent's frame, the
friction ``-(FV_j u_j + FS_j sign(u_j))`` likewise, the external wrench
``-(FX .. CZ)`` at the origin).  The partial velocities KanesMethod takes
(``Vector.diff(u_k, N, var_in_dcm=False)``) are then the coefficient
vectors, and every dot product it forms (``partial . force``,
``partial . (M a_G)``, ``partial . (I alpha + w x I w)``) pairs two vectors
of one frame: three products of symbols, never a rotation.  The generalized
forces stay sums of short products of intermediate symbols.

The derivation stays Kane's: ``Fr`` is the sum over loads of partial
velocity dot force, ``Fr*`` the sum over bodies of partial velocities dot
the inertia forces ``-M a_G`` and torques ``-(I alpha + w x I w)`` about the
centre of mass, both formed by :class:`KanesMethod`
(``kanes_equations``, ``mass_matrix``, ``forcing``).  Nothing is
simplified or expanded.  A program is the kinematic definitions followed by
KanesMethod's entries, with every repeated subexpression named by
:meth:`Program.assign <kanerobot.symbolic.Program.assign>` in one pass over
the expression DAG (:func:`_emit`), while dynamicsymbols become the robot's
symbols.

A few details keep sympy fast: the symbols of the mechanics objects are
real twins of the robot's (``Symbol(name, real=True)``,
:attr:`KaneSystem.real_symbols`; sympy's assumptions then settle at once);
the frames are oriented on their antecedents (``N.dcm(F6)`` is the robot's
0A6) through direction cosines only, since angular velocities are all set
relative to N; each rigid body is given its inertia as the central inertia
``IG_j`` (the inertia ``XX..ZZ`` about the origin moved to the centre of
mass, in intermediate symbols: ``RigidBody.parallel_axis`` gives back
``XX..ZZ``), so that sympy need not convert it with dyadic products; the
vectors and inertia dyadics are made from their components at once.
KanesMethod's own work (``kanes_equations``) is then most of the time.

On one machine (CPU time, best of 3, ``benchmarks/kane_vs_naive.py``):
naive KanesMethod on the RX-90 needs about 3.8 s; the RX-90 system (Kane's
equations, mass matrix and forcing, what naive computes) about 0.7 s, and
with its A, C, Q and inverse dynamics programs about 0.95 s; Krang's (17
DOF) system with A, C and Q about 6.5 s.

Models
------
With ``Fr = Fr_GAM + Fr_other`` (the joint torques, and the rest: gravity,
friction, external wrenches), ``Fr_GAM = GAM`` (seed 001, eq. 15) and the
rotor inertia ``IA_j`` added to the generalized inertia forces as
``-IA_j u'_j``, Kane's equations ``Fr + Fr* = 0`` give::

    GAM = -Fr_other - Fr* = A u' + H               inverse_dynamics()
    A   = KanesMethod.mass_matrix + diag(IA)       mass_matrix()
    H   = -(forcing - Fr_GAM)   (GAM at u' = 0)    h()
    Q   = -Fr_gravity  (fixed base)                gravity()
    C_ij = 1/2 d h_vel,i / du_j                    coriolis_matrix()

where ``h_vel(u) = -Fr*`` at ``u' = 0`` for the base at rest (KanesMethod's
``Fr - forcing``), homogeneous quadratic in ``u``: the split of the seed's
``getAC`` (coefficient of ``u_j**2`` times ``u_j`` plus half the cross
terms in ``u_j``) is exactly half its derivative (Euler's theorem), and
equals the Christoffel form of :mod:`kanerobot.dynamics.coriolis`.  It is
computed by forward-mode differentiation of the ``h_vel`` program
(:mod:`kanerobot.symbolic.derivative`).  In the programs ``u``, ``u'`` and
``q`` are the robot's ``QP``, ``QDP`` and joint variables, as in
Newton-Euler.

:meth:`KaneSystem.rhs_terms` splits the right-hand side as the seed's
``kanesRHS`` does: joint torques (``a``, the identity), ``J^T f`` and
``J^T m`` for wrenches applied by the environment at the origins of chosen
frames (``b1 .. b4`` for Krang's two hands) and gravity (``c``).
"""

import dataclasses

import sympy
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia
from sympy.physics.vector import Dyadic, Vector

try:
    from kanerobot.dynamics.common import frame_placements, program_inputs
except ImportError:  # before the shared helpers moved out of composite
    from kanerobot.dynamics.composite import frame_placements, program_inputs
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, DYNAMIC_NAMES, WRENCH_NAMES, Base
from kanerobot.robot.joints import PRISMATIC, REVOLUTE
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program, is_trivial

__all__ = [
    "KaneRHS",
    "KaneSystem",
    "NaiveKane",
    "coriolis_gravity",
    "coriolis_matrix",
    "gravity_torques",
    "inverse_dynamics",
    "mass_matrix",
    "naive_kanes_method",
    "rhs_terms",
]

#: Models a :class:`KaneSystem` derives, by :meth:`KaneSystem.program` name
#: (the names of :data:`kanerobot.dynamics.model.MODELS`).
MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix")

# ---------------------------------------------------------------------------
# Checks and small helpers
# ---------------------------------------------------------------------------


def check_supported(robot):
    """Raise :class:`KaneRobotError` unless ``robot`` is a serial or tree robot
    with a fixed or moving (known motion) base and rigid joints."""
    if robot.loops:
        raise KaneRobotError(
            f"robot {robot.name} has closed loops (cut at joint {', '.join(robot.cut_joints)}): Kane's method "
            f"here is for serial and tree robots"
        )
    if robot.floating:
        raise KaneRobotError(f"robot {robot.name} has a floating base: Kane's method here needs a base of known motion")
    if robot.wheeled:
        raise KaneRobotError(f"robot {robot.name} has a wheeled mobile base: its wheel constraints are not handled")
    flexible = [label for label in robot.joint_labels if robot.joint_parameters[label]["eta"] == 1]
    if flexible:
        raise KaneRobotError(f"robot {robot.name} has flexible joints ({', '.join(flexible)}): not handled by Kane's method here")


def _moving_base(robot):
    b = robot.base
    return any(sympy.sympify(v) != 0 for v in list(b.W0) + list(b.WP0) + list(b.V0) + list(b.VP0))


def _joint_symbols(robot):
    """The symbol of each joint variable (a KK ``theta = th2 - pi/2`` gives ``th2``)."""
    out = []
    for label in robot.joint_labels:
        q = sympy.sympify(robot.frame(label).q)
        symbols = sorted(q.free_symbols, key=str)
        if len(symbols) != 1:
            raise KaneRobotError(f"joint {label} of {robot.name}: its variable {q} must hold exactly one symbol")
        out.append(symbols[0])
    return out


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


class KaneSystem:
    """Kane's method for a robot, on sympy.physics.mechanics objects.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot; the base is fixed or moves with the known
        motion ``W0, WP0, V0, VP0`` of ``robot.base``.
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
        of the speeds ``u<label>``, in ``robot.joint_labels`` order.
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

    Methods :meth:`inverse_dynamics`, :meth:`mass_matrix`, :meth:`h`,
    :meth:`gravity`, :meth:`coriolis_matrix` (or :meth:`program` by name,
    derived once) give the programs; :meth:`rhs_terms` the right-hand side
    terms; :meth:`fr_group` ``Fr`` of one kind of load.

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
    """

    def __init__(self, robot, trig=True):
        check_supported(robot)
        self.robot = robot
        self.trig = bool(trig)
        labels = robot.joint_labels
        self.n = len(labels)
        self._index = {label: k for k, label in enumerate(labels)}
        self.q = [dynamicsymbols(str(x), real=True) for x in _joint_symbols(robot)]
        self.u = [dynamicsymbols(f"u{label}", real=True) for label in labels]
        self.real_symbols, self._plain, self._twins = {}, {}, {}
        t = dynamicsymbols._t
        self.udot = [uk.diff(t) for uk in self.u]
        self.GAM = [robot.joint_parameters[label]["GAM"] for label in labels]
        self._moving = _moving_base(robot)
        state = [robot.q, robot.qd, robot.qdd]
        self._inputs = program_inputs(robot, state, DYNAMIC_NAMES, base=True)
        self.kinematics = Program(inputs=self._inputs, reserved=self._output_names(), trig=self.trig)
        self._recursion()
        self._mechanics()
        self._programs = {}
        self._fixed = None

    def _output_names(self):
        """Names the models output: no intermediate variable may take them
        (the compound angle ``C23`` would otherwise take the Coriolis entry's name)."""
        n, labels = self.n, self.robot.joint_labels
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
            self._Ucache[j] = self.kinematics.assign_matrix(lambda r, c: f"U{r}{c}_{j}", U)
        return self._Ucache[j]

    def _recursion(self):
        """The kinematic recursion, recorded in :attr:`kinematics` (see the module notes)."""
        robot, p = self.robot, self.kinematics
        b = robot.base
        QP = dict(zip(robot.joint_labels, robot.qd))
        self.placements = frame_placements(robot, p)
        self.JW, self.JV, self.JVI, self.JG = {BASE: {}}, {BASE: {}}, {BASE: {}}, {BASE: {}}
        self.W = {BASE: self._vec("W{r}_0", b.W0)}
        self.WB = {BASE: self.W[BASE]}
        self.VB = {BASE: self._vec("VB{r}_0", b.V0)}
        self.WPB = {BASE: self._vec("WPB{r}_0", b.WP0)}
        self.VPB = {BASE: self._vec("VPB{r}_0", b.VP0)}
        self.GV = {BASE: self._vec("GV{r}_0", b.G)}
        self.VBI, self.CG, self.IG, self.VGB, self.GB, self.reaction_axis = {}, {}, {}, {}, {}, {}
        self._Ucache = {}
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
                q_j = sympy.sympify(frame.q).free_symbols
                R0 = sympy.Matrix(frame.transform()).xreplace(dict.fromkeys(q_j, 0))[:3, :3]
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

    def _centre_of_mass(self, j):
        d = self.robot.dynamics[j]
        M = sympy.sympify(d["M"])
        MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
        if M == 0:
            if not _is_zero(MS):
                raise KaneRobotError(f"link {j} of {self.robot.name} has M = 0 but first moments {list(MS)}: give it a mass")
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
                IG[r, s] = IG[s, r] = self.kinematics.assign(f"IG{r + 1}{s + 1}_{j}", value)
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
        to_time = dict(zip(_joint_symbols(robot), self.q))
        N = ReferenceFrame("N")
        self.N = N
        self.frames, self.origins, self.centres = {}, {}, {}
        origin = Point("O0")
        if self._moving:
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
        self._omega = {}
        self._omega_symbols = {}  # component of a KanesMethod angular velocity -> W symbol
        self._kinematic_deps = None
        bodies = []
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            T = self.real(sympy.Matrix(frame.transform()).xreplace(to_time))
            B = ReferenceFrame(f"F{j}")
            _orient(B, self.frames[i], T[:3, :3])
            O = self.origins[i].locatenew(f"O{j}", _vector(self.frames[i], T[:3, 3]))
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
            if j not in robot.links:
                continue
            d = {name: self.real(value) for name, value in robot.dynamics[j].items()}
            G = O.locatenew(f"G{j}", self._v(B, self.CG[j]))
            G.set_vel(N, _frame_vector(B, self._real_speed_sum(self.JG[j], self.VGB[j], self.u)))
            G.set_acc(N, _frame_vector(B, self._real_speed_sum(self.JG[j], self.GB[j], self.udot)))
            self.centres[j] = G
            IG = [self.real(v) for v in self.IG[j]]
            I_G = _inertia_dyadic(B, IG)
            bodies.append(RigidBody(f"B{j}", G, B, d["M"], (I_G, G)))
        self.bodies = bodies
        self.load_groups = self._loads()
        self.loads = [load for group in self.load_groups.values() for load in group]
        self.kanes_method = _kanes_method(N, self.q, self.u)
        fr, frstar = self.kanes_method.kanes_equations(self.bodies, self.loads or None)
        IA = sympy.Matrix([self.real(self._link_value(label, "IA")) for label in robot.joint_labels])
        self.IA = IA
        self.fr = fr
        self.frstar = frstar - sympy.Matrix([IA[k] * self.udot[k] for k in range(self.n)])
        # KanesMethod's properties build new matrices at every access.
        self.mass_matrix_kane = self.kanes_method.mass_matrix
        self.forcing = self.kanes_method.forcing
        self._fr_groups = {}
        self._aux = None

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
            if i != BASE:
                out.append((self.frames[i], -magnitude * self._v(self.frames[i], self.reaction_axis[j])))
        else:
            out.append((self.origins[j], magnitude * self._v(B, a)))
            if i != BASE:
                # The point of the antecedent that coincides with O_j.
                P = self._coincident.get(j)
                if P is None:
                    Bi = self.frames[i]
                    P = self.origins[i].locatenew(f"O{j}_{i}", self.origins[j].pos_from(self.origins[i]))
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
            friction = -(FV * self.u[k] + FS * sympy.sign(self.u[k]))
            if friction != 0:
                groups["friction"] += self._joint_pair(j, friction)
        for j in robot.links:
            if j == BASE:
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
        robot = self.robot
        out = {twin: values.get(plain, plain) for twin, plain in self._plain.items()}
        # The angular velocities KanesMethod carries (sum_k JW_jk u_k + WB_j)
        # are the program's W_j: one name for both.
        for j, omega in self._omega.items():
            for r in range(3):
                if not omega[r].is_Atom and speeds:
                    w = self.W[j][r]
                    out[omega[r]] = values.get(w, w)
        for k in range(self.n):
            out[self.udot[k]] = robot.qdd[k] if accelerations else sympy.S.Zero
            out[self.u[k]] = robot.qd[k] if speeds else sympy.S.Zero
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
        robot = self.robot
        program = Program(inputs=list(self._inputs) + list(extra_inputs))
        keys = self._leaves({}, speeds=speeds, accelerations=False)

        def prepare(found):
            needed = self._kinematics_needed(found)
            # Values that are not the symbol itself (QP = 0, or a line the copy names otherwise).
            changed = {} if speeds else {v: sympy.S.Zero for v in robot.qd}
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

    def program(self, name):
        """The program of model ``name`` (one of :data:`MODELS`), derived once."""
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        if name not in self._programs:
            self._programs[name] = getattr(self, name)()
        return self._programs[name]

    def _names(self, prefix):
        return [f"{prefix}{label}" for label in self.robot.joint_labels]

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

    def inverse_dynamics(self):
        """``GAM = -Fr_other - Fr*``, rotor inertia included: outputs ``GAM<label>``.

        Written ``GAM = A u' + H`` with ``A`` KanesMethod's ``mass_matrix``
        plus ``diag(IA)`` and ``H = -(forcing - Fr_GAM)``; gravity,
        friction ``FV u + FS sign(u)``, the external wrenches ``FX .. CZ``
        and the base motion are included, as in
        :func:`kanerobot.dynamics.newton_euler.inverse_dynamics`.
        """
        n = self.n
        entries = self._mass_matrix_entries()
        h = list(zip(self._names("H"), self._h_expressions()))
        qdd = list(self.robot.qdd)

        def finish(program, lines):
            A = {}
            values = dict(lines)
            names = matrix_entry_names("A", (n, n))
            for c in range(n):
                for r in range(c + 1):
                    A[r, c] = A[c, r] = values[names[r][c]]
            gam = []
            for k, label in enumerate(self.robot.joint_labels):
                total = values[f"H{label}"] + sympy.Add(*(A[k, m] * qdd[m] for m in range(n)))
                gam.append((f"GAM{label}", total))
            return gam

        return self._program(entries + h, finish=finish)

    def h(self):
        """Centrifugal, Coriolis, gravity, friction (and wrench, base) torques
        ``H = GAM`` at ``u' = 0``: outputs ``GAM<label>``."""
        return self._program(list(zip(self._names("GAM"), self._h_expressions())))

    def gravity(self):
        """Gravity torques ``Q``: outputs ``Q<label>``.

        ``Q = -Fr_gravity`` for a fixed base; with a moving base, ``H`` at
        ``u = 0`` without friction and wrenches (the base motion is kept, as
        in Newton-Euler's ``gravity_torques``).
        """
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

    def mass_matrix(self):
        """Inertia matrix ``A = KanesMethod.mass_matrix + diag(IA)``: outputs
        ``A<i><j>``, i <= j, column by column (``A<i>_<j>`` beyond 9 joints)."""
        return self._program(self._mass_matrix_entries())

    def velocity_forces(self):
        """``h_vel(u) = -Fr*`` at ``u' = 0`` with the base at rest (KanesMethod's
        ``nonMM = Fr - forcing``): homogeneous quadratic in ``u``; outputs
        ``HV<label>``."""
        if self._moving:
            if self._fixed is None:
                robot = self.robot
                base = Base(Z=robot.base.Z, G=robot.base.G)
                self._fixed = KaneSystem(dataclasses.replace(robot, base=base), trig=self.trig)
            return self._fixed.velocity_forces()
        nonmm = self.fr - self.forcing

        def finish(program, lines):
            # Outputs named as assignments: ForwardMode differentiates assignments line by line.
            return [(name, program.assign(name, expr)) for name, expr in lines]

        return self._program(list(zip(self._names("HV"), list(nonmm))), finish=finish)

    def coriolis_matrix(self):
        """Coriolis matrix by the seed's ``getAC`` rule, ``C_ij = 1/2 dh_vel,i/du_j``:
        outputs ``C<i><j>`` row by row (``C<i>_<j>`` beyond 9 joints).

        Computed by forward-mode differentiation of the :meth:`velocity_forces`
        program with respect to each ``QP`` (:mod:`kanerobot.symbolic.derivative`).
        """
        hv = self.velocity_forces()
        n = self.n
        qd = list(self.robot.qd)
        fm = ForwardMode(hv)
        target = fm.target
        for k, v in enumerate(qd):
            if v != 0:
                fm.add_direction(k, {v: 1}, label=str(v))
        names = matrix_entry_names("C", (n, n))
        outputs = hv.outputs
        half = sympy.Rational(1, 2)
        for i, label in enumerate(self.robot.joint_labels):
            expr = outputs[f"HV{label}"]
            for j in range(n):
                d = fm.derivative(expr, j) if qd[j] != 0 else sympy.S.Zero
                target.set_output(names[i][j], half * d)
        target.prune()
        return target

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
            F = sympy.Matrix([_free_symbol(f"FE{c}{label}", taken) for c in "XYZ"])
            T = sympy.Matrix([_free_symbol(f"TE{c}{label}", taken) for c in "XYZ"])
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
        for qt, ut, q, qd, qdd in zip(self.q, self.u, _joint_symbols(robot), robot.qd, robot.qdd):
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
    symbols = _joint_symbols(robot)
    q = [dynamicsymbols(str(x)) for x in symbols]
    u = [dynamicsymbols(f"u{label}") for label in labels]
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
        B = ReferenceFrame(f"F{j}")
        B.orient_explicit(parent, T[:3, :3])
        P = points[i].locatenew(f"O{j}", _vector(parent, T[:3, 3]))
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
            C = P.locatenew(f"G{j}", _vector(B, c))
            C.v2pt_theory(P, N, B)
            I_O = inertia(B, d["XX"], d["YY"], d["ZZ"], d["XY"], d["YZ"], d["XZ"])
            bodies.append(RigidBody(f"B{j}", C, B, M, (I_O, P)))
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
                    Pi = points[i].locatenew(f"O{j}_{i}", P.pos_from(points[i]))
                    Pi.v2pt_theory(points[i], N, parent)
                    loads.append((Pi, -magnitude * axis))
    km = KanesMethod(N, q, u, kd_eqs=_kd_equations(q, u))
    km.kanes_equations(bodies, loads)
    return NaiveKane(km, N, frames, bodies, loads, q, u)
