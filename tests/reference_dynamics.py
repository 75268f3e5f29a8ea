"""Independent numeric dynamics for the tests: Featherstone's recursive
Newton-Euler algorithm with spatial vectors, in plain numpy.

Nothing here comes from kanerobot's dynamic algorithms.  From kanerobot it
takes only the robot description: each frame's numeric transform
``a(j)T_j(q)`` (:func:`kanerobot.geometry.numeric_transform`), its joint axis
and type, and the values of its parameters (random ones from
:func:`kanerobot.dynamics.parameters.random_parameters`, the generator every
test uses).

Conventions (Featherstone, *Rigid Body Dynamics Algorithms*, 2008):

* a spatial motion vector is ``[w; v]`` (angular part first), ``v`` the
  velocity of the body-fixed point at the frame origin; a spatial
  acceleration is ``[wdot; vdot - w x v]`` (not the classical acceleration);
* a spatial force is ``[n; f]``, ``n`` the moment about the frame origin;
* ``jX_i`` maps motion vectors from frame i to frame j, and ``jX_i^T``
  maps forces from j back to i;
* the spatial inertia of a link about its frame origin is
  ``[[J_O, hat(MS)], [hat(MS)^T, m 1]]`` with SYMORO's parameters
  ``J_O`` (XX .. ZZ), ``MS = m c`` (MX MY MZ) and ``m`` (M).

The torque of joint j is ``S_j^T f_j + IA_j qdd_j + FV_j qd_j + FS_j sign(qd_j)``
where ``f_j`` includes the wrench ``[CX CY CZ FX FY FZ]`` that link j exerts
on the environment (SYMORO's sign convention).
"""

import numpy
import sympy

from kanerobot.geometry import numeric_transform


# ------------------------------------------------------------ spatial algebra
def hat(v):
    return numpy.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def motion_transform(T):
    """jX_i from iT_j = [R p; 0 1]: ``[[R^T, 0], [-R^T hat(p), R^T]]``."""
    R, p = T[:3, :3], T[:3, 3]
    X = numpy.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R.T
    X[3:, :3] = -R.T @ hat(p)
    return X


def crm(v):
    """Spatial cross product for motion vectors: ``crm(v) u = v x u``."""
    out = numpy.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = hat(v[:3])
    out[3:, :3] = hat(v[3:])
    return out


def crf(v):
    """Spatial cross product for force vectors: ``crf(v) = -crm(v)^T``."""
    return -crm(v).T


def spatial_inertia(m, MS, J):
    out = numpy.zeros((6, 6))
    out[:3, :3] = J
    out[:3, 3:] = hat(MS)
    out[3:, :3] = hat(MS).T
    out[3:, 3:] = m * numpy.eye(3)
    return out


# ------------------------------------------------------- numeric parameters
def number(expr, values):
    """``expr`` (a sympy expression or a number) as a float, its symbols
    taken by name from ``values``."""
    expr = sympy.sympify(expr)
    missing = sorted(s.name for s in expr.free_symbols if s.name not in values)
    if missing:
        raise KeyError(f"no value for {', '.join(missing)}")
    return float(expr.xreplace({s: values[s.name] for s in expr.free_symbols}))


def numeric_link(robot, values, label):
    """Link ``label`` in numbers: ``(J, MS, p)``.

    ``J`` (3, 3) is the inertia about the frame origin, ``MS`` (3,) the
    first moments and ``p`` every dynamic parameter of the link by name
    (``M``, ``IA``, ``FV``, ``FS``, ``FX`` .. ``CZ``, ...).
    """
    p = {name: number(expr, values) for name, expr in robot.dynamics[label].items()}
    J = numpy.array([[p["XX"], p["XY"], p["XZ"]], [p["XY"], p["YY"], p["YZ"]], [p["XZ"], p["YZ"], p["ZZ"]]])
    return J, numpy.array([p["MX"], p["MY"], p["MZ"]]), p


