"""Balance quantities (kanerobot.dynamics.centroidal): centre of mass, its Jacobian, the centroidal momentum matrix.

Against pinocchio (``centerOfMass``, ``jacobianCenterOfMass``,
``computeCentroidalMap``), to 1e-12 of the largest entry:

- RX-90 and Krang (frames/krang.toml, 17-joint tree) and the floating
  satellite, built on pinocchio's side by ``kanerobot.interop.to_pinocchio``
  with random physically consistent parameters;
- Talos (example-robot-data's talos_reduced.urdf, ``floating=True``,
  ``mimic="independent"``) against pinocchio's own URDF reader, joints
  matched by name (``compare_balance`` of benchmarks/urdf_vs_pinocchio.py);
- krang_wheeled: its tree (every joint free, the posture x, y, theta joints
  on the ground) against pinocchio's model of the same tree, and the
  matrix of the independent speeds, ``A_G G``.

By independent paths: the momentum is the sum of the links' momenta, their
velocities taken by finite differences of their poses and their inertias
from the parameters (fixed, floating, wheeled, closed loop); the velocity of
the centre of mass is the derivative of its position along the speeds.
"""

import functools
import importlib.util

import numpy as np
import pytest
import sympy
from conftest import benchmark, derived, library
from reference_dynamics import quaternion_matrix

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.dynamics.centroidal import center_of_mass, centroidal_momentum_matrix, moving_links
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.dynamics.wheeled import tree_robot
from kanerobot.interop import inertia_about_com, to_pinocchio
from kanerobot.robot.description import Frame, KKPlacement, Robot

TOL = 1e-12


#: Why the comparisons skip without pinocchio.
NO_PINOCCHIO = "pinocchio is not installed: pip install -e '.[bench]' (the pin package) to compare with it"


def relative_error(ours, theirs):
    return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))


def values_of(robot, seed):
    return random_parameters(robot, np.random.default_rng(seed), friction=False, rotor=False, wrench=False)


def configuration(fn, rng):
    """A random configuration: pinocchio's free flyer (unit quaternion) for a floating base."""
    n = len(fn.model.robot.joint_labels)
    joints = rng.uniform(-np.pi, np.pi, n)
    if not fn.model.robot.floating:
        return joints
    quaternion = rng.normal(size=4)
    return np.concatenate([rng.uniform(-1, 1, 3), quaternion / np.linalg.norm(quaternion), joints])


@pytest.fixture(scope="module", params=["rx90", "krang", "satellite"])
def case(request):
    """(numeric model, pinocchio model) of a library robot with random physical parameters."""
    robot = library(request.param)
    values = values_of(robot, 25)
    pinocchio = importlib.util.find_spec("pinocchio") is not None  # test_batches_answer_in_kind needs none
    return kr.derive(robot).numeric(values, backend="numpy"), to_pinocchio(robot, values) if pinocchio else None


def against_pinocchio(fn, pmodel, q, qd):
    """Worst relative error of COM, its Jacobian and velocity, CMM and momentum at one state."""
    import pinocchio as pin

    data = pmodel.createData()
    # reshaped: one speed makes pinocchio's 6 x 1 matrix a vector
    A = np.reshape(pin.computeCentroidalMap(pmodel, data, q), (6, pmodel.nv))
    J = np.reshape(pin.jacobianCenterOfMass(pmodel, data, q), (3, pmodel.nv))
    c = pin.centerOfMass(pmodel, data, q, qd)
    v, h = data.vcom[0].copy(), A @ qd
    return max(
        relative_error(fn.center_of_mass(q), c),
        relative_error(fn.center_of_mass_jacobian(q), J),
        relative_error(fn.centroidal_momentum_matrix(q), A),
        relative_error(fn.center_of_mass_velocity(q, qd), v),
        relative_error(fn.centroidal_momentum(q, qd), h),
    )


def test_against_pinocchio(case):
    pytest.importorskip("pinocchio", reason=NO_PINOCCHIO)
    fn, pmodel = case
    rng = np.random.default_rng(1)
    errors = [against_pinocchio(fn, pmodel, configuration(fn, rng), rng.uniform(-2, 2, pmodel.nv)) for _ in range(4)]
    assert max(errors) < TOL


