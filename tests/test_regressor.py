"""The dynamic identification model Gamma = D(q, qd, qdd) K (kanerobot.identification.regressor).

Checked against independent paths: the Newton-Euler inverse dynamic model
with random physically consistent parameters, and the unit-parameter trick
(column k of D is the Newton-Euler torque with parameter k = 1, the others
0, gravity on).
"""

import numpy as np
import pytest
import sympy
from conftest import library

import kanerobot as kr
from kanerobot.dynamics.newton_euler import inverse_dynamics
from kanerobot.dynamics.parameters import is_physically_consistent, random_parameters
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.identification import identification_model
from kanerobot.identification.regressor import STANDARD_NAMES


def _states(rng, n, m, N):
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.normal(size=(N, m)), rng.normal(size=(N, m))


def _check_against_newton_euler(robot, seed, N=6):
    rng = np.random.default_rng(seed)
    values = random_parameters(robot, rng, wrench=False)
    for label in robot.links:
        link = {name: values.get(str(robot.dynamics[label][name]), 0.0) for name in STANDARD_NAMES[:10]}
        assert is_physically_consistent(link) or robot.dynamics[label]["MZ"] == 0
    model = identification_model(robot)
    q, qd, qdd = _states(rng, robot.nj, robot.nj, N)
    D = model.numeric(values).regressor(q, qd, qdd)
    assert D.shape == (N, robot.nj, len(model.parameters))
    K = np.array([values[name] for name in model.parameters])
    tau = kr.derive(robot).numeric(values, backend="numpy").inverse_dynamics(q, qd, qdd)
    assert np.max(np.abs(D @ K - tau)) <= 1e-9 * np.max(np.abs(tau))
    return model, values, D


@pytest.mark.parametrize("name", ["planar2", "rx90", "stanford", "puma560"])
def test_regressor_times_parameters_is_newton_euler(name):
    _check_against_newton_euler(library(name), seed=7)


@pytest.mark.long
def test_regressor_of_a_tree_with_general_frames_krang():
    robot = library("krang")
    model, _, _D = _check_against_newton_euler(robot, seed=3, N=3)
    assert model.shape == (17, 17 * 13)


def test_unit_parameter_columns_rx90():
    """Column k of D = NE torque with parameter k alone equal to 1 (gravity on)."""
    robot = library("rx90")
    model = identification_model(robot)
    program = inverse_dynamics(robot)
    f = program.to_function()
    rng = np.random.default_rng(11)
    geometry = {"D3": 0.45, "RL4": 0.42, "G3": -9.81}
    q, qd, qdd = (x[0] for x in _states(rng, 6, 6, 1))
    state = {**{f"th{k + 1}": q[k] for k in range(6)}, **{f"QP{k + 1}": qd[k] for k in range(6)}}
    state.update({f"QDP{k + 1}": qdd[k] for k in range(6)})
    D = model.numeric(geometry).regressor(q, qd, qdd)
    assert D.shape == (6, 78)
    for k, name in enumerate(model.parameters):
        point = {**state, **geometry, name: 1.0}
        column = f(*[point.get(s.name, 0.0) for s in f.args])
        assert np.allclose(D[:, k], column, rtol=0, atol=1e-12), name
    # the columns are exactly the link parameters the NE model reads
    others = set(state) | set(geometry) | {"FX6", "FY6", "FZ6", "CX6", "CY6", "CZ6"}
    assert model.parameters == [s.name for s in program.inputs if s.name not in others]


def test_parameters_order_and_customised_zeros():
    robot = library("rx90").subs({"XY2": 0, "MZ3": 0, "FS1": 0})
    model = identification_model(robot)
    assert model.parameters[:12] == ["XX1", "XY1", "XZ1", "YY1", "YZ1", "ZZ1", "MX1", "MY1", "MZ1", "M1", "IA1", "FV1"]
    assert model.parameters[12:16] == ["XX2", "XZ2", "YY2", "YZ2"]
    assert "XY2" not in model.parameters and "MZ3" not in model.parameters and "FS1" not in model.parameters
    assert len(model.parameters) == 78 - 3
    _check_against_newton_euler(robot, seed=5, N=2)


def test_friction_and_rotor_columns_optional():
    robot = library("planar2")
    full = identification_model(robot)
    bare = identification_model(robot, friction=False, rotor=False)
    assert [p for p in full.parameters if p[:2] not in ("IA", "FV", "FS")] == bare.parameters
    assert len(bare.parameters) == 20
    rng = np.random.default_rng(2)
    q, qd, qdd = _states(rng, 2, 2, 4)
    D_full = full.numeric({"L1": 0.3}).regressor(q, qd, qdd)
    D_bare = bare.numeric({"L1": 0.3}).regressor(q, qd, qdd)
    columns = [full.parameters.index(p) for p in bare.parameters]
    assert np.array_equal(D_full[..., columns], D_bare)
    assert np.array_equal(D_full[:, 0, full.parameters.index("FS1")], np.sign(qd[:, 0]))
    assert np.array_equal(D_full[:, 1, full.parameters.index("IA2")], qdd[:, 1])


