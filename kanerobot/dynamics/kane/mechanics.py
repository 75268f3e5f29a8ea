"""Stage 2 of a :class:`~kanerobot.dynamics.kane.KaneSystem`: the sympy.physics.mechanics objects and KanesMethod.

A :class:`~sympy.physics.vector.ReferenceFrame` per frame, a
:class:`~sympy.physics.vector.Point` per origin and centre of mass, a
:class:`~sympy.physics.mechanics.RigidBody` per link, the loads, and a
:class:`~sympy.physics.mechanics.KanesMethod` that forms the generalized
active forces ``Fr`` and the generalized inertia forces ``Fr*`` from the
partial velocities of stage 1 (:class:`~kanerobot.dynamics.kane.recursion.KinematicRecursion`).
``kanes_equations`` is most of the build's time; the nested programs need none of it.
"""

from typing import Any

import sympy
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody
from sympy.physics.vector import Dyadic

from kanerobot.dynamics.common import link_parameter, motion_parts
from kanerobot.dynamics.kane.support import frame_vector, is_zero, joint_kd_equations, vector
from kanerobot.robot.description import BASE, WRENCH_NAMES


def _inertia_dyadic(frame, entries):
    """``inertia(frame, ...)`` for the 3x3 (row-major) ``entries`` of a
    symmetric inertia tensor, made at once: the same Dyadic as
    :func:`sympy.physics.mechanics.inertia`, which adds nine outer products
    one by one (each sum compares every pair of terms, by their printed unit
    vectors)."""
    units = (frame.x, frame.y, frame.z)
    terms = [(entries[3 * r + c], units[r], units[c]) for r in range(3) for c in range(3)]
    return Dyadic([term for term in terms if term[0] != 0])


def _kd_solver(A, b):
    """Solver of the kinematic differential equations ``q' = u``: their
    matrix is the identity, which sympy's LU would factor symbolically."""
    if A == sympy.eye(A.rows):
        return sympy.Matrix(b)
    return A.LUsolve(b)


def _kanes_method(N, system):
    """``KanesMethod(N, q, u)`` with the kinematic differential equations of the system's joints
    (:func:`~kanerobot.dynamics.kane.support.joint_kd_equations`)."""
    q, u = system.q, system.u
    kd_eqs = joint_kd_equations(system.robot, q, u)
    try:
        return KanesMethod(N, q, u, kd_eqs=kd_eqs, kd_eqs_solver=_kd_solver)
    except TypeError:  # sympy < 1.13 has no kd_eqs_solver
        return KanesMethod(N, q, u, kd_eqs=kd_eqs)


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


def link_value(robot, label, name):
    """Dynamic parameter ``name`` of link ``label`` as a sympy value (0 for a frame without a link)."""
    return sympy.sympify(link_parameter(robot, label, name))


