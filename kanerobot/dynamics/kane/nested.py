"""The nested path of :class:`~kanerobot.dynamics.kane.KaneSystem`: Kane's equations summed from the leaves to the root.

:class:`NestedKane` writes the order-n programs (docs/theory/kane.md, K1-K5,
B1-B3, S1-S2, E1, G1-G3, M1-M4); :class:`NestedModels` serves them under the
interface of :class:`~kanerobot.dynamics.kane.models.KaneModels`, the
default path of a system (what :func:`kanerobot.derive`, the numeric
functions and the code exports use).
"""

import functools

import sympy

from kanerobot.dynamics.common import (
    frame_placements,
    link_inertia,
    link_parameter,
    motion_parts,
    subtree_wrench,
)
from kanerobot.dynamics.composite import NAMES, column_wrenches, composite_links
from kanerobot.dynamics.free_flyer import BASE_FORCE_NAMES, gravity_in_base
from kanerobot.dynamics.kane.models import KaneModels
from kanerobot.dynamics.kane.support import check_supported
from kanerobot.dynamics.root import is_free, root_motion
from kanerobot.kinematics import forward_step, root_link_motion
from kanerobot.robot.description import BASE
from kanerobot.robot.joints import PRISMATIC, REVOLUTE, hat
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program


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
        labels = robot.joint_labels
        QP = {label: sympy.sympify(v) if speeds else sympy.S.Zero for label, v in zip(labels, robot.qd)}
        QDP = {label: sympy.sympify(v) if accelerations else sympy.S.Zero for label, v in zip(labels, robot.qdd)}
        FB, NB = self._body_forces_of_tree(QP, QDP, speeds=speeds, accelerations=accelerations, gravity=gravity,
                                           wrench=wrench, base=base, named=named)
        FT, NT, out = self._subtree_sums(FB, NB, QP, QDP, friction=friction, rotor=rotor)
        if is_free(robot):  # the free flyer's partial velocities are the unit twists of frame 0: E1 is the whole wrench
            for name, value in zip(BASE_FORCE_NAMES, FT[BASE] + NT[BASE]):
                program.set_output(output + name, value)
        for j in robot.joint_labels:
            program.set_output(f"{output}{self.robot.stems[j]}", out[j])
        program.prune()
        return program

    def _body_forces_of_tree(self, QP, QDP, *, speeds, accelerations, gravity, wrench, base, named):
        """Kinematics (K1-K4: kinematics.forward_step; K5) and the forces of each body about
        its origin (B1-B3), base to leaves; link 0 is a body on a free flyer: ``FB, NB`` by label."""
        robot, program, A = self.robot, self._p, self._A
        free = is_free(robot)
        # Gravity is an active force, the weight of each body (K5), not a base acceleration.
        w0, wdot0, Vdot0 = root_motion(program, robot, qd=speeds, qdd=accelerations, gravity=False, base=base)
        motion = {BASE: root_link_motion(w0, wdot0, Vdot0, self._recorder(BASE))}
        zero = (sympy.S.Zero,) * 3
        GV = {BASE: self._vec("GV", BASE, (_column(gravity_in_base(program, robot)) if free else _column(robot.base.G))
                              if gravity else zero)}
        FB, NB = {}, {}
        if free:
            FB[BASE], NB[BASE] = self._body_forces(BASE, motion[BASE], GV[BASE], wrench, named)
        for frame in robot.frames:
            j, i = frame.label, frame.antecedent
            rates = ((QP[j],), (QDP[j],)) if frame.is_joint else ((), ())
            iA_j, iP_j = self._placements[j]
            motion[j] = forward_step(motion[i], iA_j.T, iP_j, motion_parts(frame), *rates, self._recorder(j))
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
        """Sums over the subtrees (S1-S2), leaves to base (link 0 on a free flyer), and the
        generalized force of each joint (E1): ``FT, NT`` and the joints' forces, by label."""
        robot, A, P = self.robot, self._A, self._P
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
        if is_free(robot):
            subtree_forces(BASE)
        return FT, NT, out

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
