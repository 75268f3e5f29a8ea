"""Inertia matrix by composite links, checked against the kinetic energy.

The independent path is the kinetic energy of the links, from the link
velocities of :func:`kanerobot.kinematics.link_velocities` evaluated
numerically::

    1/2 qd^T A qd = sum_j 1/2 (M_j v.v + 2 v.(w x MS_j) + w^T J_j w) + 1/2 sum_j IA_j qd_j^2

for random qd, and entry by entry by polarization:
``A_jj = 2 T(e_j)`` and ``A_ij = T(e_i + e_j) - T(e_i) - T(e_j)``.
Parameters are random but physically consistent (:func:`random_values`).
"""

import time

import numpy
import pytest
import sympy

import kanerobot as kr
from kanerobot import geometry, kinematics
from kanerobot.dynamics.composite import mass_matrix
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Base, Frame, GeneralPlacement, KKPlacement, Robot, WRENCH_NAMES
from kanerobot.robot.expressions import parse_expression
from kanerobot.symbolic import count_ops
from kanerobot.symbolic.printing import matrix_entry_names

from conftest import CORPUS

ROBOTS = ["rx90", "stanford", "puma560", "krang"]


# ------------------------------------------------------------ parameters
def random_rotation(rng):
    Q, R = numpy.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * numpy.sign(numpy.diag(R))
    return Q if numpy.linalg.det(Q) > 0 else -Q


def random_body(rng, size=0.3):
    """SYMORO parameters of a random rigid body: mass M > 0, centre of mass
    c, inertia about the centre of mass positive definite with the triangle
    inequalities (principal moments b+d, a+d, a+b of point masses a, b, d on
    three axes), then J_O = J_G + M (c.c I - c c^T) and MS = M c."""
    M = rng.uniform(0.5, 5.0)
    c = rng.uniform(-size, size, 3)
    a, b, d = M * size**2 * rng.uniform(0.01, 1.0, 3)
    R = random_rotation(rng)
    J_G = R @ numpy.diag([b + d, a + d, a + b]) @ R.T
    J = J_G + M * (c @ c * numpy.eye(3) - numpy.outer(c, c))
    MS = M * c
    return {
        "XX": J[0, 0], "XY": J[0, 1], "XZ": J[0, 2], "YY": J[1, 1], "YZ": J[1, 2], "ZZ": J[2, 2],
        "MX": MS[0], "MY": MS[1], "MZ": MS[2], "M": M,
    }  # fmt: skip


def random_values(robot, rng, gravity=9.81):
    """``{Symbol: float}`` for every parameter symbol of ``robot``: lengths in
    [0.1, 0.6], physically consistent links, rotor inertia, friction, external
    wrenches, a gravity of norm ``gravity`` in a random direction and a small
    base motion."""
    values = {}

    def put(expr, value):
        if isinstance(expr, sympy.Symbol) and expr not in values:
            values[expr] = float(value)

    for name in robot.geometric_parameters:
        put(sympy.Symbol(name), rng.uniform(0.1, 0.6))
    for label in robot.links:
        link = robot.dynamics[label]
        for name, value in random_body(rng).items():
            put(link[name], value)
        put(link["IA"], rng.uniform(0.01, 0.5))
        put(link["FV"], rng.uniform(0.0, 1.0))
        put(link["FS"], rng.uniform(0.0, 1.0))
        for name in WRENCH_NAMES:
            put(link[name], rng.uniform(-2.0, 2.0))
    direction = rng.normal(size=3)
    for g, value in zip(robot.base.G, direction * gravity / numpy.linalg.norm(direction)):
        put(g, value)
    for key in ("W0", "WP0", "V0", "VP0"):
        for entry in getattr(robot.base, key):
            put(entry, rng.uniform(-0.5, 0.5))
    return values


def numeric_link(robot, values, label):
    """(J, MS, M, IA) of link ``label`` as numbers."""
    p = {name: float(sympy.sympify(v).xreplace(values)) for name, v in robot.dynamics[label].items()}
    J = numpy.array([[p["XX"], p["XY"], p["XZ"]], [p["XY"], p["YY"], p["YZ"]], [p["XZ"], p["YZ"], p["ZZ"]]])
    return J, numpy.array([p["MX"], p["MY"], p["MZ"]]), p["M"], p["IA"]


# ------------------------------------------------------------- evaluation
def mass_matrix_function(robot, program, values):
    """q -> the n x n matrix A of ``program`` (upper triangle mirrored)."""
    n = robot.nj
    parameters = sorted(set(program.inputs) - set(robot.q), key=str)
    f = program.to_function(args=list(robot.q) + parameters)
    fixed = [values[s] for s in parameters]
    names = matrix_entry_names("A", (n, n))
    where = {names[r][c]: (r, c) for r in range(n) for c in range(r, n)}
    assert sorted(f.outputs) == sorted(where), "one output per upper-triangle entry"

    def A(q):
        out = f(*q, *fixed)
        M = numpy.zeros((n, n))
        for name, value in zip(f.outputs, out):
            r, c = where[name]
            M[r, c] = M[c, r] = value
        return M

    return A


