"""Stage 1 of a :class:`~kanerobot.dynamics.kane.KaneSystem`: the kinematic recursion and the partial velocities.

The kinematic program a KanesMethod build is made of (docs/theory/kane.md):
the velocities, the bias accelerations and the partial velocities of every
frame and centre of mass, in body frames, as intermediate symbols.  The
nested programs need none of it.
"""

import sympy

from kanerobot.dynamics.common import frame_placements, motion_parts
from kanerobot.dynamics.free_flyer import BASE_VELOCITY, gravity_in_base
from kanerobot.dynamics.kane.support import BASE_SPEED_LABELS, speed_keys
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError
from kanerobot.kinematics import along
from kanerobot.robot.description import BASE
from kanerobot.symbolic.program import Program


def _linear(terms, constant):
    """``sum coefficient * speed + constant`` for 3x1 coefficients, component-wise."""
    return sympy.Matrix(
        [sympy.Add(constant[r], *(coefficient[r] * speed for coefficient, speed in terms)) for r in range(3)]
    )


def speed_sum(partials, constant, speeds):
    """``sum_k partials[k] * speeds[k] + constant``, ``speeds`` a dict by speed label.

    Examples
    --------
    >>> import sympy
    >>> x, u = sympy.symbols("x u")
    >>> speed_sum({"1": sympy.Matrix([x, 0, 1])}, sympy.zeros(3, 1), {"1": u}).T
    Matrix([[u*x, 0, u]])
    """
    return _linear([(v, speeds[k]) for k, v in partials.items()], constant)