# ------------------------------------------------------------------- model
class ReferenceModel:
    """Numeric inverse dynamics of ``robot`` with the parameter ``values``.

    Parameters
    ----------
    robot : kanerobot Robot
        Serial or tree (no loops), fixed or moving base.
    values : dict name -> float
        Every symbol of the robot but the joint variables, QP and QDP.
    """

    def __init__(self, robot, values):
        self.robot = robot
        self.values = dict(values)
        self.index = {label: k for k, label in enumerate(robot.joint_labels)}
        self.frames = []
        for frame in robot.frames:
            axis = self._vector(frame.axis)
            S = numpy.zeros(6)
            if frame.sigma == 0:
                S[:3] = axis
            elif frame.sigma == 1:
                S[3:] = axis
            transform = numeric_transform(robot, frame.antecedent, frame.label, self.values)
            self.frames.append((frame.label, frame.antecedent, S, transform))
        self.links = {}
        for label in robot.links:
            J, MS, p = numeric_link(robot, self.values, label)
            self.links[label] = {
                "I": spatial_inertia(p["M"], MS, J),
                "wrench": numpy.array([p["CX"], p["CY"], p["CZ"], p["FX"], p["FY"], p["FZ"]]),
                "IA": p["IA"],
                "FV": p["FV"],
                "FS": p["FS"],
            }
        b = robot.base
        self.W0, self.WP0, self.V0, self.VP0, self.G = (self._vector(v) for v in (b.W0, b.WP0, b.V0, b.VP0, b.G))

    def _vector(self, v):
        return numpy.array([number(e, self.values) for e in v], dtype=float)

    def inverse_dynamics(self, q, qd, qdd, gravity=True, friction=True, rotor=True, wrench=True, base=True):
        """Joint torques, in ``robot.joint_labels`` order.

        ``base=False`` puts the base at rest (no W0, WP0, V0, VP0).
        """
        q, qd, qdd = (numpy.asarray(x, dtype=float).reshape(-1) for x in (q, qd, qdd))
        W0, WP0, V0, VP0 = (x if base else numpy.zeros(3) for x in (self.W0, self.WP0, self.V0, self.VP0))
        if gravity:
            VP0 = VP0 - self.G
        v = {"0": numpy.concatenate([W0, V0])}
        a = {"0": numpy.concatenate([WP0, VP0 - numpy.cross(W0, V0)])}  # spatial, from the classical VP0
        f, X = {}, {}
        for label, parent, S, transform in self.frames:
            k = self.index.get(label)
            qd_j = qd[k] if k is not None else 0.0
            qdd_j = qdd[k] if k is not None else 0.0
            X[label] = motion_transform(transform(q))
            vJ = S * qd_j
            v[label] = X[label] @ v[parent] + vJ
            a[label] = X[label] @ a[parent] + S * qdd_j + crm(v[label]) @ vJ
            link = self.links.get(label)
            f[label] = numpy.zeros(6)
            if link is not None:
                I = link["I"]
                f[label] = I @ a[label] + crf(v[label]) @ I @ v[label]
                if wrench:
                    f[label] = f[label] + link["wrench"]
        tau = numpy.zeros(len(self.index))
        for label, parent, S, _ in reversed(self.frames):
            k = self.index.get(label)
            if k is not None:
                tau[k] = S @ f[label]
                link = self.links.get(label)
                if link is not None:
                    if rotor:
                        tau[k] += link["IA"] * qdd[k]
                    if friction:
                        tau[k] += link["FV"] * qd[k] + link["FS"] * numpy.sign(qd[k])
            if parent != "0":
                f[parent] = f[parent] + X[label].T @ f[label]
        return tau

    def mass_matrix(self, q, rotor=True):
        """See :func:`mass_matrix_by_unit_accelerations`."""
        n = len(self.index)
        zero = numpy.zeros(n)
        columns = [
            self.inverse_dynamics(q, zero, e, gravity=False, friction=False, rotor=rotor, wrench=False, base=False)
            for e in numpy.eye(n)
        ]
        return numpy.array(columns).T