def test_single_state_and_missing_values():
    robot = library("rx90")
    model = identification_model(robot)
    assert model.values_needed == ["D3", "RL4", "G3"]  # robot order: the geometry frame by frame, gravity last
    with pytest.raises(ParameterError, match="D3, RL4"):
        model.numeric({"G3": -9.81, "XX1": 1.0})
    fn = model.numeric({"D3": 0.4, "RL4": 0.3, "G3": -9.81, "unrelated": 5.0})
    rng = np.random.default_rng(0)
    q, qd, qdd = _states(rng, 6, 6, 3)
    batch = fn.regressor(q, qd, qdd)
    one = fn.regressor(q[1], qd[1], qdd[1])
    assert one.shape == (6, 78)
    assert np.allclose(one, batch[1], rtol=0, atol=1e-13)
    with pytest.raises(KaneRobotError):
        fn.regressor(q[:, :5], qd, qdd)


def test_matrix_is_the_program_outputs():
    robot = library("planar2")
    model = identification_model(robot)
    D = model.matrix()
    assert D.shape == (2, 26)
    # the mass of link 2 does not act on joint 2 (gravity along the axes), nor XX1 anywhere
    assert D[1, model.parameters.index("M2")] == 0
    assert D[:, model.parameters.index("XX1")] == sympy.zeros(2, 1)
    assert D[0, model.parameters.index("ZZ1")] == sympy.Symbol("QDP1")
    assert D[1, model.parameters.index("MY2")] == -sympy.Symbol("VP12")


@pytest.mark.parametrize("name", ["fourbar", "sr400"])
def test_closed_loop_regressor_is_the_projected_model(name):
    """D_a K = G^T Gamma_tree: the closed-loop inverse dynamic model."""
    robot = library(name)
    rng = np.random.default_rng(4)
    values = random_parameters(robot, rng, wrench=False)
    model = identification_model(robot)
    assert model.joints == list(robot.active_joints)
    dynamics = kr.derive(robot).numeric(values, backend="numpy")
    m = len(robot.active_joints)
    guess = {"fourbar": [-1.0, 1.0, -1.0]}.get(name)
    q = np.array([dynamics.configuration(rng.uniform(-0.4, 0.4, m) + 0.8, guess=guess) for _ in range(3)])
    qd, qdd = rng.normal(size=(3, m)), rng.normal(size=(3, m))
    D = model.numeric(values).regressor(q, qd, qdd)
    K = np.array([values[p] for p in model.parameters])
    tau = dynamics.inverse_dynamics(q, qd, qdd)
    assert D.shape == (3, m, len(model.parameters))
    assert np.max(np.abs(D @ K - tau)) <= 1e-9 * np.max(np.abs(tau))


def test_floating_base_is_rejected():
    robot = library("satellite")
    if not robot.floating:
        pytest.skip("satellite is not a floating base here")
    with pytest.raises(KaneRobotError, match="floating"):
        identification_model(robot)


def test_outputs_are_sympy_expressions_of_the_state_and_geometry():
    robot = library("rx90")
    model = identification_model(robot)
    inertial = {sympy.Symbol(p) for p in model.parameters}
    for _, expr in list(model.program.assignments()) + list(model.program.outputs.items()):
        assert not (expr.free_symbols & inertial)


@pytest.mark.parametrize("name", ["rx90", "fourbar"])
def test_exported_python_function_is_the_regressor(name):
    robot = library(name)
    model = identification_model(robot)
    namespace = {}
    exec(model.export("python"), namespace)
    function = namespace[f"{name}_dim"]
    values = {"D3": 0.4, "RL4": 0.3, "G3": -9.81}
    rng = np.random.default_rng(8)
    m = len(model.joints)
    if robot.loops:
        fn = kr.derive(robot).numeric(random_parameters(robot, rng), backend="numpy")
        q = fn.configuration([0.9], guess=[-1.0, 1.0, -1.0])
    else:
        q = rng.uniform(-3, 3, robot.nj)
    qd, qdd = rng.normal(size=m), rng.normal(size=m)
    D = np.asarray(function(q, qd, qdd, np.array([values[v] for v in model.values_needed])), dtype=float)
    assert D.shape == model.shape
    assert np.allclose(D, model.numeric(values).regressor(q, qd, qdd), rtol=1e-12, atol=1e-12)
    for lang in ("c", "matlab", "julia"):
        assert f"{name}_dim" in model.export(lang)


def test_cli_exports_the_regressor(capsys):
    from kanerobot.cli import main

    main(["model", "planar2", "dim", "--lang", "python"])
    namespace = {}
    exec(capsys.readouterr().out, namespace)
    D = namespace["planar2_dim"]([0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.5])
    model = identification_model(library("planar2"))
    assert np.asarray(D, dtype=float)[0, model.parameters.index("M2")] == pytest.approx(0.25)
