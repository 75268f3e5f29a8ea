"""The Lagrange engine against Newton-Euler, composite links and energies
evaluated independently in numpy.

* Every model (A, C, Q, H, inverse dynamics) equals the other engines'
  (:mod:`kanerobot.dynamics.newton_euler`, :mod:`~kanerobot.dynamics.composite`,
  :mod:`~kanerobot.dynamics.coriolis` on the composite A) to 1e-9 relative,
  on random states and random physically consistent parameters
  (:func:`kanerobot.dynamics.parameters.random_parameters`), gravity in a
  random direction and external wrenches on the terminal links.
* The Lagrange models agree with one another: ``GAM = A qdd + C qd + Q +
  friction + J^T wrench``; ``A`` is symmetric positive definite and ``A' - 2C``
  skew-symmetric.
* A floating base is the free-flyer root joint: every model of a floating
  robot (the satellite, the tree on a floating base) equals the
  floating-base Newton-Euler programs of :mod:`~kanerobot.dynamics.floating`
  (same inputs, outputs), ``C nu`` is Newton-Euler's ``H - Q`` and ``A' - 2C``
  is skew with ``A'`` by finite differences.
* ``Q`` is the finite-difference gradient of the potential energy, and
  ``1/2 qd^T A qd`` the kinetic energy, both computed in numpy from the
  numeric transforms of :func:`kanerobot.geometry.numeric_transform` only
  (velocities by finite differences of the transforms), no Jacobian and no
  program of kanerobot.
"""

import dataclasses
import functools

import numpy
import pytest
import sympy
from conftest import floating_copy, library, program_function

import kanerobot as kr
from kanerobot import geometry
from kanerobot.dynamics import composite, coriolis, free_flyer, lagrange, newton_euler
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import WRENCH_NAMES, Robot
from kanerobot.symbolic.printing import matrix_entry_names

ROBOTS = ["planar2", "rx90", "stanford", "puma560", "krang"]
RTOL = 1e-9

# Lagrange model -> the same model by the other engines
ENGINES = {
    "mass_matrix": lambda robot: composite.mass_matrix(robot),
    "gravity": lambda robot: newton_euler.gravity_torques(robot),
    "h": lambda robot: newton_euler.coriolis_gravity(robot),
    "inverse_dynamics": lambda robot: newton_euler.inverse_dynamics(robot),
    "coriolis_matrix": lambda robot: coriolis.coriolis_matrix(robot, program(robot, "composite")),
}

_PROGRAMS = {}


# ------------------------------------------------------------------ robots
def with_wrench_and_gravity(robot):
    """``robot`` with gravity ``[G1, G2, G3]`` (any direction) and a symbolic
    external wrench on every leaf link (FX6 .. CZ6, FX10l ..)."""
    leaves = [label for label in robot.links if not robot.children(label)]
    dynamics = {label: dict(robot.dynamics[label]) for label in robot.links}
    for label in leaves:
        for name in WRENCH_NAMES:
            dynamics[label][name] = sympy.Symbol(f"{name}{label}")
    return Robot.create(
        robot.name,
        robot.frames,
        links=robot.links,
        dynamics=dynamics,
        joint_parameters={label: dict(p) for label, p in robot.joint_parameters.items()},
        base=dataclasses.replace(robot.base, G=sympy.ImmutableMatrix(sympy.symbols("G1:4"))),
        floating=robot.floating,
    )


def tree_with_fixed_link(tree):
    """The conftest tree (gamma and b, oblique revolute and prismatic axes,
    general frames) with a link on its fixed frame 7 too."""
    return Robot.create(tree.name, tree.frames, links=tree.links + ("7",))


@functools.cache
def wrenched(name):
    """The library robot ``name`` with a wrench on its leaves and a general gravity, built once."""
    return with_wrench_and_gravity(library(name))


def program(robot, model):
    """Program of a model, derived once per robot."""
    key = (id(robot), model)  # the robot is kept in the cache: its id stays its own
    if key not in _PROGRAMS:
        if model == "composite":
            result = composite.mass_matrix(robot)
        elif model.startswith("ne:"):
            result = ENGINES[model[3:]](robot)
        elif model == "coriolis_matrix":
            result = lagrange.coriolis_matrix(robot, program(robot, "mass_matrix"))
        else:
            result = getattr(lagrange, model)(robot)
        _PROGRAMS[key] = (robot, result)
    return _PROGRAMS[key][1]