def test_batches_answer_in_kind(case):
    fn, _ = case
    nv = fn.model.robot.dof  # the speeds: the joints', and the base's six of a floating robot
    rng = np.random.default_rng(2)
    q = np.array([configuration(fn, rng) for _ in range(3)])
    qd = rng.uniform(-1, 1, (3, nv))
    A = fn.centroidal_momentum_matrix(q)
    assert A.shape == (3, 6, nv) and fn.center_of_mass(q).shape == (3, 3)
    assert np.allclose(A[1], fn.centroidal_momentum_matrix(q[1]), rtol=0, atol=1e-13)
    assert np.allclose(fn.centroidal_momentum(q, qd)[2], A[2] @ qd[2], rtol=0, atol=1e-12)
    assert fn.centroidal_momentum(q[0], qd).shape == (3, 6)  # one configuration, several speeds
    # the linear momentum is M cdot, the COM Jacobian the first rows of A_G over M
    assert np.allclose(fn.center_of_mass_jacobian(q) * fn.total_mass(), A[:, :3], rtol=0, atol=1e-12)


def test_compiled_c_agrees_with_numpy():
    robot = library("rx90")
    values = values_of(robot, 3)
    model = kr.derive(robot)
    try:
        compiled = model.numeric(values, backend="c")
    except kr.KaneRobotError as exc:  # CompileError: no C compiler here
        pytest.skip(str(exc))
    q = np.random.default_rng(4).uniform(-np.pi, np.pi, (5, 6))
    expected = model.numeric(values, backend="numpy").centroidal_momentum_matrix(q)
    assert np.allclose(compiled.centroidal_momentum_matrix(q), expected, rtol=0, atol=1e-13)
    assert compiled.backend == "c"


def test_links_fixed_to_the_base_are_left_out_as_pinocchio_does():
    """A link on the base (s, fixed frame) carries no momentum; pinocchio hangs it on the universe."""
    pytest.importorskip("pinocchio", reason=NO_PINOCCHIO)
    q1, L = sympy.symbols("q1 L")
    frames = [
        Frame("s", "0", 2, 0, KKPlacement(d=L, alpha=0.3)),
        Frame("1", "s", 0, 1, KKPlacement(alpha=sympy.pi / 2, d=L, theta=q1)),
        Frame("t", "1", 2, 0, KKPlacement(d=L, theta=0.5)),
    ]
    robot = Robot.create("static", frames, links=["s", "1", "t"])
    assert moving_links(robot).links == ("1", "t")
    values = values_of(robot, 5)
    fn = kr.derive(robot).numeric(values, backend="numpy")
    rng = np.random.default_rng(6)
    assert against_pinocchio(fn, to_pinocchio(robot, values), rng.uniform(-3, 3, 1), rng.uniform(-2, 2, 1)) < TOL


def test_a_robot_whose_moving_links_have_no_mass_is_refused():
    model = derived("planar2")
    fn = model.numeric(dict.fromkeys(model.parameters, 0.0) | {"L1": 1.0}, backend="numpy")
    with pytest.raises(kr.ParameterError, match="no value for MX1, MY1, MZ1, M1, MZ2, which the centre of mass needs"):
        fn.center_of_mass([0.0, 0.0])  # the planar dynamics do not need them: the centre of mass does
    fn = model.numeric(dict.fromkeys(model.parameters, 0.0) | dict.fromkeys(["M1", "MX1", "MY1", "MZ1", "MZ2"], 0.0), backend="numpy")
    with pytest.raises(kr.KaneRobotError, match="total mass of 0: the centre of mass"):
        fn.center_of_mass([0.0, 0.0])


# ------------------------------------------------------------------ Talos
@pytest.mark.long
def test_talos_floating_against_pinocchio():
    """Acceptance: Talos (38 speeds) loaded with floating=True, mimic="independent"."""
    pytest.importorskip("pinocchio", reason=NO_PINOCCHIO)
    bench = benchmark("urdf_vs_pinocchio")
    robots = bench.corpus()
    if "talos_reduced" not in robots:
        pytest.skip("install example-robot-data (pip install -e '.[bench]')")
    result = bench.compare_balance(robots["talos_reduced"], floating=True, states=2)
    assert result["dof"] == 38 and result["error"] < TOL


