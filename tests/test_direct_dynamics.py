"""Recursive direct dynamic model, checked by inverse dynamics.

The independent path is a plain numpy recursive Newton-Euler written here
(link velocities and accelerations forward, wrenches backward; gravity as
a base acceleration, rotor inertia, viscous and Coulomb friction, external
wrenches), and Featherstone's spatial RNEA of tests/reference_dynamics.py.
For random physically consistent parameters
(:func:`kanerobot.dynamics.parameters.random_parameters`) and random states
the accelerations of the direct model must give back the torques::

    RNEA(q, qd, qdd_ddm(q, qd, tau)) = tau,

and, with the inertia matrix of :mod:`kanerobot.dynamics.composite`,
``A(q) qdd_ddm + H(q, qd) = tau`` where ``H = RNEA(q, qd, 0)``.

On a free flyer (the satellite, and the tree of conftest with its prismatic
joints and fixed leaf), the other path is the free-flyer Newton-Euler
program: ``A nu_dot = [0; tau] - H`` with ``A`` and ``H`` read off it, and
the free-floating model's base acceleration needs no base wrench there.
"""

import re

import numpy
import pytest
import sympy
from conftest import floating_copy, library, mass_matrix_function, opensymoro_operations, plate_robot, tree_robot
from reference_dynamics import ReferenceModel, number, numeric_link

from kanerobot.dynamics import newton_euler
from kanerobot.dynamics.composite import mass_matrix
from kanerobot.dynamics.direct import articulated_bodies, base_acceleration, direct_dynamics
from kanerobot.dynamics.free_flyer import BASE_ACCELERATION, BASE_VELOCITY, QUATERNION
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE, WRENCH_NAMES, Base, Robot
from kanerobot.symbolic.program import Program

ROBOTS = ["rx90", "stanford", "puma560", "krang"]


# ------------------------------------------------- independent inverse dynamics
class NumericRobot:
    """The robot with every parameter bound: frame transforms as numpy
    functions of q, axes, link inertias, friction, wrenches, base motion."""

    def __init__(self, robot, values):
        self.robot = robot
        symbols = {sympy.Symbol(name): value for name, value in values.items()}
        self.index = {label: k for k, label in enumerate(robot.joint_labels)}
        self.frames = []
        for frame in robot.frames:
            T = sympy.Matrix(frame.transform()).xreplace(symbols)
            variable = [frame.q] if frame.is_joint else []
            f = sympy.lambdify(variable, T, modules="numpy")
            axis = numpy.array([float(e) for e in frame.axis])
            self.frames.append((frame.label, frame.antecedent, frame.sigma, axis, f))
        self.links = {}
        for label in robot.links:
            J, MS, p = numeric_link(robot, values, label)
            wrench = numpy.array([p[name] for name in WRENCH_NAMES])
            self.links[label] = (J, MS, p["M"], p["IA"], p["FV"], p["FS"], wrench)

        def vector(key):
            return numpy.array([number(e, values) for e in getattr(robot.base, key)])

        self.w0, self.wd0 = vector("W0"), vector("WP0")
        self.vd0 = vector("VP0") - vector("G")

    def inverse_dynamics(self, q, qd, qdd):
        w, wd, vd = {BASE: self.w0}, {BASE: self.wd0}, {BASE: self.vd0}
        placement = {}
        for label, parent, sigma, e, f in self.frames:
            k = self.index.get(label)
            T = numpy.asarray(f(q[k]) if k is not None else f(), dtype=float)
            R, P = T[:3, :3], T[:3, 3]
            placement[label] = (parent, R, P)
            _qj, qdj, qddj = (q[k], qd[k], qdd[k]) if k is not None else (0.0, 0.0, 0.0)
            revolute, prismatic = float(sigma == 0), float(sigma == 1)
            w_i = R.T @ w[parent]
            w[label] = w_i + revolute * qdj * e
            wd[label] = R.T @ wd[parent] + revolute * (qddj * e + numpy.cross(w_i, qdj * e))
            vd[label] = R.T @ (vd[parent] + numpy.cross(wd[parent], P) + numpy.cross(w[parent], numpy.cross(w[parent], P)))
            vd[label] += prismatic * (qddj * e + 2 * numpy.cross(w_i, qdj * e))
        force = {label: numpy.zeros(3) for label in placement}
        moment = {label: numpy.zeros(3) for label in placement}
        tau = numpy.zeros(len(self.index))
        for label, parent, sigma, e, _ in reversed(self.frames):
            if label in self.links:
                J, MS, M, IA, FV, FS, wrench = self.links[label]
                force[label] += M * vd[label] + numpy.cross(wd[label], MS) + numpy.cross(w[label], numpy.cross(w[label], MS))
                moment[label] += J @ wd[label] + numpy.cross(w[label], J @ w[label]) + numpy.cross(MS, vd[label])
                force[label] += wrench[:3]
                moment[label] += wrench[3:]
            k = self.index.get(label)
            if k is not None:
                tau[k] = e @ (force[label] if sigma == 1 else moment[label])
                if label in self.links:
                    J, MS, M, IA, FV, FS, wrench = self.links[label]
                    tau[k] += IA * qdd[k] + FV * qd[k] + FS * numpy.sign(qd[k])
            if parent != BASE:
                _, R, P = placement[label]
                f_parent = R @ force[label]
                force[parent] += f_parent
                moment[parent] += R @ moment[label] + numpy.cross(P, f_parent)
        return tau


