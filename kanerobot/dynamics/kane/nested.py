"""The nested path of :class:`~kanerobot.dynamics.kane.KaneSystem`: Kane's equations summed from the leaves to the root.

:class:`NestedKane` writes the order-n programs (docs/theory/kane.md, K1-K5,
B1-B3, S1-S2, E1, G1-G3, M1-M4); :class:`NestedModels` serves them under the
interface of :class:`~kanerobot.dynamics.kane.models.KaneModels`, the
default path of a system (what :func:`kanerobot.derive`, the numeric
functions and the code exports use).
"""

import functools
from collections.abc import Sequence

import sympy

from kanerobot.dynamics.common import (
    frame_placements,
    link_inertia,
    link_parameter,
    motion_parts,
    subtree_wrench,
)
from kanerobot.dynamics.composite import NAMES, column_wrenches, composite_links, composite_wrench
from kanerobot.dynamics.kane.models import KaneModels
from kanerobot.dynamics.kane.support import check_supported
from kanerobot.dynamics.root import gravity_in_base, root_joint_model, root_motion
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

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


def _projected(S, force, moment):
    """``S^T [force; moment]``: one generalized force per speed (E1, G3), ``S = (S_lin, S_ang)``, 3 x nv each.

    For one speed, ``(sigma_j force + sigmabar_j moment) . a_j``; for the root
    joint of a free flyer (``S = I``) the wrench itself.
    """
    S_lin, S_ang = S
    return [_dot(_column(S_lin[:, k]), force) + _dot(_column(S_ang[:, k]), moment) for k in range(S_lin.cols)]


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
        DD: Sequence[sympy.Expr] = (yy - zz, zz - xx, xx - yy)
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

    # ------------------------------------------------------------ the root joint and the speeds

    @functools.cached_property
    def root(self):
        """The root joint's model (:func:`~kanerobot.dynamics.root.root_joint_model`): a free flyer
        moves link 0 with six speeds, whose sums and projections are those of any joint."""
        return root_joint_model(self.robot)

    @property
    def _root_moves(self):
        """Whether link 0 moves with speeds of its own (the root joint has some): it is then a body."""
        return self.root.nv > 0

    def _subspace(self, j):
        """``(S_lin, S_ang)`` of the joint of frame j, the root joint's for link 0."""
        return self.root.subspace(None) if j == BASE else motion_parts(self.robot.frame(j))

    def _force_names(self, j):
        """The suffixes of the generalized forces of frame j's joint (the root joint's for link 0)."""
        joint = self.root if j == BASE else self.robot.frame(j).joint
        return joint.force_names(self.robot.stems[j])

    def _gravity_0(self):
        """Gravity in frame 0: ``robot.base.G`` on a fixed root, ``0R_w G`` (the root joint's
        quaternion, named ``G0``) when link 0 moves."""
        return _column(gravity_in_base(self._p, self.robot) if self._root_moves else self.robot.base.G)

    def _speeds(self):
        """``(frame, k)`` of every generalized speed in order: the root joint's, then each joint's."""
        root = [(BASE, k) for k in range(self.root.nv)]
        return root + [(j, k) for j in self.robot.joint_labels for k in range(self.robot.frame(j).joint.nv)]

    def _set_outputs(self, output, values):
        """``<output><suffix> = values[j][k]`` per speed, root joint first."""
        for j, k in self._speeds():
            self._p.set_output(f"{output}{self._force_names(j)[k]}", values[j][k])

    # ------------------------------------------------------------ programs

    def generalized_forces(self, output, *, speeds=True, accelerations=True, gravity=True, friction=True,
                           rotor=True, wrench=True, base=True, named=False):
        """``-(F_r + F*_r)`` without the joint torques: the torques that satisfy Kane's equations.

        Parameters
        ----------
        output : str
            Prefix of the outputs, ``<output><suffix>`` per speed (the joint
            model's ``force_names``: ``GAM1`` for one speed, ``GAMCX2 ..``
            for a spherical joint, ``GAMFX0 .. GAMCZ0`` for a free flyer, first).
        speeds, accelerations : bool, optional
            Use the speeds and their derivatives; False sets them to 0.
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
        zero = sympy.S.Zero
        QP = {j: rates if speeds else (zero,) * len(rates) for j, rates in robot.joint_speeds.items()}
        QDP = {j: rates if accelerations else (zero,) * len(rates) for j, rates in robot.joint_accelerations.items()}
        FB, NB = self._body_forces_of_tree(QP, QDP, speeds=speeds, accelerations=accelerations, gravity=gravity,
                                           wrench=wrench, base=base, named=named)
        out = self._subtree_sums(FB, NB, QP, QDP, friction=friction, rotor=rotor)
        self._set_outputs(output, out)
        program.prune()
        return program

    def _body_forces_of_tree(self, QP, QDP, *, speeds, accelerations, gravity, wrench, base, named):
        """Kinematics (K1-K4: kinematics.forward_step; K5) and the forces of each body about
        its origin (B1-B3), base to leaves; link 0 is a body when the root joint moves: ``FB, NB`` by label."""
        robot, program, A = self.robot, self._p, self._A
        # Gravity is an active force, the weight of each body (K5), not a base acceleration.
        w0, wdot0, Vdot0 = root_motion(program, robot, qd=speeds, qdd=accelerations, gravity=False, base=base)
        motion = {BASE: root_link_motion(w0, wdot0, Vdot0, self._recorder(BASE))}
        GV = {BASE: self._vec("GV", BASE, self._gravity_0() if gravity else (sympy.S.Zero,) * 3)}
        FB, NB = {}, {}
        if self._root_moves:
            FB[BASE], NB[BASE] = self._body_forces(BASE, motion[BASE], GV[BASE], wrench, named)
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            motion[j] = forward_step(motion[i], self._placements[j][0].T, self._placements[j][1], motion_parts(frame),
                                     QP.get(j, ()), QDP.get(j, ()), self._recorder(j))
            GV[j] = self._vec("GV", j, _mtv(A[j], GV[i]))                                                    # K5
            FB[j], NB[j] = self._body_forces(j, motion[j], GV[j], wrench, named)
        return FB, NB

    def _body_forces(self, j, m, GV, wrench, named):
        """Forces of body j about its origin (B1-B3), from its motion ``m`` and gravity ``GV`` in frame j."""
        U = _rows(m.U)
        J, MS, M = self._inertia(j)
        AG = self._vec("AG", j, _add(_column(m.Vdot), _scale(-1, GV)))
        fe = tuple(self._parameter(j, name, wrench) for name in ("FX", "FY", "FZ"))
        me = tuple(self._parameter(j, name, wrench) for name in ("CX", "CY", "CZ"))
        FB = _add(_scale(M, AG), _mv(U, MS), fe)                                                        # B1
        NB = self._euler_moment(j, J, _column(m.wdot), U, _column(m.DV), named)                         # B3
        if named:
            FB, NB = self._vec("FB", j, FB), self._vec("NB", j, NB)
        return FB, _add(NB, _cross(MS, AG), me)                                                         # B2

    def _subtree_sums(self, FB, NB, QP, QDP, *, friction, rotor):
        """Sums over the subtrees (S1-S2), leaves to base (link 0 when the root joint moves), and
        the generalized forces of each joint, one per speed (E1): by label, lists."""
        robot, A, P = self.robot, self._A, self._P
        # by label: 3-vectors as tuples, the generalized forces as lists
        FT: dict[str, tuple] = {}
        NT: dict[str, tuple] = {}
        FTA: dict[str, tuple] = {}
        out: dict[str, list] = {}

        def subtree_forces(j):
            kids = robot.children(j)
            sums = subtree_wrench(FB[j], NB[j], [(self._placements[k][0], P[k], FTA[k], NT[k]) for k in kids])
            FT[j], NT[j] = self._vec("FT", j, sums[0]), self._vec("NT", j, sums[1])                  # S1, S2

        for frame in reversed(robot.frames):
            j = frame.label
            subtree_forces(j)
            FTA[j] = self._vec("FTA", j, _mv(A[j], FT[j]))
            if frame.is_joint:
                IA, FV, FS = (self._parameter(j, name, flag) for name, flag in (("IA", rotor), ("FV", friction), ("FS", friction)))
                out[j] = [
                    e + IA * qdd + FV * qd + FS * sympy.sign(qd)                                                 # E1
                    for e, qd, qdd in zip(_projected(self._subspace(j), FT[j], NT[j]), QP[j], QDP[j])
                ]
        if self._root_moves:  # the root joint's E1: its wrench on the motion subspace (the whole wrench for a free flyer)
            subtree_forces(BASE)
            out[BASE] = _projected(self._subspace(BASE), FT[BASE], NT[BASE])
        return out

    def gravity_forces(self):
        """``Q_r = -F_r`` of the weights alone (at rest): outputs ``Q<suffix>``.

        From the subtrees' masses ``MT`` and first moments ``MST`` (G1-G3 of
        docs/theory/kane.md) and the gravity ``GV`` in each frame (K5),
        projected on each joint's motion subspace.  When the root joint
        moves (a free flyer) the sums reach link 0, whose partial velocities
        are the root joint's: ``Q_0 = -[MT_0 GV_0; MST_0 x GV_0]`` (outputs
        ``QFX0 .. QCZ0`` first), with ``GV_0 = 0R_w G``.
        """
        robot = self.robot
        program = self._start()
        A, P = self._A, self._P
        GV = {BASE: self._vec("GV", BASE, self._gravity_0())}
        for frame in robot.frames:
            GV[frame.label] = self._vec("GV", frame.label, _mtv(A[frame.label], GV[frame.antecedent]))         # K5
        MT: dict[str, sympy.Expr] = {}
        MST: dict[str, tuple] = {}
        Q: dict[str, list] = {}

        def subtree_mass(j):
            _, MS, M = self._inertia(j)
            for k in robot.children(j):
                MS = _add(MS, self._vec("MSA", k, _mv(A[k], MST[k])), self._vec("PM", k, _scale(MT[k], P[k])))  # G2
                M = M + MT[k]                                                                                  # G1
            MT[j] = program.assign(f"MT{self.robot.stems[j]}", M)
            MST[j] = self._vec("MST", j, MS)

        def weights(j):
            S_lin, S_ang = self._subspace(j)
            force = _scale(MT[j], GV[j]) if any(S_lin) else (sympy.S.Zero,) * 3
            moment = _cross(MST[j], GV[j]) if any(S_ang) else (sympy.S.Zero,) * 3
            return [-e for e in _projected((S_lin, S_ang), force, moment)]                                   # G3

        for frame in reversed(robot.frames):
            j = frame.label
            subtree_mass(j)
            if frame.is_joint:
                Q[j] = weights(j)
        if self._root_moves:
            subtree_mass(BASE)
            Q[BASE] = weights(BASE)
        self._set_outputs("Q", Q)
        program.prune()
        return program

    def mass_matrix(self, rotor=True):
        """``A`` from the subtrees' inertias (M1-M4 of docs/theory/kane.md): outputs ``A<i><j>``, i <= j.

        One column per speed: a joint of several speeds has a column per
        column of its motion subspace, projected on every speed of the
        joints below it.  When the root joint moves (a free flyer) the sums
        reach link 0: its six speeds come first, their block is the spatial
        inertia of the whole robot about O_0, ``[MT_0 I, -hat(MST_0);
        hat(MST_0), JT_0]`` (the root's subspace projected on it), and each
        column's inertia forces are carried down to link 0 for the base rows.

        Parameters
        ----------
        rotor : bool, optional
            Add ``IA_j`` to ``A_jj`` (to each of its speeds).
        """
        robot = self.robot
        program = self._start()
        moves = self._root_moves
        columns = {}  # ((frame, speed) row, (frame, speed) column) -> entry

        def project(i, column, f, n):
            """Column ``column``'s entries on the speeds of joint i (M3-M4)."""
            for r, value in enumerate(_projected(self._subspace(i), _column(f), _column(n))):
                columns[(i, r), column] = value

        # The composite links and columns of composite.mass_matrix (M1-M4), under this module's names;
        # column j as soon as subtree j is complete: its first step reuses the subtree's first moment
        # and inertia rotated into frame a(j) for M2 (the program names each distinct expression once).
        for j, J, MS, M in composite_links(program, robot, self._placements, root=moves, names=_SUBTREE_NAMES):
            subtree = (J, MS, M)
            if j == BASE:  # the whole robot's spatial inertia about O_0 (M1-M2 at link 0) on the root's speeds
                S_lin, S_ang = self._subspace(BASE)
                for c in range(S_lin.cols):
                    project(BASE, (BASE, c), *composite_wrench(*subtree, sympy.Matrix.vstack(S_lin[:, c], S_ang[:, c])))
                continue
            for k in range(robot.frame(j).joint.nv):
                for i, f, n in column_wrenches(program, robot, self._placements, j, subtree, root=moves,
                                               names=_SUBTREE_NAMES, column=k):
                    project(i, (j, k), f, n)
                columns[(j, k), (j, k)] += self._parameter(j, "IA", rotor)
        rows = self._speeds()
        names = matrix_entry_names("A", (len(rows), len(rows)))
        for c, j in enumerate(rows):
            for r, i in enumerate(rows[: c + 1]):
                program.set_output(names[r][c], columns.get((i, j), sympy.S.Zero))
        program.prune()
        return program


class NestedModels(KaneModels):
    """The models of a :class:`~kanerobot.dynamics.kane.KaneSystem` summed from the leaves to the root.

    Parameters
    ----------
    system : KaneSystem

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> print(NestedModels(KaneSystem(kr.load(kr.frames_path("planar2")))).program("mass_matrix"))  # doctest: +ELLIPSIS
    C2 = cos(th2)
    ...
    A22 = IA2 + ZZ2
    """

    @functools.cached_property
    def builder(self):
        """The :class:`NestedKane` that writes the programs."""
        system = self.system
        return NestedKane(system.robot, system.inputs, system.output_names(), trig=system.trig)

    def inverse_dynamics(self):
        """The inertia forces formed with ``u'`` directly and summed from the leaves to the root."""
        return self.builder.generalized_forces("GAM")

    def h(self):
        return self.builder.generalized_forces("GAM", accelerations=False, rotor=False)

    def gravity(self):
        """From the subtrees' masses and first moments for a fixed base; with a moving base, ``H``
        at ``u = 0`` without friction and wrenches (the base motion is kept)."""
        if not self.system.moving:
            return self.builder.gravity_forces()
        return self.builder.generalized_forces("Q", speeds=False, accelerations=False, friction=False,
                                               rotor=False, wrench=False)

    def mass_matrix(self):
        """From the subtrees' inertias."""
        return self.builder.mass_matrix()

    def velocity_forces(self):
        return self.builder.generalized_forces("HV", accelerations=False, gravity=False, friction=False,
                                               rotor=False, wrench=False, base=False, named=True)

    def mass_matrix_values(self, fm, hv):
        # A joins the derivative program, which does not differentiate it.
        return fm.target.splice(self.program("mass_matrix"))