# ------------------------------------------------------------------ wheels
@pytest.fixture(scope="module")
def wheeled():
    values = values_of(library("krang_wheeled"), 7)
    return derived("krang_wheeled").numeric(values, backend="numpy"), values


def test_wheeled_body_against_pinocchio_and_on_the_independent_speeds(wheeled):
    """Acceptance: krang_wheeled's tree against pinocchio's; the wheeled CMM is A_G G."""
    pin = pytest.importorskip("pinocchio", reason=NO_PINOCCHIO)
    fn, values = wheeled
    pmodel = to_pinocchio(tree_robot(fn.robot), values)
    data = pmodel.createData()
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd_a = rng.uniform(-np.pi, np.pi, fn.n), rng.uniform(-2, 2, fn.m)
        assert against_pinocchio(fn.tree, pmodel, q, rng.uniform(-2, 2, fn.n)) < TOL
        A = pin.computeCentroidalMap(pmodel, data, q)
        assert relative_error(fn.centroidal_momentum_matrix(q), A @ fn.G(q)) < TOL
        assert relative_error(fn.center_of_mass(q), pin.centerOfMass(pmodel, data, q)) < TOL
        assert relative_error(fn.centroidal_momentum(q, qd_a), A @ fn.velocities(q, qd_a)) < TOL
    assert fn.centroidal_momentum_matrix(q).shape == (6, 19) and fn.center_of_mass_jacobian(q).shape == (3, 19)


# ------------------------------------------------------------------ independent paths
def link_poses(robot, values, q):
    """``{label: 4x4 pose in the world}`` of every frame, by sympy's transforms multiplied out numerically.

    A floating robot's ``q`` starts with pinocchio's base position and
    quaternion (turned into a rotation by Rodrigues' formula,
    ``reference_dynamics.quaternion_matrix``).
    """
    base = np.eye(4)
    if robot.floating:
        base[:3, :3], base[:3, 3], q = quaternion_matrix(q[3:7]), q[:3], q[7:]
    numbers = {sympy.Symbol(k): v for k, v in values.items()} | dict(zip(robot.q, q))
    poses = {"0": base}
    for frame in robot.frames:
        poses[frame.label] = poses[frame.antecedent] @ np.array(frame.transform().xreplace(numbers).evalf(), dtype=float)
    return poses


def body_momenta(robot, values, step, q, qd, h=1e-6):
    """``[l; k_G]`` and G summed link by link: velocities by central differences of the links' poses.

    ``step(q, qd, t)`` is the configuration after t along the speeds ``qd``;
    each link's mass, centre and inertia about it come from its parameters.
    """
    symbols = {sympy.Symbol(k): v for k, v in values.items()}
    now, after, before = (link_poses(robot, values, x) for x in (q, step(q, qd, h), step(q, qd, -h)))
    mass, first, linear, angular = 0.0, np.zeros(3), np.zeros(3), np.zeros(3)
    for label in moving_links(robot).links:
        m, c, I = inertia_about_com(robot.dynamics[label], symbols)
        T, Ta, Tb = now[label], after[label], before[label]
        centre = T[:3, 3] + T[:3, :3] @ c
        v = ((Ta[:3, 3] + Ta[:3, :3] @ c) - (Tb[:3, 3] + Tb[:3, :3] @ c)) / (2 * h)
        W = (Ta[:3, :3] - Tb[:3, :3]) / (2 * h) @ T[:3, :3].T  # [w]x = Rdot R^T
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        mass, first, linear = mass + m, first + m * centre, linear + m * v
        angular += np.cross(centre, m * v) + T[:3, :3] @ I @ T[:3, :3].T @ w
    G = first / mass
    return np.concatenate([linear, angular - np.cross(G, linear)]), G


def straight(q, qd, t):
    return q + t * qd