class Mechanics:
    """The mechanics objects of a :class:`~kanerobot.dynamics.kane.KaneSystem` and KanesMethod's equations.

    Parameters
    ----------
    system : KaneSystem
        Gives the robot, the speeds and the real twins.
    recursion : KinematicRecursion
        Stage 1: the vectors the frames, points and bodies are given.

    Attributes
    ----------
    N, frames, origins, centres, bodies, loads, load_groups
        As :class:`~kanerobot.dynamics.kane.KaneSystem` documents them.
    kanes_method : KanesMethod
        After ``kanes_equations(bodies, loads)``.
    IA : sympy.Matrix
        The rotor inertias, by speed (0 for the base's six).
    fr, frstar, mass_matrix_kane, forcing : sympy.Matrix
        ``Fr``, ``Fr*`` with ``-IA_j u'_j``, KanesMethod's ``mass_matrix`` and ``forcing``, computed once.
    omega : dict str -> list
        Per frame, the components of its angular velocity as KanesMethod carries them.
    omega_symbols : dict
        A component of :attr:`omega` -> the ``W`` symbol of the kinematic program.

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.dynamics.kane import KaneSystem
    >>> system = KaneSystem(kr.load(kr.frames_path("planar2")))
    >>> mechanics = Mechanics(system, system.recursion)
    >>> mechanics.mass_matrix_kane.shape, [body.name for body in mechanics.bodies]
    ((2, 2), ['B1', 'B2'])
    """

    def __init__(self, system, recursion):
        self.system, self.recursion = system, recursion
        self.robot = robot = system.robot
        self.u, self.udot = system.u, system.udot
        self.N = N = ReferenceFrame("N")
        self.frames, self.origins, self.centres = {}, {}, {}
        self.omega = {}
        base, origin = self._base()
        self.frames[BASE], self.origins[BASE] = base, origin
        self.omega_symbols = {}  # component of a KanesMethod angular velocity -> W symbol
        bodies = []
        if system.floating:
            bodies.append(self._body(BASE, base, origin))
        to_time = dict(zip(robot.q, system.q[len(system.q) - len(robot.q):]))  # after a floating base's six
        for frame in robot.frames:
            B, O = self._frame(frame, to_time)
            if frame.label in robot.links:
                bodies.append(self._body(frame.label, B, O))
        self.bodies = bodies
        self.load_groups = self._loads()
        self.loads = [load for group in self.load_groups.values() for load in group]
        self.kanes_method = _kanes_method(N, system)
        fr, frstar = self.kanes_method.kanes_equations(self.bodies, self.loads or None)
        IA = sympy.Matrix([system.real(link_value(robot, label, "IA")) if label is not None else 0
                           for label in system.speed_joints])
        self.IA = IA
        self.fr = fr
        self.frstar = frstar - sympy.Matrix([IA[k] * self.udot[k] for k in range(system.n)])
        # KanesMethod's properties build new matrices at every access.
        self.mass_matrix_kane = self.kanes_method.mass_matrix
        self.forcing = self.kanes_method.forcing
        self._fr_groups = {}
        self._aux = None

    def _real_speed_sum(self, partials, constant, speeds):
        """The components of ``sum_k partials[k] * speeds[k] + constant`` (``speeds``
        by joint position) with real twins, built from the twins of the coefficients."""
        real, index = self.system.real, self.system.speed_index
        terms = [(v, speeds[index[k]]) for k, v in partials.items()]
        return [sympy.Add(real(constant[r]), *(real(v[r]) * speed for v, speed in terms)) for r in range(3)]

    def real_vector(self, frame, components):
        """A Vector of ``frame`` with real symbols."""
        return frame_vector(frame, [self.system.real(c) for c in components])

    def _base(self):
        """The frame and origin of link 0, moving with the base."""
        N, r, system = self.N, self.recursion, self.system
        origin = Point("O0")
        if system.floating:
            # Frame 0 is not oriented on N: every vector is given in the frame of
            # the body it belongs to, and gravity carries the base orientation.
            base = ReferenceFrame("F0")
            self.omega[BASE] = self._real_speed_sum(r.JW[BASE], r.WB[BASE], self.u)
            base.set_ang_vel(N, frame_vector(base, self.omega[BASE]))
            base.set_ang_acc(N, frame_vector(base, self._real_speed_sum(r.JW[BASE], r.WPB[BASE], self.udot)))
            origin.set_vel(N, frame_vector(base, self._real_speed_sum(r.JV[BASE], r.VB[BASE], self.u)))
            origin.set_acc(N, frame_vector(base, self._real_speed_sum(r.JV[BASE], r.VPB[BASE], self.udot)))
        elif system.moving:
            base = ReferenceFrame("F0")
            base.set_ang_vel(N, self.real_vector(base, r.WB[BASE]))
            base.set_ang_acc(N, self.real_vector(base, r.WPB[BASE]))
            origin.set_vel(N, self.real_vector(base, r.VB[BASE]))
            origin.set_acc(N, self.real_vector(base, r.VPB[BASE]))
        else:
            base = N
            origin.set_vel(N, 0)
            origin.set_acc(N, 0)
        return base, origin

    def _frame(self, frame, to_time):
        """Frame j and its origin, oriented and moving as the kinematic program says."""
        N, r, stems = self.N, self.recursion, self.robot.stems
        j, i = frame.label, frame.antecedent
        T = self.system.real(sympy.Matrix(frame.transform()).xreplace(to_time))
        B = ReferenceFrame(f"F{stems[j]}")
        _orient(B, self.frames[i], T[:3, :3])
        O = self.origins[i].locatenew(f"O{stems[j]}", vector(self.frames[i], T[:3, 3]))
        omega = self._real_speed_sum(r.JW[j], r.WB[j], self.u)
        self.omega[j] = omega
        for k in range(3):
            if not omega[k].is_Atom and isinstance(r.W[j][k], sympy.Symbol):
                self.omega_symbols[omega[k]] = r.W[j][k]
        B.set_ang_vel(N, frame_vector(B, omega))
        B.set_ang_acc(N, frame_vector(B, self._real_speed_sum(r.JW[j], r.WPB[j], self.udot)))
        O.set_vel(N, frame_vector(B, self._real_speed_sum(r.JV[j], r.VB[j], self.u)))
        O.set_acc(N, frame_vector(B, self._real_speed_sum(r.JV[j], r.VPB[j], self.udot)))
        self.frames[j], self.origins[j] = B, O
        return B, O

    def _body(self, j, B, O):
        """The RigidBody of link j (frame ``B``, origin ``O``), its centre of mass
        moving as the kinematic program says."""
        N, r, real = self.N, self.recursion, self.system.real
        d = {name: real(value) for name, value in self.robot.dynamics[j].items()}
        G = O.locatenew(f"G{self.robot.stems[j]}", self.real_vector(B, r.CG[j]))
        G.set_vel(N, frame_vector(B, self._real_speed_sum(r.JG[j], r.VGB[j], self.u)))
        G.set_acc(N, frame_vector(B, self._real_speed_sum(r.JG[j], r.GB[j], self.udot)))
        self.centres[j] = G
        IG = [real(v) for v in r.IG[j]]
        I_G = _inertia_dyadic(B, IG)
        return RigidBody(f"B{self.robot.stems[j]}", G, B, d["M"], (I_G, G))

    def _joint_pair(self, j, c, magnitude):
        """A torque (a turning speed) or force (a sliding one) ``magnitude`` along speed c of joint j
        on frame j, and its reaction on the antecedent in the antecedent's frame."""
        frame = self.robot.frame(j)
        i = frame.antecedent
        S_lin, S_ang = motion_parts(frame)
        B = self.frames[j]
        reaction = self.recursion.reaction_axis[j][c]
        floating = self.system.floating
        out = []
        if any(S_ang[:, c]):
            out.append((B, magnitude * self.real_vector(B, S_ang[:, c])))
            if i != BASE or floating:  # a floating base is a body: the reaction works on it
                out.append((self.frames[i], -magnitude * self.real_vector(self.frames[i], reaction)))
        else:
            out.append((self.origins[j], magnitude * self.real_vector(B, S_lin[:, c])))
            if i != BASE or floating:
                # The point of the antecedent that coincides with O_j.
                P = self._coincident.get(j)
                if P is None:
                    Bi, stems, r = self.frames[i], self.robot.stems, self.recursion
                    P = self.origins[i].locatenew(f"O{stems[j]}_{stems[i]}", self.origins[j].pos_from(self.origins[i]))
                    P.set_vel(self.N, frame_vector(Bi, self._real_speed_sum(r.JVI[j], r.VBI[j], self.u)))
                    self._coincident[j] = P
                out.append((P, -magnitude * self.real_vector(self.frames[i], reaction)))
        return out

    def _loads(self):
        robot, system = self.robot, self.system
        real = system.real
        self._coincident = {}
        # (Point or ReferenceFrame, Vector) loads by kind
        groups: dict[str, list[tuple[Any, Any]]] = {"torque": [], "friction": [], "gravity": [], "wrench": []}
        root_speeds = system.n - len(system.GAM)  # they come first, with no actuator and no friction
        for k, j in enumerate(system.speed_joints[root_speeds:], start=root_speeds):
            c = system.joint_speed_labels[j].index(system.speed_labels[k])  # the speed's column in S_j
            gam = real(system.GAM[k - root_speeds])
            if gam != 0:
                groups["torque"] += self._joint_pair(j, c, gam)
            FV, FS = real(link_value(robot, j, "FV")), real(link_value(robot, j, "FS"))
            u = self.u[k]
            friction = -(FV * u + FS * sympy.sign(u))
            if friction != 0:
                groups["friction"] += self._joint_pair(j, c, friction)
        for j in robot.links:
            if j == BASE and not system.floating:  # a fixed or moving base takes every load
                continue
            B = self.frames[j]
            M = real(link_value(robot, j, "M"))
            GV = self.recursion.GV[j]
            # The weight M_j GV_j, named FG_j in the kinematic program.
            if M != 0 and not is_zero(GV):
                weight = self.recursion.vec(f"FG{{r}}_{j}", link_value(robot, j, "M") * GV)
                groups["gravity"].append((self.centres[j], self.real_vector(B, weight)))
            d = robot.dynamics[j]
            f = sympy.Matrix([d["FX"], d["FY"], d["FZ"]])
            m = sympy.Matrix([d["CX"], d["CY"], d["CZ"]])
            # The link exerts (f, m) on the environment: the environment exerts the opposite.
            if not is_zero(f):
                groups["wrench"].append((self.origins[j], -self.real_vector(B, f)))
            if not is_zero(m):
                groups["wrench"].append((B, -self.real_vector(B, m)))
        return groups

    def generalized_active_forces(self, loads):
        """``Fr`` of ``loads`` alone (a list of (Point or ReferenceFrame,
        Vector)), formed by a KanesMethod on the same frames and speeds."""
        if not loads:
            return sympy.zeros(self.system.n, 1)
        if self._aux is None:
            self._aux = _kanes_method(self.N, self.system)
        fr, _ = self._aux.kanes_equations([], list(loads))
        return fr

    def symbolic(self, values):
        """The real twins of ``values`` when they are all symbols or zeros, else None."""
        values = [sympy.sympify(v) for v in values]
        if all(isinstance(v, sympy.Symbol) or v == 0 for v in values):
            return [self.system.real(v) for v in values if v != 0]
        return None

    def torque_symbols(self):
        """The real twins of the joint torques ``GAM`` when they are plain symbols, else None."""
        return self.symbolic(self.system.GAM)

    def wrench_symbols(self):
        """The real twins of the links' wrenches ``FX .. CZ`` when they are plain symbols, else None."""
        return self.symbolic([self.robot.dynamics[j][w] for j in self.robot.links for w in WRENCH_NAMES])

    def fr_group(self, name):
        """``Fr`` of one load group: ``torque``, ``friction``, ``gravity`` or ``wrench``.

        ``Fr`` is linear in the loads, so when the magnitudes of the other
        groups are plain symbols the group is read off :attr:`fr` by setting
        them to zero (friction vanishes at ``u = 0``: ``sign(0) = 0``);
        otherwise it is formed by a KanesMethod of its own.
        """
        if name not in self._fr_groups:
            torques = self.torque_symbols()
            wrenches = self.wrench_symbols()
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
