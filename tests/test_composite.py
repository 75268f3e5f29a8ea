"""Inertia matrix by composite links, checked against the kinetic energy.

The independent path is the kinetic energy of the links, from the link
velocities of :func:`kanerobot.kinematics.link_velocities` evaluated
numerically::

    1/2 qd^T A qd = sum_j 1/2 (M_j v.v + 2 v.(w x MS_j) + w^T J_j w) + 1/2 sum_j IA_j qd_j^2

for random qd, and entry by entry by polarization:
``A_jj = 2 T(e_j)`` and ``A_ij = T(e_i + e_j) - T(e_i) - T(e_j)``; on the
library robots, also the columns of the reference RNEA of
tests/reference_dynamics.py.  On a free flyer (the satellite, free-flying
copies of the test trees), A is checked against the columns of the
Newton-Euler inverse dynamics with unit accelerations (eq. 26), base speeds
first.  Parameters are random but physically consistent
(:func:`kanerobot.dynamics.parameters.random_parameters`).
"""


import numpy
import pytest
import sympy
from conftest import floating_copy, library, mass_matrix_function, opensymoro_operations, plate_robot, tree_robot
from reference_dynamics import mass_matrix_by_unit_accelerations, numeric_link

from kanerobot import geometry, kinematics
from kanerobot.dynamics import floating, newton_euler
from kanerobot.dynamics.composite import mass_matrix
from kanerobot.dynamics.free_flyer import BASE_ACCELERATION, BASE_VELOCITY, QUATERNION
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Robot
from kanerobot.symbolic.printing import matrix_entry_names

ROBOTS = ["rx90", "stanford", "puma560", "krang"]


# ------------------------------------------------------------- evaluation
def kinetic_energy_function(robot, values):
    """(q, qd) -> kinetic energy of the links and rotors, from the link
    velocities of the kinematic recursion (SYMORO+ eq. 6), base at rest."""
    states = kinematics.link_velocities(robot, base=False)
    rows = [entry for label in robot.links for entry in list(states[label][0]) + list(states[label][1])]
    wv = geometry.numeric_function(robot, sympy.Matrix(rows), values, ("q", "qd"))
    inertia = {label: numeric_link(robot, values, label) for label in robot.links}
    rotor = numpy.array([inertia[label][2]["IA"] if label in inertia else 0.0 for label in robot.joint_labels])

    def T(q, qd):
        energy = 0.5 * rotor @ (numpy.asarray(qd) ** 2)
        for (J, MS, p), row in zip(inertia.values(), wv(q, qd).reshape(-1, 6)):
            w, v = row[:3], row[3:]
            energy += 0.5 * (p["M"] * v @ v + 2 * v @ numpy.cross(w, MS) + w @ J @ w)
        return energy

    return T


def polarized_mass_matrix(T, q, n):
    """A from the kinetic energy alone: A_jj = 2 T(e_j), A_ij = T(e_i + e_j) - T(e_i) - T(e_j)."""
    E = numpy.eye(n)
    single = [T(q, E[j]) for j in range(n)]
    A = numpy.diag(2 * numpy.array(single))
    for i in range(n):
        for j in range(i + 1, n):
            A[i, j] = A[j, i] = T(q, E[i] + E[j]) - single[i] - single[j]
    return A


def check_against_kinetic_energy(robot, rng, program=None, states=2, reference=False):
    """The kinetic energy checks at ``states`` random q; with ``reference``,
    also the columns of the reference RNEA (qd = 0, g = 0, qdd = e_j) at one
    more q."""
    program = mass_matrix(robot) if program is None else program
    values = random_parameters(robot, rng)
    A = mass_matrix_function(robot, program, values)
    T = kinetic_energy_function(robot, values)
    n = robot.nj
    for _ in range(states):
        q = rng.uniform(-numpy.pi, numpy.pi, n)
        Aq = A(q)
        for _ in range(3):
            qd = rng.uniform(-2, 2, n)
            assert 0.5 * qd @ Aq @ qd == pytest.approx(T(q, qd), rel=1e-10)
        numpy.testing.assert_allclose(Aq, polarized_mass_matrix(T, q, n), rtol=1e-9, atol=1e-10 * numpy.abs(Aq).max())
        numpy.testing.assert_array_equal(Aq, Aq.T)
        assert numpy.linalg.eigvalsh(Aq).min() > 0
    if reference:
        q = rng.uniform(-numpy.pi, numpy.pi, n)
        expected = mass_matrix_by_unit_accelerations(robot, values, q)
        numpy.testing.assert_allclose(A(q), expected, rtol=0, atol=1e-10 * numpy.abs(expected).max())
    return program


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_is_the_kinetic_energy(name, rng):
    check_against_kinetic_energy(library(name), rng, reference=True)