def evaluate(prog, values):
    """Outputs of ``prog`` as a dict of arrays of shape (states,): ``values``
    holds numbers (parameters) and arrays of states (q, QP, QDP)."""
    f = program_function(prog)
    states = max(numpy.size(v) for v in values.values())
    return {name: numpy.broadcast_to(x, (states,)) for name, x in zip(f.outputs, f(*[values[s.name] for s in f.args]))}


def random_state(robot, rng, states=4):
    """Random physically consistent parameters, and ``states`` random (q, qd,
    qdd) as arrays, keyed by symbol name."""
    values = random_parameters(robot, rng)
    for symbols, (low, high) in ((robot.q, (-numpy.pi, numpy.pi)), (robot.qd, (-2, 2)), (robot.qdd, (-3, 3))):
        for s in symbols:
            if isinstance(s, sympy.Symbol):
                values[s.name] = rng.uniform(low, high, states)
    return values


def matrix(outputs, prefix, n, symmetric):
    """(states, n, n) array from the outputs ``<prefix><i><j>`` (upper triangle if symmetric)."""
    names = matrix_entry_names(prefix, (n, n))
    keys = [names[min(i, j)][max(i, j)] if symmetric else names[i][j] for i in range(n) for j in range(n)]
    return stack(outputs, keys).reshape(-1, n, n)


def vector(outputs, prefix, labels):
    """(states, n) array from the outputs ``<prefix><label>``."""
    return stack(outputs, [f"{prefix}{label}" for label in labels])


def stack(outputs, keys):
    """(states, len(keys)) array of the outputs ``keys``."""
    return numpy.array([outputs[key] for key in keys]).T


def assert_relative(actual, expected, rtol=RTOL, what=""):
    """``max |actual - expected| <= rtol * max |expected|``, state by state."""
    actual, expected = numpy.asarray(actual), numpy.asarray(expected)
    axes = tuple(range(1, expected.ndim))
    error = numpy.max(numpy.abs(actual - expected), axis=axes)
    scale = numpy.maximum(numpy.max(numpy.abs(expected), axis=axes), 1e-12)
    assert numpy.all(error <= rtol * scale), f"{what}: relative error {numpy.max(error / scale):.3g}"


# --------------------------------------------------- against other engines
# Krang is slow here (test_engines.py holds its Lagrange models equal to Newton-Euler's in the default run).
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "krang" else n for n in ROBOTS])
@pytest.mark.long
def test_equals_newton_euler_and_composite(name, rng):
    robot = wrenched(name)
    n, labels = robot.nj, robot.joint_labels
    for _ in range(2):  # two parameter sets, four states each
        values = random_state(robot, rng)
        A = matrix(evaluate(program(robot, "mass_matrix"), values), "A", n, True)
        assert_relative(A, matrix(evaluate(program(robot, "composite"), values), "A", n, True), what=f"{name} A")
        C = matrix(evaluate(program(robot, "coriolis_matrix"), values), "C", n, False)
        C_ne = matrix(evaluate(program(robot, "ne:coriolis_matrix"), values), "C", n, False)
        assert_relative(C, C_ne, what=f"{name} C")
        Q = vector(evaluate(program(robot, "gravity"), values), "Q", labels)
        assert_relative(Q, vector(evaluate(program(robot, "ne:gravity"), values), "Q", labels), what=f"{name} Q")
        H = vector(evaluate(program(robot, "h"), values), "GAM", labels)
        assert_relative(H, vector(evaluate(program(robot, "ne:h"), values), "GAM", labels), what=f"{name} H")
        GAM = vector(evaluate(program(robot, "inverse_dynamics"), values), "GAM", labels)
        GAM_ne = vector(evaluate(program(robot, "ne:inverse_dynamics"), values), "GAM", labels)
        assert_relative(GAM, GAM_ne, what=f"{name} inverse dynamics")