def mass_matrix_by_unit_accelerations(robot, values, q, rotor=True):
    """Inertia matrix A(q) of ``robot``, column j = the torques for qdd = e_j.

    The reference RNEA with qd = 0, no gravity, friction, wrench nor base
    motion (SYMORO+ eq. 26); with ``rotor`` the rotor inertias IA are on the
    diagonal, as in SYMORO's A.

    Parameters
    ----------
    robot : kanerobot Robot
    values : dict name -> float
        Parameter values, e.g. from
        :func:`kanerobot.dynamics.parameters.random_parameters`.
    q : sequence of float
        Joint variables in ``robot.joint_labels`` order.

    Returns
    -------
    numpy.ndarray, shape (nj, nj)
    """
    return ReferenceModel(robot, values).mass_matrix(q, rotor=rotor)


# ------------------------------------------------------------ floating base
def quaternion_matrix(quaternion):
    """Rotation matrix of a unit quaternion ``(x, y, z, w)``, scalar last, by
    Rodrigues' formula on its axis and angle (not the usual polynomial form)."""
    x = numpy.asarray(quaternion, dtype=float)
    x = x / numpy.linalg.norm(x)
    s = numpy.linalg.norm(x[:3])
    if s == 0:
        return numpy.eye(3)
    angle = 2 * numpy.arctan2(s, x[3])
    K = hat(x[:3] / s)
    return numpy.eye(3) + numpy.sin(angle) * K + (1 - numpy.cos(angle)) * K @ K


class FloatingReferenceModel(ReferenceModel):
    """Numeric dynamics of a floating robot (link 0 the base), Featherstone's
    RNEA with a free base, in pinocchio's free-flyer state.

    ``q = (x, y, z, qx, qy, qz, qw, joints)``: base position in the world
    frame and the quaternion of its orientation; ``qd = (v, w, joint
    rates)`` with v, w the base's linear and angular velocity in frame 0;
    ``qdd`` their time derivatives.  Gravity ``G`` is in the world frame.
    The generalized forces are the base wrench (force, then moment about
    O_0, in frame 0) and the joint torques.
    """

    def generalized_forces(self, q, qd, qdd, gravity=True, friction=True, rotor=True, wrench=True):
        q, qd, qdd = (numpy.asarray(x, dtype=float).reshape(-1) for x in (q, qd, qdd))
        R = quaternion_matrix(q[3:7])
        qj, qdj, qddj = q[7:], qd[6:], qdd[6:]
        v = {"0": numpy.concatenate([qd[3:6], qd[:3]])}
        # In body coordinates the spatial acceleration is the derivative of
        # the body twist; gravity enters as an upward acceleration of the base.
        a = {"0": numpy.concatenate([qdd[3:6], qdd[:3] - (R.T @ self.G if gravity else 0.0)])}
        f, X = {}, {}

        def link_force(label):
            link = self.links.get(label)
            if link is None:
                return numpy.zeros(6)
            I = link["I"]
            out = I @ a[label] + crf(v[label]) @ I @ v[label]
            return out + link["wrench"] if wrench else out

        f["0"] = link_force("0")
        for label, parent, S, transform in self.frames:
            k = self.index.get(label)
            qd_j = qdj[k] if k is not None else 0.0
            qdd_j = qddj[k] if k is not None else 0.0
            X[label] = motion_transform(transform(qj))
            vJ = S * qd_j
            v[label] = X[label] @ v[parent] + vJ
            a[label] = X[label] @ a[parent] + S * qdd_j + crm(v[label]) @ vJ
            f[label] = link_force(label)
        tau = numpy.zeros(len(self.index))
        for label, parent, S, _ in reversed(self.frames):
            k = self.index.get(label)
            if k is not None:
                tau[k] = S @ f[label]
                link = self.links.get(label)
                if link is not None:
                    if rotor:
                        tau[k] += link["IA"] * qddj[k]
                    if friction:
                        tau[k] += link["FV"] * qdj[k] + link["FS"] * numpy.sign(qdj[k])
            f[parent] = f[parent] + X[label].T @ f[label]
        return numpy.concatenate([f["0"][3:], f["0"][:3], tau])

    def mass_matrix(self, q, rotor=True):
        """(6+n)x(6+n): column k is the generalized force for qdd = e_k at rest."""
        nv = 6 + len(self.index)
        zero = numpy.zeros(nv)
        columns = [
            self.generalized_forces(q, zero, e, gravity=False, friction=False, rotor=rotor, wrench=False)
            for e in numpy.eye(nv)
        ]
        return numpy.array(columns).T

    def free_floating(self, q, qd, qdd_joints, **options):
        """(base acceleration, joint torques) with no wrench on the base:
        ``A11 a_b + A12 qdd + H1 = 0`` solved for a_b, then the torques."""
        A = self.mass_matrix(q, rotor=options.get("rotor", True))
        H = self.generalized_forces(q, qd, numpy.zeros(len(qd)), **options)
        qdd_joints = numpy.asarray(qdd_joints, dtype=float)
        base = -numpy.linalg.solve(A[:6, :6], A[:6, 6:] @ qdd_joints + H[:6])
        return base, A[6:, :6] @ base + A[6:, 6:] @ qdd_joints + H[6:]