def test_mass_matrix_of_the_test_tree(tree, rng):
    # KK frames with gamma and b, oblique revolute and prismatic axes, a fixed leaf
    check_against_kinetic_energy(tree, rng)


def test_fixed_frames_carrying_links_inside_a_chain(rng):
    """A fixed frame in the middle of the chain that carries its own link
    (a tool plate) and a prismatic joint after it."""
    program = check_against_kinetic_energy(plate_robot(), rng)
    assert program.outputs["A23"] == 0  # 2 and 3 are on different branches


def test_rotor_inertia_only_on_the_diagonal(rng):
    robot = library("stanford")
    values = random_parameters(robot, rng)
    with_rotor = mass_matrix_function(robot, mass_matrix(robot), values)
    without = mass_matrix_function(robot, mass_matrix(robot, rotor=False), values)
    q = rng.uniform(-2, 2, robot.nj)
    IA = [values[str(robot.dynamics[label]["IA"])] for label in robot.joint_labels]
    numpy.testing.assert_allclose(with_rotor(q) - without(q), numpy.diag(IA), atol=1e-12)
    assert not any(str(s).startswith("IA") for s in mass_matrix(robot, rotor=False).inputs)


def test_trig_rules_do_not_change_the_values(rng):
    robot = library("puma560")
    values = random_parameters(robot, rng)
    q = rng.uniform(-2, 2, robot.nj)
    plain = mass_matrix_function(robot, mass_matrix(robot, trig=False), values)(q)
    numpy.testing.assert_allclose(mass_matrix_function(robot, mass_matrix(robot), values)(q), plain, rtol=1e-12, atol=1e-12)


def test_krang_names_and_zeros(rng):
    robot = library("krang")
    program = mass_matrix(robot)
    outputs = program.outputs
    n = robot.nj
    assert len(outputs) == n * (n + 1) // 2
    assert list(outputs)[:3] == ["A1_1", "A1_2", "A2_2"]
    labels = robot.joint_labels
    left, right = labels.index("5l"), labels.index("7r")
    assert outputs[f"A{left + 1}_{right + 1}"] == 0  # the two arms share no joint
    assert outputs[f"A1_{right + 1}"] != 0


def test_serial_names_and_output_order():
    program = mass_matrix(library("rx90"))
    assert list(program.outputs) == [f"A{i}{j}" for j in range(1, 7) for i in range(1, j + 1)]


def test_rx90_cheaper_than_opensymoro():
    ours = mass_matrix(library("rx90")).op_count()
    assert sum(ours.values()) < opensymoro_operations("RX90_inm.txt")


def test_closed_loops_wheels_and_a_free_flyer_without_link_0_are_refused(sr400):
    with pytest.raises(KaneRobotError, match="closed loops"):
        mass_matrix(sr400)
    arm = library("planar2")
    # A floating arm is served now (its base carries link 0 by default): base speeds first, 8 x 8.
    assert list(mass_matrix(Robot.create("f", arm.frames, floating=True)).outputs)[-1] == "A88"
    floating = Robot.create("f", arm.frames, links=arm.links, floating=True)
    with pytest.raises(KaneRobotError, match=r"the inertia matrix of f: the floating base must carry link 0 \(give its dynamic parameters\)"):
        mass_matrix(floating)
    with pytest.raises(KaneRobotError, match="wheeled"):
        mass_matrix(Robot.create("w", arm.frames, wheeled=True))


def test_customised_zeros_propagate():
    """Links without products of inertia and with the centre of mass on z
    give fewer operations: the zeros are used while the model is built."""
    arm = library("rx90")
    full = sum(mass_matrix(arm).op_count().values())
    dynamics = {label: {"XY": 0, "XZ": 0, "YZ": 0, "MX": 0, "MY": 0} for label in arm.joint_labels}
    symmetric = Robot.create("sym", arm.frames, dynamics=dynamics, base=arm.base)
    assert sum(mass_matrix(symmetric).op_count().values()) < 0.8 * full