# Krang's case (12 s) is slow: tests/test_engines.py holds Krang's Lagrange
# models equal to Newton-Euler in the default run.
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "krang" else n for n in ROBOTS])
def test_models_agree_with_one_another(name, rng):
    """GAM = A qdd + H and H = C qd + Q + friction + J^T wrench, all Lagrange."""
    robot = wrenched(name)
    n, labels = robot.nj, robot.joint_labels
    values = random_state(robot, rng)
    A = matrix(evaluate(program(robot, "mass_matrix"), values), "A", n, True)
    C = matrix(evaluate(program(robot, "coriolis_matrix"), values), "C", n, False)
    Q = vector(evaluate(program(robot, "gravity"), values), "Q", labels)
    H = vector(evaluate(program(robot, "h"), values), "GAM", labels)
    GAM = vector(evaluate(program(robot, "inverse_dynamics"), values), "GAM", labels)
    qd = numpy.array([values[s.name] for s in robot.qd]).T
    qdd = numpy.array([values[s.name] for s in robot.qdd]).T
    assert_relative(GAM, numpy.einsum("kij,kj->ki", A, qdd) + H, what="A qdd + H")
    # H minus C qd + Q is friction plus the wrench term: linear in FV, FS and
    # the wrench, so it vanishes when they are 0.
    quiet = dict(values)
    for label in robot.links:
        for key in ("FV", "FS") + WRENCH_NAMES:
            entry = robot.dynamics[label][key]
            if isinstance(entry, sympy.Symbol):
                quiet[entry.name] = 0.0
    H0 = vector(evaluate(program(robot, "h"), quiet), "GAM", labels)
    assert_relative(H0, numpy.einsum("kij,kj->ki", C, qd) + Q, what="H = C qd + Q")


@pytest.mark.long
def test_tree_with_oblique_axes_prismatic_joint_and_fixed_link(tree, rng):
    robot = with_wrench_and_gravity(tree_with_fixed_link(tree))
    values = random_state(robot, rng)
    pairs = [("mass_matrix", "composite"), ("coriolis_matrix", "ne:coriolis_matrix"), ("gravity", "ne:gravity"),
             ("h", "ne:h"), ("inverse_dynamics", "ne:inverse_dynamics")]  # fmt: skip
    for mine, theirs in pairs:
        a, b = evaluate(program(robot, mine), values), evaluate(program(robot, theirs), values)
        assert list(a) == list(b), mine
        assert_relative(stack(a, list(b)), stack(b, list(b)), what=f"tree {mine}")


# ------------------------------------------------ properties of A and C
@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_symmetric_positive_definite(name, rng):
    robot = wrenched(name)
    n = robot.nj
    values = random_state(robot, rng, states=8)
    prog = program(robot, "mass_matrix")
    outputs = evaluate(prog, values)
    names = matrix_entry_names("A", (n, n))
    # Exactly the upper triangle, column by column, as composite.py names it.
    assert list(outputs) == [names[r][c] for c in range(n) for r in range(c + 1)]
    A = matrix(outputs, "A", n, True)
    numpy.testing.assert_array_equal(A, numpy.swapaxes(A, 1, 2))
    eigenvalues = numpy.linalg.eigvalsh(A)
    assert numpy.all(eigenvalues > 1e-9 * numpy.max(numpy.abs(eigenvalues), axis=1, keepdims=True))


@pytest.mark.parametrize("name", ["planar2", "rx90", "stanford"])
def test_adot_minus_2c_is_skew_symmetric(name, rng):
    robot = wrenched(name)
    n = robot.nj
    values = random_state(robot, rng, states=3)
    A_prog, C_prog = program(robot, "mass_matrix"), program(robot, "coriolis_matrix")
    step = 1e-6
    up, down = dict(values), dict(values)
    for x, v in zip(robot.q, robot.qd):
        up[x.name] = values[x.name] + step * values[v.name]
        down[x.name] = values[x.name] - step * values[v.name]
    Adot = (matrix(evaluate(A_prog, up), "A", n, True) - matrix(evaluate(A_prog, down), "A", n, True)) / (2 * step)
    N = Adot - 2 * matrix(evaluate(C_prog, values), "C", n, False)
    assert numpy.max(numpy.abs(N + numpy.swapaxes(N, 1, 2))) < 1e-6 * max(1.0, numpy.max(numpy.abs(Adot)))