def unit_regressor(robot, values, parameters):
    """The identification regressor D(q, qd, qdd) by the unit-parameter rule,
    independent of the identification program: column j is the Newton-Euler
    inverse dynamics with parameter j = 1, every other dynamic parameter 0
    (the torques are linear in the dynamic parameters)."""
    import kanerobot as kr

    model = kr.derive(robot)
    dynamic = {str(v) for link in robot.dynamics.values() for v in link.values() if isinstance(v, sympy.Symbol)}
    zero = {name: 0.0 if name in dynamic else float(values[name]) for name in model.parameters}
    units = [(k, model.numeric(dict(zero, **{name: 1.0}), physical=False)) for k, name in enumerate(parameters) if name in model.parameters]

    def D(q, qd, qdd):
        out = numpy.zeros(numpy.shape(q) + (len(parameters),))
        for k, fn in units:
            out[..., k] = fn.inverse_dynamics(q, qd, qdd)
        return out

    return D


# ------------------------------------------------ standard-DH arms, by hand
def rot_x_matrix(angle):
    c, s = numpy.cos(angle), numpy.sin(angle)
    return numpy.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z_matrix(angle):
    c, s = numpy.cos(angle), numpy.sin(angle)
    return numpy.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def standard_dh_transform(theta, d, a, alpha):
    """``Rz(theta) Tz(d) Tx(a) Rx(alpha)``: frame i in frame i-1 (standard DH)."""
    T = numpy.eye(4)
    Rz = rot_z_matrix(theta)
    T[:3, :3] = Rz @ rot_x_matrix(alpha)
    T[:3, 3] = Rz @ numpy.array([a, 0.0, 0.0]) + numpy.array([0.0, 0.0, d])
    return T