# ------------------------------------------------------------ free flyer
FREE_FLYERS = {
    "satellite": lambda: library("satellite"),
    "tree": lambda: floating_copy(tree_robot()),  # two branches, oblique prismatic and revolute axes, a fixed leaf
    "plate": lambda: floating_copy(plate_robot()),  # a fixed frame that carries a link inside the tree
}


def free_flyer_mass_matrix(program, nv, values):
    """``state -> A``: the (nv, nv) matrix of a free flyer's A program, whose zero entries are not outputs."""
    f = program.to_function()
    names = matrix_entry_names("A", (nv, nv))
    where = {names[r][c]: (r, c) for r in range(nv) for c in range(r, nv)}
    assert set(f.outputs) <= set(where)

    def A(state):
        M = numpy.zeros((nv, nv))
        for name, value in zip(f.outputs, f(*[state.get(s.name, values.get(s.name)) for s in f.args])):
            r, c = where[name]
            M[r, c] = M[c, r] = value
        return M

    return A


@pytest.mark.parametrize("name", list(FREE_FLYERS))
def test_free_flyer_columns_are_unit_accelerations(name, rng):
    """Column k of A is the free-flyer inverse dynamics at rest with ``qdd = e_k``
    (eq. 26; base speeds v, w first), less the same at ``qdd = 0`` (gravity,
    given in the world frame and turned by the quaternion, and the external
    wrenches): Newton-Euler's forward and backward recursions against the
    composite links."""
    robot = FREE_FLYERS[name]()
    nv = 6 + robot.nj
    values = random_parameters(robot, rng, gravity=(1.5, -2.0, -9.81))
    A = free_flyer_mass_matrix(mass_matrix(robot), nv, values)
    inverse = newton_euler.inverse_dynamics(robot).to_function()
    speeds = list(BASE_VELOCITY) + list(robot.qd)
    accelerations = list(BASE_ACCELERATION) + list(robot.qdd)
    for _ in range(2):
        quaternion = rng.normal(size=4)
        state = dict(zip([s.name for s in QUATERNION], quaternion / numpy.linalg.norm(quaternion)))
        state.update({s.name: v for s, v in zip(robot.q, rng.uniform(-numpy.pi, numpy.pi, robot.nj))})
        state.update({s.name: 0.0 for s in speeds})

        def generalized_forces(qdd, state=state):
            point = dict(state, **{s.name: v for s, v in zip(accelerations, qdd)})
            return inverse(*[point.get(s.name, values.get(s.name)) for s in inverse.args])

        rest = generalized_forces(numpy.zeros(nv))
        columns = numpy.column_stack([generalized_forces(e) - rest for e in numpy.eye(nv)])
        Aq = A(state)
        numpy.testing.assert_allclose(Aq, columns, rtol=0, atol=1e-10 * numpy.abs(columns).max())
        assert numpy.linalg.eigvalsh(Aq).min() > 0
        # The base block is the whole robot's mass times the identity where the forces meet the base's speeds.
        total = sum(values[str(robot.dynamics[label]["M"])] for label in robot.links)
        numpy.testing.assert_allclose(Aq[:3, :3], total * numpy.eye(3), rtol=1e-12)


def test_free_flyer_outputs_and_rotor():
    """The satellite's outputs are the nonzero entries of the 9 x 9 upper
    triangle (base speeds first): the base block's structural zeros and A37
    (joint 1 turns about z_0, so composite link 1 pushes no force along it)
    are left out; IA only adds to the joints' diagonal."""
    robot = library("satellite")
    program = mass_matrix(robot)
    names = matrix_entry_names("A", (9, 9))
    upper = [names[r][c] for c in range(9) for r in range(c + 1)]
    assert list(program.outputs) == [n for n in upper if n not in {"A12", "A13", "A23", "A14", "A25", "A36", "A37"}]
    assert program.outputs["A11"] == program.outputs["A22"] == program.outputs["A33"] == sympy.Symbol("MP0")
    assert program.op_count() == {"add": 104, "mul": 99, "fn": 6}
    assert floating.mass_matrix is mass_matrix
    without = mass_matrix(robot, rotor=False)
    for k in (7, 8, 9):
        assert sympy.simplify(program.outputs[f"A{k}{k}"] - without.outputs[f"A{k}{k}"]) == sympy.Symbol(f"IA{k - 6}")
    assert not any(str(s).startswith("IA") for s in without.inputs)