def ddm_function(robot, program, values):
    """(q, qd, tau) -> qdd of the direct model's program."""
    tau = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
    state = list(robot.q) + list(robot.qd) + tau
    parameters = sorted(set(program.inputs) - set(state), key=str)
    f = program.to_function(args=state + parameters)
    assert f.outputs == tuple(f"QDP{label}" for label in robot.joint_labels)
    fixed = [values[s.name] for s in parameters]
    return lambda q, qd, t: f(*q, *qd, *t, *fixed)


def check_inverts_inverse_dynamics(robot, rng, program=None, states=3, composite=True, reference=False):
    """qdd of the direct model at ``states`` random (q, qd, tau) gives tau
    back by the RNEA above and, with ``composite``, ``A qdd + H = tau``; with
    ``reference``, also by the spatial RNEA of tests/reference_dynamics.py
    at two more states."""
    program = direct_dynamics(robot) if program is None else program
    values = random_parameters(robot, rng)
    numeric = NumericRobot(robot, values)
    qdd_of = ddm_function(robot, program, values)
    A = mass_matrix_function(robot, mass_matrix(robot), values) if composite else None
    n = robot.nj
    for _ in range(states):
        q = rng.uniform(-numpy.pi, numpy.pi, n)
        qd = rng.uniform(-2, 2, n)
        tau = rng.uniform(-5, 5, n)
        qdd = qdd_of(q, qd, tau)
        scale = max(1.0, numpy.abs(tau).max())
        numpy.testing.assert_allclose(numeric.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-9 * scale)
        if composite:
            H = numeric.inverse_dynamics(q, qd, numpy.zeros(n))
            numpy.testing.assert_allclose(A(q) @ qdd + H, tau, rtol=0, atol=1e-9 * scale)
    if reference:
        model = ReferenceModel(robot, values)
        for _ in range(2):
            q, qd, tau = rng.uniform(-numpy.pi, numpy.pi, n), rng.uniform(-2, 2, n), rng.uniform(-5, 5, n)
            numpy.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd_of(q, qd, tau)), tau, rtol=0, atol=1e-9 * max(1.0, numpy.abs(tau).max()))
    return program