class KinematicRecursion:
    """The kinematic recursion of a :class:`~kanerobot.dynamics.kane.KaneSystem`, recorded in :attr:`program`.

    Parameters
    ----------
    system : KaneSystem
        Gives the robot, the program's inputs and reserved names, the speed
        labels and their program symbols.

    Attributes
    ----------
    program : Program
        The intermediate symbols the vectors are made of, with their
        definitions (robot symbols, not the real twins): the system's
        ``kinematics``.
    placements : dict str -> (Matrix, Matrix)
        ``iA_j, iP_j`` of each frame.
    JW, JV, JVI, JG : dict str -> dict str -> Matrix
        Per frame, per speed label: the partial angular velocity of frame j,
        the partial velocity of its origin (in frame j, and in the
        antecedent's frame) and of its centre of mass.
    W, WB, VB, VBI, WPB, VPB, VGB, GB, GV : dict str -> Matrix
        Angular velocity, the velocities due to the base motion alone, the
        bias accelerations (``u' = 0``) and gravity, in each frame.
    CG, IG : dict str -> Matrix
        Per link, the centre of mass ``MS / M`` and the central inertia
        ``IG<r><c>_<label>``.
    reaction_axis : dict str -> list of Matrix
        Per joint, per speed, ``iA_j S_j e_k``: the direction of its reaction on the antecedent.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> recursion = KinematicRecursion(KaneSystem(kr.load(kr.frames_path("planar2"))))
    >>> recursion.W["2"].T, recursion.JW["2"]["1"].T
    (Matrix([[0, 0, W3_2]]), Matrix([[0, 0, 1]]))
    """

    def __init__(self, system):
        self.robot = robot = system.robot
        self.floating = system.floating
        self.program = Program(inputs=system.inputs, reserved=system.output_names(), trig=system.trig)
        b = robot.base
        QP = dict(zip(system.speed_labels, system.speed_symbols))
        self.placements = frame_placements(robot, self.program)
        # partial velocities by frame then by speed label (3x1): angular JW, linear JV, JVI, and JG
        self.JW: dict[str, dict[str, sympy.Matrix]] = {BASE: {}}
        self.JV: dict[str, dict[str, sympy.Matrix]] = {BASE: {}}
        self.JVI: dict[str, dict[str, sympy.Matrix]] = {BASE: {}}
        self.JG: dict[str, dict[str, sympy.Matrix]] = {BASE: {}}
        self.VBI, self.CG, self.IG, self.VGB, self.GB, self.reaction_axis = {}, {}, {}, {}, {}, {}
        self._Ucache = {}
        if self.floating:
            self._floating_base(QP)
        else:
            self.W = {BASE: self.vec("W{r}_0", b.W0)}
            self.WB = {BASE: self.W[BASE]}
            self.VB = {BASE: self.vec("VB{r}_0", b.V0)}
            self.WPB = {BASE: self.vec("WPB{r}_0", b.WP0)}
            self.VPB = {BASE: self.vec("VPB{r}_0", b.VP0)}
            self.GV = {BASE: self.vec("GV{r}_0", b.G)}
        for frame in robot.frames:
            self._step(frame, QP)

    def vec(self, name, v):
        """The components of ``v`` assigned as ``name.format(r=1, 2, ...)``, as a column."""
        assign = self.program.assign
        return sympy.Matrix([assign(name.format(r=r + 1), e) for r, e in enumerate(v)])

    def _U(self, j):
        """jU_j = hat(WPB_j) + hat(W_j)^2 from the products of w (as SYMORO's DV), bias part."""
        if j not in self._Ucache:
            w, wd = self.W[j], self.WPB[j]
            products = [w[0] * w[0], w[0] * w[1], w[0] * w[2], w[1] * w[1], w[1] * w[2], w[2] * w[2]]
            DV = self.vec(f"DV{{r}}_{j}", products)
            U = sympy.Matrix(
                [
                    [-DV[3] - DV[5], DV[1] - wd[2], DV[2] + wd[1]],
                    [DV[1] + wd[2], -DV[0] - DV[5], DV[4] - wd[0]],
                    [DV[2] - wd[1], DV[4] + wd[0], -DV[0] - DV[3]],
                ]
            )
            self._Ucache[j] = self.program.assign_matrix(lambda r, c: f"U{r}{c}_{self.robot.stems[j]}", U)
        return self._Ucache[j]

    def _step(self, frame, QP):
        """Frame j from its antecedent i (see docs/theory/kane.md): one partial velocity per speed of its joint."""
        j, i = frame.label, frame.antecedent
        iA_j, iP_j = self.placements[j]
        jA_i = iA_j.T
        S_lin, S_ang = motion_parts(frame)
        keys = speed_keys(frame) if frame.is_joint else []
        # Partial velocities (coefficients of u_k) of frame j and its origin.
        self.JW[j], self.JV[j], self.JVI[j] = {}, {}, {}
        for k, w_ik in self.JW[i].items():
            self.JW[j][k] = self.vec(f"JW{{r}}_{j}_{k}", jA_i * w_ik)
            self.JVI[j][k] = self.vec(f"JVI{{r}}_{j}_{k}", self.JV[i][k] + w_ik.cross(iP_j))
            self.JV[j][k] = self.vec(f"JV{{r}}_{j}_{k}", jA_i * self.JVI[j][k])
        for c, key in enumerate(keys):  # the joint's own speeds: the columns of its motion subspace
            self.JW[j][key] = S_ang[:, c]
            self.JV[j][key] = S_lin[:, c]
        if keys:
            self.reaction_axis[j] = self._reaction_axes(frame, keys, S_lin, S_ang)
        # Velocity of the origin due to the base motion alone (u = 0).
        self.WB[j] = self.vec(f"WB{{r}}_{j}", jA_i * self.WB[i])
        self.VBI[j] = self.vec(f"VBI{{r}}_{j}", self.VB[i] + self.WB[i].cross(iP_j))
        self.VB[j] = self.vec(f"VB{{r}}_{j}", jA_i * self.VBI[j])
        # Angular velocity, written as KanesMethod sees it (sum_k JW_jk u_k + WB_j,
        # so that the program names it once for both), and the bias
        # accelerations (u' = 0) of eqs 8 and 10 (kinematics.forward_step), where
        # jw_i x S_ang qd_j = jw_j x S_ang qd_j and jw_i + jw_j = 2 jw_j - S_ang qd_j.
        rates = [sympy.sympify(QP[key]) for key in keys]
        w_rel, v_rel = sympy.Matrix(along(S_ang, rates)), sympy.Matrix(along(S_lin, rates))
        self.W[j] = self.vec(f"W{{r}}_{j}", speed_sum(self.JW[j], self.WB[j], QP))
        self.WPB[j] = self.vec(f"WPB{{r}}_{j}", jA_i * self.WPB[i] + self.W[j].cross(w_rel))
        VSP = self.vec(f"VSP{{r}}_{j}", self.VPB[i] + self._U(i) * iP_j)
        self.VPB[j] = self.vec(f"VPB{{r}}_{j}", jA_i * VSP + (2 * self.W[j] - w_rel).cross(v_rel))
        self.GV[j] = self.vec(f"GV{{r}}_{j}", jA_i * self.GV[i])
        if j in self.robot.links:
            self._centre_of_mass(j)

    def _reaction_axes(self, frame, keys, S_lin, S_ang):
        """Per speed of joint j, the direction of its torque (or force) on the antecedent, in frame i: ``iA_j S_j e_k``.

        For one speed it does not depend on the joint variable (the axis is
        the rotation's or the translation's), so it is taken at ``q_j = 0``
        (``AX<r>_<j>``); a joint of several speeds turns its own axes
        (``AX<r>_<j>_<speed>``, from ``iA_j``).
        """
        j = frame.label
        for c in range(len(keys)):
            if any(S_lin[:, c]) and any(S_ang[:, c]):
                raise KaneRobotError(
                    f"joint {j} of {self.robot.name} ({frame.joint.name}) has a speed that both turns and slides: "
                    f"the KanesMethod path applies a torque or a force per speed; use the nested path (the default source)"
                )
        columns = [S_ang[:, c] if any(S_ang[:, c]) else S_lin[:, c] for c in range(len(keys))]
        if len(keys) == 1:
            R0 = sympy.Matrix(frame.transform()).xreplace({frame.q: 0})[:3, :3]
            return [self.vec(f"AX{{r}}_{j}", self.program.replace_sin_cos(R0) * columns[0])]
        iA_j = self.placements[j][0]
        return [self.vec(f"AX{{r}}_{j}_{key}", iA_j * column) for key, column in zip(keys, columns)]

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
        zero = sympy.zeros(3, 1)
        # The root joint's partial velocities are the columns of its motion subspace, as a joint's.
        S_lin, S_ang = root_joint_model(self.robot).subspace(None)
        self.JW[BASE] = {key: S_ang[:, c] for c, key in enumerate(BASE_SPEED_LABELS)}
        self.JV[BASE] = {key: S_lin[:, c] for c, key in enumerate(BASE_SPEED_LABELS)}
        self.WB = {BASE: zero}
        self.VB = {BASE: zero}
        self.WPB = {BASE: zero}
        self.W = {BASE: speed_sum(self.JW[BASE], zero, QP)}
        v0 = sympy.Matrix(BASE_VELOCITY[:3])
        self.VPB = {BASE: self.vec("VPB{r}_0", self.W[BASE].cross(v0))}
        self.GV = {BASE: gravity_in_base(self.program, self.robot)}
        self._centre_of_mass(BASE)

    def _centre_of_mass(self, j):
        d = self.robot.dynamics[j]
        M = sympy.sympify(d["M"])
        MS = sympy.Matrix([d["MX"], d["MY"], d["MZ"]])
        if M == 0:  # no first moments either (support.check_masses)
            c = sympy.zeros(3, 1)
        else:
            c = self.vec(f"CG{{r}}_{j}", MS / M)
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
                IG[r, s] = IG[s, r] = self.program.assign(f"IG{r + 1}{s + 1}_{self.robot.stems[j]}", value)
        self.IG[j] = IG
        self.JG[j] = {k: self.vec(f"JG{{r}}_{j}_{k}", v + self.JW[j][k].cross(c)) for k, v in self.JV[j].items()}
        self.VGB[j] = self.vec(f"VGB{{r}}_{j}", self.VB[j] + self.WB[j].cross(c))
        self.GB[j] = self.vec(f"GB{{r}}_{j}", self.VPB[j] + self._U(j) * c)