# Krang's case (the 17 x 17 names, C1_2 ...; its Lagrange C takes 3 s) is slow:
# tests/test_engines.py reads Krang's Lagrange C by these names in the default run.
@pytest.mark.parametrize("name", ["rx90", pytest.param("krang", marks=pytest.mark.slow)])
def test_coriolis_names_are_not_taken_by_compound_angles(name):
    """C23 must be the Coriolis entry, not cos(th2 + th3) of the trig rules."""
    robot = wrenched(name)
    n = robot.nj
    names = matrix_entry_names("C", (n, n))
    assert list(program(robot, "coriolis_matrix").outputs) == [x for row in names for x in row]


@pytest.mark.long
def test_krang_branches_and_every_model():
    robot = wrenched("krang")
    labels = robot.joint_labels
    outputs = program(robot, "mass_matrix").outputs
    left, right = labels.index("5l") + 1, labels.index("7r") + 1
    assert outputs[f"A{left}_{right}"] == 0  # the two arms share no joint
    assert outputs[f"A1_{right}"] != 0
    for model in ("gravity", "h", "inverse_dynamics", "coriolis_matrix"):
        assert program(robot, model).outputs


# ------------------------------------------ energies evaluated in numpy
def numpy_energies(robot, values, states=3):
    """(q, qd, T, U, dU/dq) in numpy from the numeric transforms 0T_j only:
    link velocities by central differences of 0T_j(q + t qd), energies from
    SYMORO's parameters, the gradient of U by central differences."""
    geometric = {name: values[name] for name in robot.geometric_parameters}
    transforms = {j: geometry.numeric_transform(robot, "0", j, geometric) for j in robot.links}

    def number(entry):
        entry = sympy.sympify(entry)
        return float(entry.subs({s: values[s.name] for s in entry.free_symbols}))

    G = numpy.array([number(g) for g in robot.base.G])

    def param(label, key):
        return number(robot.dynamics[label][key])

    def link(label):
        J = numpy.array([[param(label, "".join(sorted(a + b))) for b in "XYZ"] for a in "XYZ"])
        MS = numpy.array([param(label, k) for k in ("MX", "MY", "MZ")])
        return J, MS, param(label, "M")

    links = {j: link(j) for j in robot.links}

    def potential(q):
        U = 0.0
        for j, (_, MS, M) in links.items():
            T = transforms[j](q)
            U -= G @ (M * T[:3, 3] + T[:3, :3] @ MS)
        return U

    def kinetic(q, qd, h=1e-6):
        E = 0.0
        for j, (J, MS, M) in links.items():
            T, up, down = transforms[j](q), transforms[j](q + h * qd), transforms[j](q - h * qd)
            R = T[:3, :3]
            v = R.T @ (up[:3, 3] - down[:3, 3]) / (2 * h)
            W = R.T @ (up[:3, :3] - down[:3, :3]) / (2 * h)  # hat(w) in frame j
            w = numpy.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2
            E += 0.5 * (M * v @ v + 2 * v @ numpy.cross(w, MS) + w @ J @ w)
        IA = numpy.array([param(label, "IA") if label in robot.dynamics else 0.0 for label in robot.joint_labels])
        return E + 0.5 * IA @ qd**2

    out = []
    for k in range(states):
        q = numpy.array([values[s.name][k] for s in robot.q])
        qd = numpy.array([values[s.name][k] for s in robot.qd])
        h = 1e-6
        grad = numpy.array([(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in numpy.eye(len(q))])
        out.append((q, qd, kinetic(q, qd), potential(q), grad))
    return out


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.long
def test_gravity_is_the_gradient_of_the_potential_energy(name, rng):
    robot = wrenched(name)
    values = random_state(robot, rng, states=3)
    Q = vector(evaluate(program(robot, "gravity"), values), "Q", robot.joint_labels)
    A = matrix(evaluate(program(robot, "mass_matrix"), values), "A", robot.nj, True)
    energies = evaluate(lagrange.energy(robot), values)
    for k, (_q, qd, T, U, grad) in enumerate(numpy_energies(robot, values)):
        scale = max(numpy.max(numpy.abs(grad)), 1e-12)
        assert numpy.max(numpy.abs(Q[k] - grad)) < 1e-6 * scale, (Q[k], grad)
        assert abs(0.5 * qd @ A[k] @ qd - T) < 1e-6 * max(abs(T), 1e-12)
        assert abs(energies["U"][k] - U) < 1e-9 * max(abs(U), 1.0)
        assert abs(energies["T"][k] - T) < 1e-6 * max(abs(T), 1e-12)


# ------------------------------------------------------------- scope
def test_fixed_base_only():
    robot = library("rx90")
    moving = dataclasses.replace(robot, base=kr.Base.from_values(W0=["W01", 0, 0]))
    for model in (lagrange.mass_matrix, lagrange.gravity, lagrange.h, lagrange.inverse_dynamics, lagrange.coriolis_matrix):
        with pytest.raises(KaneRobotError, match="assumes a fixed base"):
            model(moving)
    accelerating = dataclasses.replace(robot, base=kr.Base.from_values(VP0=[0, 0, "VP03"]))
    with pytest.raises(KaneRobotError, match="VP0"):
        lagrange.inverse_dynamics(accelerating)


def test_closed_loops_wheeled_flexible_and_a_floating_base_without_link_0_are_refused():
    with pytest.raises(KaneRobotError, match="closed loops"):
        lagrange.mass_matrix(library("sr400"))
    arm = library("planar2")
    floating = Robot.create(arm.name, arm.frames, links=arm.links, floating=True)
    with pytest.raises(KaneRobotError, match="floating base must carry link 0"):
        lagrange.inverse_dynamics(floating)
    wheeled = Robot.create(arm.name, arm.frames, wheeled=True)
    with pytest.raises(KaneRobotError, match="wheeled"):
        lagrange.gravity(wheeled)
    flexible = Robot.create(arm.name, arm.frames, joint_parameters={"2": {"eta": 1}})
    with pytest.raises(KaneRobotError, match="flexible"):
        lagrange.h(flexible)
    with pytest.raises(KaneRobotError, match="by Lagrange of planar2: a floating base cannot also be a wheeled base"):
        lagrange.mass_matrix(Robot.create(arm.name, arm.frames, floating=True, wheeled=True))
    with pytest.raises(KaneRobotError, match=r"energy of satellite by Lagrange: .*floating base.*position of O_0"):
        lagrange.energy(library("satellite"))


# ---------------------------------------------- a floating base (root joint)
def floating_robot(name, tree):
    """The satellite, or the conftest tree on a floating base carrying link 0
    (gravity any direction, a wrench on its leaves)."""
    if name == "satellite":
        return with_wrench_and_gravity(library("satellite"))
    return with_wrench_and_gravity(floating_copy(tree))


def floating_state(robot, rng, states=3):
    """Random physical parameters (gravity a random vector) and ``states``
    random states: joints, a unit quaternion, base speeds and their rates."""
    values = random_parameters(robot, rng, gravity=tuple(rng.uniform(-10, 10, 3)))
    for symbols, (low, high) in ((robot.q, (-numpy.pi, numpy.pi)), (robot.qd, (-2, 2)), (robot.qdd, (-3, 3)),
                                 (free_flyer.BASE_VELOCITY, (-2, 2)), (free_flyer.BASE_ACCELERATION, (-3, 3))):
        for s in symbols:
            values[s.name] = rng.uniform(low, high, states)
    quaternion = rng.normal(size=(4, states))
    quaternion /= numpy.linalg.norm(quaternion, axis=0)
    values |= {s.name: x for s, x in zip(free_flyer.QUATERNION, quaternion)}
    return values


@pytest.mark.parametrize("name", ["satellite", "tree"])
@pytest.mark.long
def test_floating_models_equal_newton_euler(name, tree, rng):
    """lagrange.* on a floating robot: the free-flyer root's six speeds first,
    Newton-Euler's inputs (same order) and outputs, its values to 1e-9."""
    robot = floating_robot(name, tree)
    ne = kr.derive(robot)
    N = 6 + robot.nj
    values = floating_state(robot, rng)
    labels = list(free_flyer.BASE_FORCE_NAMES) + list(robot.joint_labels)
    mine = {model: program(robot, model) for model in ("mass_matrix", "coriolis_matrix", "gravity", "h", "inverse_dynamics")}
    for model in ("gravity", "h", "inverse_dynamics", "coriolis_matrix"):
        assert list(mine[model].outputs) == list(ne.program(model).outputs), model
        if model != "gravity":
            assert mine[model].inputs == ne.program(model).inputs, model
    # Q needs the masses and first moments only (Newton-Euler's takes every inertial parameter).
    assert list(mine["gravity"].inputs[: robot.nj + 4]) == list(robot.q) + list(free_flyer.QUATERNION)
    assert set(mine["gravity"].inputs) <= set(ne.program("gravity").inputs)
    # Newton-Euler leaves out A's structural zeros; Lagrange writes every entry.
    assert mine["mass_matrix"].inputs == ne.program("mass_matrix").inputs
    assert set(mine["mass_matrix"].outputs) >= set(ne.program("mass_matrix").outputs)
    A = matrix(evaluate(mine["mass_matrix"], values), "A", N, True)
    A_ne = evaluate(ne.program("mass_matrix"), values)
    names = matrix_entry_names("A", (N, N))
    A_ne = numpy.array([[A_ne.get(names[min(i, j)][max(i, j)], numpy.zeros(3)) for j in range(N)] for i in range(N)])
    assert_relative(A, numpy.moveaxis(A_ne, -1, 0), what=f"{name} A")
    C = matrix(evaluate(mine["coriolis_matrix"], values), "C", N, False)
    assert_relative(C, matrix(evaluate(ne.program("coriolis_matrix"), values), "C", N, False), what=f"{name} C")
    for model, prefix in (("gravity", "Q"), ("h", "GAM"), ("inverse_dynamics", "GAM")):
        got = vector(evaluate(mine[model], values), prefix, labels)
        assert_relative(got, vector(evaluate(ne.program(model), values), prefix, labels), what=f"{name} {model}")


@pytest.mark.parametrize("name", ["satellite", "tree"])
@pytest.mark.long
def test_floating_coriolis_matrix_gives_the_velocity_terms_and_is_passive(name, tree, rng):
    """``C nu`` is Newton-Euler's ``H - Q`` without friction nor wrench, and
    ``A' - 2C`` is skew with ``A'`` by central differences of Lagrange's A
    along ``q + t qd`` (A depends on the joints only)."""
    robot = floating_robot(name, tree)
    ne = kr.derive(robot)
    N = 6 + robot.nj
    values = floating_state(robot, rng)
    for label in robot.links:
        for key in ("FV", "FS") + WRENCH_NAMES:
            entry = robot.dynamics[label][key]
            if isinstance(entry, sympy.Symbol):
                values[entry.name] = 0.0
    labels = list(free_flyer.BASE_FORCE_NAMES) + list(robot.joint_labels)
    C = matrix(evaluate(program(robot, "coriolis_matrix"), values), "C", N, False)
    nu = numpy.array([values[s.name] for s in free_flyer.BASE_VELOCITY + tuple(robot.qd)]).T
    velocity_terms = vector(evaluate(ne.program("h"), values), "GAM", labels) - vector(evaluate(ne.program("gravity"), values), "Q", labels)
    assert_relative(numpy.einsum("kij,kj->ki", C, nu), velocity_terms, what=f"{name} C nu")
    step, up, down = 1e-6, dict(values), dict(values)
    for x, v in zip(robot.q, robot.qd):
        up[x.name] = values[x.name] + step * values[v.name]
        down[x.name] = values[x.name] - step * values[v.name]
    A_prog = program(robot, "mass_matrix")
    Adot = (matrix(evaluate(A_prog, up), "A", N, True) - matrix(evaluate(A_prog, down), "A", N, True)) / (2 * step)
    assert numpy.max(numpy.abs(Adot)) > 1e-3  # the joints move: A changes
    S = Adot - 2 * C
    assert numpy.max(numpy.abs(S + numpy.swapaxes(S, 1, 2))) < 1e-6 * (1 + numpy.max(numpy.abs(C)))