# ------------------------------------------------------------------- tests
def test_the_numpy_inverse_dynamics_is_the_kinetic_energy_model(rng):
    """The reference itself: its qdd-linear part is the composite inertia
    matrix (checked against the kinetic energy in test_composite), column by
    column, and the static torques with qd = 0 are gravity and wrenches."""
    robot = library("puma560")
    values = random_parameters(robot, rng)
    numeric = NumericRobot(robot, values)
    A = mass_matrix_function(robot, mass_matrix(robot), values)
    q, qd = rng.uniform(-2, 2, robot.nj), rng.uniform(-2, 2, robot.nj)
    H = numeric.inverse_dynamics(q, qd, numpy.zeros(robot.nj))
    columns = numpy.array([numeric.inverse_dynamics(q, qd, e) - H for e in numpy.eye(robot.nj)]).T
    numpy.testing.assert_allclose(columns, A(q), atol=1e-12)


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.long
def test_direct_dynamics_inverts_inverse_dynamics(name, rng):
    check_inverts_inverse_dynamics(library(name), rng, reference=True)


def test_tree_with_moving_base_and_oblique_axes(tree, rng):
    """KK frames with gamma and b, oblique revolute and prismatic axes, a
    fixed leaf; the base turns and accelerates (W0, WP0, VP0)."""
    W0, WP0, VP0 = (sympy.symbols(f"{key}x {key}y {key}z") for key in ("W0", "WP0", "VP0"))
    moving = Robot.create(
        "moving tree", tree.frames, base=Base.from_values(W0=W0, WP0=WP0, VP0=VP0, G=sympy.symbols("G1 G2 G3"))
    )
    check_inverts_inverse_dynamics(moving, rng, reference=True)


def test_fixed_frames_carrying_links_and_wrenches(rng):
    """A fixed frame inside the tree that carries a link with an external
    wrench, with a prismatic joint and a revolute joint hanging on it."""
    wrench = {name: sympy.Symbol(name + "p") for name in WRENCH_NAMES}
    robot = plate_robot(dynamics={"p": wrench}, base=Base.from_values(G=sympy.symbols("G1 G2 G3")))
    check_inverts_inverse_dynamics(robot, rng)


def test_without_rotor_inertia_friction_or_gravity(rng):
    """Customised zeros: no IA (H_j is the articulated inertia alone and the
    row and column of K along the axis vanish), no friction, no gravity."""
    arm = library("puma560")
    dynamics = {label: {"IA": 0, "FV": 0, "FS": 0} for label in arm.joint_labels}
    robot = Robot.create("bare", arm.frames, dynamics=dynamics, base=Base.from_values(G=[0, 0, 0]))
    program = check_inverts_inverse_dynamics(robot, rng)
    assert not [s for s in program.inputs if re.fullmatch(r"(IA|FV|FS)\d|G\d", str(s))]
    assert sum(program.op_count().values()) < sum(direct_dynamics(arm).op_count().values())


def test_trig_rules_do_not_change_the_values(rng):
    robot = library("rx90")
    values = random_parameters(robot, rng)
    q, qd, tau = rng.uniform(-2, 2, 6), rng.uniform(-2, 2, 6), rng.uniform(-5, 5, 6)
    plain = ddm_function(robot, direct_dynamics(robot, trig=False), values)(q, qd, tau)
    numpy.testing.assert_allclose(ddm_function(robot, direct_dynamics(robot), values)(q, qd, tau), plain, rtol=1e-11)


def test_krang_outputs(rng):
    robot = library("krang")
    program = direct_dynamics(robot)
    assert list(program.outputs) == [f"QDP{label}" for label in robot.joint_labels]


def test_inputs_are_q_qd_tau_and_parameters():
    robot = library("rx90")
    program = direct_dynamics(robot)
    names = {str(s) for s in program.inputs}
    assert {"GAM1", "QP6", "th6", "G3", "FX6", "CZ6", "IA3", "FS2", "FV2", "D3", "RL4"} <= names
    assert not any(name.startswith("QDP") for name in names)


def test_rx90_cheaper_than_opensymoro():
    ours = direct_dynamics(library("rx90")).op_count()
    assert sum(ours.values()) < opensymoro_operations("RX90_ddm.txt")