@functools.cache
def independent_case(name):
    """``(fn, tree robot, values, step, q, qd, speeds)`` of one structure: ``qd`` every joint's rates, ``speeds`` the model's."""
    robot = library(name)
    values = values_of(robot, 11)
    fn = derived(name).numeric(values, backend="numpy")
    rng = np.random.default_rng(12)
    if robot.floating:
        q, qd = configuration(fn, rng), rng.uniform(-2, 2, fn.nv)
        return fn, robot, values, fn.integrate, q, qd, qd
    if robot.loops:  # a closed configuration, and speeds the loops allow
        q = fn.configuration([0.7])
    else:
        q = rng.uniform(-np.pi, np.pi, len(robot.joint_labels))
    if robot.loops or robot.wheeled:
        qd_a = rng.uniform(-2, 2, fn.m)
        return fn, fn.tree.model.robot, values, straight, q, fn.velocities(q, qd_a), qd_a
    qd = rng.uniform(-2, 2, len(q))
    return fn, robot, values, straight, q, qd, qd


@pytest.mark.parametrize("name", ["rx90", "satellite", "krang_wheeled", "fourbar"])
def test_momentum_is_the_sum_of_the_links_momenta(name):
    fn, robot, values, step, q, qd, speeds = independent_case(name)
    h, G = body_momenta(robot, values, step, q, qd)
    assert relative_error(fn.centroidal_momentum(q, speeds), h) < 1e-7
    assert relative_error(fn.center_of_mass(q), G) < 1e-12


@pytest.mark.parametrize("name", ["rx90", "satellite", "krang_wheeled", "fourbar"])
def test_com_velocity_is_the_derivative_of_the_com(name):
    fn, robot, _, step, q, qd, speeds = independent_case(name)
    com = fn.tree.center_of_mass if robot is not fn.model.robot else fn.center_of_mass  # off the loops by O(t^2)
    t = 1e-6
    derivative = (com(step(q, qd, t)) - com(step(q, qd, -t))) / (2 * t)
    assert relative_error(fn.center_of_mass_velocity(q, speeds), derivative) < 1e-7


# ------------------------------------------------------------------ programs, export, command line
def test_programs_are_programs_of_intermediate_variables():
    robot = library("rx90")
    A = centroidal_momentum_matrix(robot)
    c = center_of_mass(robot, jacobian=False)
    assert list(A.outputs)[:4] == ["MG", "PG1", "PG2", "PG3"] and len(A.outputs) == 4 + 36
    assert list(c.outputs) == ["MG", "PG1", "PG2", "PG3"]
    assert sum(c.op_count().values()) < sum(center_of_mass(robot).op_count().values()) < sum(A.op_count().values())
    with pytest.raises(kr.KaneRobotError, match=r"kr.derive\(robot\).numeric\(values\) gives it on the independent speeds"):
        centroidal_momentum_matrix(library("sr400"))


def test_cli_prints_and_exports_the_programs(tmp_path, capsys):
    assert main(["model", "rx90", "com"]) == 0
    out = capsys.readouterr().out
    assert "Centre of mass" in out and "PG1 = " in out and "JG3_6 = " in out
    assert main(["model", "krang_wheeled", "cmm"]) == 0
    out = capsys.readouterr().out
    assert "A_G G" in out and "AG6_22 = " in out
    target = tmp_path / "rx90_cmm.py"
    assert main(["model", "rx90", "cmm", "--lang", "python", "-o", str(target)]) == 0
    namespace = {}
    exec(target.read_text(), namespace)  # the file the command wrote
    robot = library("rx90")
    model = kr.derive(robot)
    values = values_of(robot, 13)
    q = np.random.default_rng(14).uniform(-np.pi, np.pi, 6)
    program = centroidal_momentum_matrix(robot)
    parameters = namespace["ARGUMENTS"]["p"]  # the parameters the program reads (sympy's free symbols), in the robot's order
    used = {str(s) for expression in program.substitute_back().values() for s in expression.free_symbols}
    assert set(parameters) == used - {str(s) for s in robot.q}
    exported = namespace["rx90_cmm"](q, [values[name] for name in parameters])
    assert np.allclose(exported, model.numeric(values, backend="numpy").centroidal_momentum_matrix(q), rtol=0, atol=1e-13)