class StandardDHArm:
    """A serial revolute arm from its standard-DH table, in plain numpy.

    Nothing here reads a robot file or calls kanerobot: the arm is the table
    itself.  Link i carries frame i at its far end (standard DH), placed in
    frame i-1 by ``Rz(q_i + offset_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; joint i
    turns about z_{i-1}.  The dynamics are Featherstone's recursive
    Newton-Euler algorithm (inverse dynamics, C(q, qd) qd, gravity) and the
    composite-rigid-body algorithm (inertia matrix), written in DH frame i
    for link i, with the conventions of :class:`ReferenceModel`.

    Parameters
    ----------
    table : dict
        ``d``, ``a``, ``alpha``, ``offset`` (n values each), ``mass`` (n),
        ``com`` (n x 3, centre of mass of link i in frame i), ``inertia``
        (n x 3 x 3, about the centre of mass, in the axes of frame i),
        ``armature`` (n, rotor inertia on joint i's side, optional) and
        ``gravity`` (3, acceleration of gravity in frame 0).
    """

    def __init__(self, table):
        self.table = table
        self.n = len(table["d"])
        self.armature = numpy.asarray(table.get("armature", numpy.zeros(self.n)), dtype=float)
        self.gravity_vector = numpy.asarray(table["gravity"], dtype=float)
        self.inertias = []
        for m, c, Ic in zip(table["mass"], table["com"], table["inertia"]):
            c, Ic = numpy.asarray(c, dtype=float), numpy.asarray(Ic, dtype=float)
            # Parallel-axis theorem: inertia about the origin of frame i.
            J = Ic + m * (c @ c * numpy.eye(3) - numpy.outer(c, c))
            self.inertias.append(spatial_inertia(m, m * c, J))

    def transforms(self, q):
        """``[T_{0,1}, T_{1,2}, ...]``, each frame in the previous one."""
        t = self.table
        return [
            standard_dh_transform(q[i] + t["offset"][i], t["d"][i], t["a"][i], t["alpha"][i])
            for i in range(self.n)
        ]

    def forward_kinematics(self, q):
        """Pose of frame n in frame 0."""
        T = numpy.eye(4)
        for step in self.transforms(numpy.asarray(q, dtype=float)):
            T = T @ step
        return T

    def _joints(self, q):
        """``(iX_{i-1}, S_i)`` per link: the motion transform and the joint's
        motion subspace in frame i (the unit twist about z_{i-1})."""
        out = []
        for T in self.transforms(numpy.asarray(q, dtype=float)):
            X = motion_transform(T)
            out.append((X, X @ numpy.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])))
        return out

    def inverse_dynamics(self, q, qd, qdd, gravity=True):
        """Joint torques (rotor inertias included)."""
        qd, qdd = numpy.asarray(qd, dtype=float), numpy.asarray(qdd, dtype=float)
        joints = self._joints(q)
        v = numpy.zeros(6)
        # Gravity as an upward acceleration of the base.
        a = numpy.concatenate([numpy.zeros(3), -self.gravity_vector if gravity else numpy.zeros(3)])
        forces = []
        for (X, S), I, w, wd in zip(joints, self.inertias, qd, qdd):
            v = X @ v + S * w
            a = X @ a + S * wd + crm(v) @ (S * w)
            forces.append(I @ a + crf(v) @ I @ v)
        tau = numpy.zeros(self.n)
        for i in reversed(range(self.n)):
            X, S = joints[i]
            tau[i] = S @ forces[i] + self.armature[i] * qdd[i]
            if i > 0:
                forces[i - 1] = forces[i - 1] + X.T @ forces[i]
        return tau

    def mass_matrix(self, q):
        """Inertia matrix by the composite-rigid-body algorithm (not the RNEA)."""
        joints = self._joints(q)
        composite = [I.copy() for I in self.inertias]
        for i in reversed(range(1, self.n)):
            X = joints[i][0]
            composite[i - 1] = composite[i - 1] + X.T @ composite[i] @ X
        A = numpy.diag(self.armature).astype(float)
        for i in range(self.n):
            F = composite[i] @ joints[i][1]
            A[i, i] += joints[i][1] @ F
            for j in reversed(range(i)):
                F = joints[j + 1][0].T @ F
                A[i, j] = A[j, i] = F @ joints[j][1]
        return A

    def gravity(self, q):
        zero = numpy.zeros(self.n)
        return self.inverse_dynamics(q, zero, zero)

    def coriolis_times_qd(self, q, qd):
        """``C(q, qd) qd``: the velocity torques (no gravity)."""
        return self.inverse_dynamics(q, qd, numpy.zeros(self.n), gravity=False)

    def direct_dynamics(self, q, qd, tau):
        """``A^-1 (tau - C qd - g)``."""
        return numpy.linalg.solve(self.mass_matrix(q), tau - self.coriolis_times_qd(q, qd) - self.gravity(q))