def test_only_serial_and_tree_robots(sr400):
    with pytest.raises(KaneRobotError, match="closed loops"):
        direct_dynamics(sr400)
    arm = library("planar2")
    # A free flyer is a root direct_dynamics serves (see the free-flyer tests
    # below); a floating base with a flexible joint is not.
    with pytest.raises(KaneRobotError, match="floating"):
        direct_dynamics(Robot.create("f", arm.frames, floating=True, joint_parameters={"2": {"eta": 1, "k": sympy.Symbol("K2")}}))


# ------------------------------------------------------------ the free flyer
def free_flyer(name):
    """The satellite of frames/, or the tree of conftest (revolute and
    prismatic joints on KK and general frames, a fixed leaf) on a free flyer."""
    if name == "satellite":
        return library("satellite")
    return floating_copy(tree_robot())


def free_flyer_values(robot, rng):
    """Random physical parameters, gravity along a random direction of the world."""
    values = random_parameters(robot, rng)
    values.update(zip(("G1", "G2", "G3"), 9.81 * rng.normal(size=3) / numpy.sqrt(3)))
    return values


def free_flyer_state(robot, rng):
    """``{symbol name: value}`` of a random configuration and velocity (unit quaternion)."""
    quaternion = rng.normal(size=4)
    quaternion /= numpy.linalg.norm(quaternion)
    state = dict(zip((s.name for s in QUATERNION), quaternion))
    state.update((s.name, x) for s, x in zip(robot.q, rng.uniform(-numpy.pi, numpy.pi, robot.nj)))
    state.update((s.name, x) for s, x in zip(list(BASE_VELOCITY) + list(robot.qd), rng.uniform(-2, 2, 6 + robot.nj)))
    return state


def generalized_forces(robot, values):
    """``(state, nu_dot) -> [F_0; GAM] = A nu_dot + H`` by the Newton-Euler program of the free flyer."""
    f = newton_euler.inverse_dynamics(robot).to_function()
    accelerations = [s.name for s in list(BASE_ACCELERATION) + list(robot.qdd)]

    def forces(state, nu_dot):
        point = dict(values, **state, **dict(zip(accelerations, nu_dot)))
        return f(*[point[s.name] for s in f.args])

    return forces


@pytest.mark.parametrize("name", ["satellite", "tree"])
def test_free_flyer_direct_dynamics_solves_the_newton_euler_model(name, rng):
    """``A nu_dot = [0; tau] - H``, A and H from the Newton-Euler program
    (``H`` at nu_dot = 0, column k of A the forces at e_k less H), friction,
    rotor inertia, external wrenches and gravity included."""
    robot = free_flyer(name)
    values = free_flyer_values(robot, rng)
    program = direct_dynamics(robot)
    assert list(program.outputs) == [s.name for s in BASE_ACCELERATION] + [f"QDP{label}" for label in robot.joint_labels]
    tau_names = [robot.joint_parameters[label]["GAM"].name for label in robot.joint_labels]
    state_names = [s.name for s in list(robot.q) + list(QUATERNION) + list(robot.qd) + list(BASE_VELOCITY)] + tau_names
    assert [s.name for s in program.inputs[: len(state_names)]] == state_names
    f = program.to_function()
    forces = generalized_forces(robot, values)
    nv = 6 + robot.nj
    for _ in range(3):
        state = free_flyer_state(robot, rng)
        tau = rng.uniform(-5, 5, robot.nj)
        H = forces(state, numpy.zeros(nv))
        A = numpy.array([forces(state, e) - H for e in numpy.eye(nv)]).T
        expected = numpy.linalg.solve(A, numpy.concatenate([numpy.zeros(6), tau]) - H)
        point = dict(values, **state, **dict(zip(tau_names, tau)))
        nu_dot = f(*[point[s.name] for s in f.args])
        numpy.testing.assert_allclose(nu_dot, expected, rtol=0, atol=1e-9 * max(1.0, numpy.abs(expected).max()))