def kinetic_energy_function(robot, values):
    """(q, qd) -> kinetic energy of the links and rotors, from the link
    velocities of the kinematic recursion (SYMORO+ eq. 6), base at rest."""
    states = kinematics.link_velocities(robot, base=False)
    links = [label for label in robot.links]
    rows = [entry for label in links for entry in list(states[label][0]) + list(states[label][1])]
    named = {str(k): v for k, v in values.items()}
    wv = geometry.numeric_function(robot, sympy.Matrix(rows), named, ("q", "qd"))
    inertia = [numeric_link(robot, values, label) for label in links]
    rotor = numpy.array([numeric_link(robot, values, label)[3] if label in robot.dynamics else 0.0 for label in robot.joint_labels])

    def T(q, qd):
        energy = 0.5 * rotor @ (numpy.asarray(qd) ** 2)
        for (J, MS, M, _), row in zip(inertia, wv(q, qd).reshape(-1, 6)):
            w, v = row[:3], row[3:]
            energy += 0.5 * (M * v @ v + 2 * v @ numpy.cross(w, MS) + w @ J @ w)
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


def check_against_kinetic_energy(robot, rng, program=None, states=2):
    program = mass_matrix(robot) if program is None else program
    values = random_values(robot, rng)
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
    return program


def library(name):
    return kr.load(kr.frames_path(name))


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_is_the_kinetic_energy(name, rng):
    robot = library(name)
    program = check_against_kinetic_energy(robot, rng)
    # and the columns of tests/reference_dynamics.py's RNEA (qd = 0, g = 0, qdd = e_j), when it is there
    reference = pytest.importorskip("reference_dynamics")
    named = reference.random_parameters(robot, rng)
    A = mass_matrix_function(robot, program, {sympy.Symbol(k): v for k, v in named.items()})
    q = rng.uniform(-numpy.pi, numpy.pi, robot.nj)
    expected = reference.mass_matrix_by_unit_accelerations(robot, named, q)
    numpy.testing.assert_allclose(A(q), expected, rtol=0, atol=1e-10 * numpy.abs(expected).max())


def test_mass_matrix_of_the_test_tree(tree, rng):
    # KK frames with gamma and b, oblique revolute and prismatic axes, a fixed leaf
    check_against_kinetic_energy(tree, rng)


def test_fixed_frames_carrying_links_inside_a_chain(rng):
    """A fixed frame in the middle of the chain that carries its own link
    (a tool plate) and a prismatic joint after it."""
    q1, q2, q3, L, b = sympy.symbols("q1 q2 q3 L b")
    robot = Robot.create(
        "plate",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=q1)),
            Frame("p", "1", 2, 0, KKPlacement(alpha=sympy.pi / 3, d=L, theta=0.4)),
            Frame("2", "p", 1, 1, GeneralPlacement(sympy.eye(3), [0, b, 0], [0, 0.6, 0.8], q2)),
            Frame("3", "p", 0, 1, KKPlacement(gamma=0.2, b=b, alpha=-sympy.pi / 2, theta=q3)),
        ],
        links=["1", "p", "2", "3"],
    )
    program = check_against_kinetic_energy(robot, rng)
    assert program.outputs["A23"] == 0  # 2 and 3 are on different branches


def test_rotor_inertia_only_on_the_diagonal(rng):
    robot = library("stanford")
    values = random_values(robot, rng)
    with_rotor = mass_matrix_function(robot, mass_matrix(robot), values)
    without = mass_matrix_function(robot, mass_matrix(robot, rotor=False), values)
    q = rng.uniform(-2, 2, robot.nj)
    IA = [values[robot.dynamics[label]["IA"]] for label in robot.joint_labels]
    numpy.testing.assert_allclose(with_rotor(q) - without(q), numpy.diag(IA), atol=1e-12)
    assert not any(str(s).startswith("IA") for s in mass_matrix(robot, rotor=False).inputs)


def test_trig_rules_do_not_change_the_values(rng):
    robot = library("puma560")
    values = random_values(robot, rng)
    q = rng.uniform(-2, 2, robot.nj)
    plain = mass_matrix_function(robot, mass_matrix(robot, trig=False), values)(q)
    numpy.testing.assert_allclose(mass_matrix_function(robot, mass_matrix(robot), values)(q), plain, rtol=1e-12, atol=1e-12)


def test_krang_names_zeros_and_time(rng):
    robot = library("krang")
    start = time.perf_counter()
    program = mass_matrix(robot)
    elapsed = time.perf_counter() - start
    assert elapsed < 20, f"Krang's inertia matrix took {elapsed:.1f} s"
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
    program = mass_matrix(library("rx90"))
    ours = program.op_count()
    path = CORPUS / "RX90_inm.txt"
    if not path.is_file():
        pytest.skip("RX90_inm.txt is not beside this checkout")
    text = path.read_text().split("Equations:", 1)[1]
    reference = {"add": 0, "mul": 0, "fn": 0}
    for line in text.splitlines():
        name, _, expr = line.partition(" = ")
        if expr:
            for key, value in count_ops(parse_expression(expr)).items():
                reference[key] += value
    assert sum(ours.values()) < sum(reference.values())


def test_only_serial_and_tree_robots_with_a_fixed_base(sr400):
    with pytest.raises(KaneRobotError, match="closed loops"):
        mass_matrix(sr400)
    arm = library("planar2")
    floating = Robot.create("f", arm.frames, floating=True)
    with pytest.raises(KaneRobotError, match="floating"):
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