@pytest.mark.parametrize("name", ["satellite", "tree"])
def test_base_acceleration_leaves_the_base_free(name, rng):
    """The free-floating model's base acceleration and torques, put back into
    the Newton-Euler program, need no base wrench and give the torques."""
    robot = free_flyer(name)
    values = free_flyer_values(robot, rng)
    program = base_acceleration(robot)
    assert list(program.outputs) == [s.name for s in BASE_ACCELERATION] + [f"GAM{label}" for label in robot.joint_labels]
    f = program.to_function()
    forces = generalized_forces(robot, values)
    for _ in range(3):
        state = free_flyer_state(robot, rng)
        qdd = rng.uniform(-3, 3, robot.nj)
        point = dict(values, **state, **{s.name: x for s, x in zip(robot.qdd, qdd)})
        out = f(*[point[s.name] for s in f.args])
        expected = numpy.concatenate([numpy.zeros(6), out[6:]])
        got = forces(state, numpy.concatenate([out[:6], qdd]))
        numpy.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * max(1.0, numpy.abs(out).max()))


def test_each_joint_has_its_torque_or_its_acceleration_known():
    arm = library("planar2")
    with pytest.raises(KaneRobotError, match="planar2: joint 2 needs either its torque or its acceleration known, not neither"):
        articulated_bodies(Program(), arm, known_tau={"1": arm.joint_parameters["1"]["GAM"]})
    with pytest.raises(KaneRobotError, match="joint 1 needs either its torque or its acceleration known, not both"):
        articulated_bodies(Program(), arm, known_tau={"1": 0, "2": 0}, known_qdd={"1": 0})


def test_free_flyer_with_known_torques_and_known_accelerations(rng):
    """Every other joint of the floating tree driven at a known acceleration,
    the others by known torques: the base acceleration, the unknown
    accelerations and the unknown torques, put back into the Newton-Euler
    program, give no base wrench and the known torques."""
    robot = free_flyer("tree")
    labels = robot.joint_labels
    known_qdd = {label: robot.joint_parameters[label]["QDP"] for label in labels[::2]}
    known_tau = {label: robot.joint_parameters[label]["GAM"] for label in labels if label not in known_qdd}
    program = Program()
    bodies = articulated_bodies(program, robot, known_tau, known_qdd)
    assert sorted(bodies.torque) == sorted(known_qdd) and sorted(bodies.qdd) == sorted(known_tau)
    outputs = list(bodies.root) + [bodies.qdd[j] if j in known_tau else bodies.torque[j] for j in labels]
    for k, value in enumerate(outputs):
        program.set_output(f"OUT{k}", value)
    f = program.to_function()
    values = free_flyer_values(robot, rng)
    forces = generalized_forces(robot, values)
    for _ in range(2):
        state = free_flyer_state(robot, rng)
        given = dict(zip((s.name for s in list(known_qdd.values()) + list(known_tau.values())), rng.uniform(-3, 3, robot.nj)))
        out = f(*[{**values, **state, **given}.get(s.name) for s in f.args])
        solved = dict(zip(labels, out[6:]))
        nu_dot = list(out[:6]) + [given[known_qdd[j].name] if j in known_qdd else solved[j] for j in labels]
        expected = [0.0] * 6 + [solved[j] if j in known_qdd else given[known_tau[j].name] for j in labels]
        numpy.testing.assert_allclose(forces(state, nu_dot), expected, rtol=0, atol=1e-9 * max(1.0, numpy.abs(out).max()))


def test_a_joint_moving_only_massless_links_is_a_clear_error():
    """No mass and no rotor inertia behind a joint: the recursive model would divide
    by a structural zero; it says which joint and what to give instead."""
    import kanerobot as kr
    from kanerobot.errors import SingularityError

    arm = kr.load(kr.frames_path("planar2"))
    massless = dict.fromkeys(("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA"), 0)
    robot = Robot.create("m", arm.frames, dynamics={"2": massless})
    with pytest.raises(SingularityError, match=r"joint 2 moves only massless links .* IA2"):
        kr.derive(robot).program("direct_dynamics")
