"""Base inertial parameters (kanerobot.identification.base_parameters).

The RX-90 against OpenSYMORO's RX90_regp.txt (names and relations), the
grouping rules against the numeric method (count and span), and the base
regressor against the full one: D K = D_b K_b for random K.
"""

import re

import numpy as np
import pytest
import sympy
from conftest import corpus_file, library
from threadpoolctl import threadpool_limits

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.identification import base_parameter_set, base_parameters


def _reference():
    """(names of the grouped table in order, {name: expression of the standard parameters})."""
    text = corpus_file("RX90_regp.txt").read_text()
    defs = {}
    for line in text.split("Equations:")[1].split("*=*")[0].strip().splitlines():
        name, expr = (x.strip() for x in line.split("="))
        names = {n: sympy.Symbol(n) for n in re.findall(r"[A-Za-z_]\w*", expr) if n not in ("cos", "sin")}
        defs[name] = sympy.sympify(expr, locals=names).xreplace({sympy.Symbol(k): v for k, v in defs.items()})
    table = text.split("grouped inertia parameters")[1].split("Dynamic inertia parameters")[1].split("*=*")[0]
    rows = table.strip().splitlines()[1:]
    grouped = [x for row in rows for x in row.split()[1:] if x != "0"]
    return grouped, {name: defs.get(name, sympy.Symbol(name)) for name in grouped}


def _rank(M, tol=1e-8):
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: a threaded BLAS on a busy machine is much slower
        s = np.linalg.svd(M, compute_uv=False)
    return int((s > tol * max(1.0, s[0] if s.size else 0.0)).sum())


def _geometry(robot, seed):
    values = random_parameters(robot, np.random.default_rng(seed))
    return {name: values[name] for name in robot.geometric_parameters}


def _check_base_regressor(robot, base, values, q, qd, qdd, seed=0):
    """D K = D_b K_b with K_b = T K, for random K; D_b has full column rank."""
    rng = np.random.default_rng(seed)
    model = base.model
    D = model.numeric(values).regressor(q, qd, qdd)
    T = base.matrix(values)
    K = rng.normal(size=(len(model.parameters), 3))
    Db = base.regressor(D)
    assert np.max(np.abs(D @ K - Db @ (T @ K))) <= 1e-9 * np.max(np.abs(D @ K))
    stacked = Db.reshape(-1, len(base.names))
    assert _rank(stacked / np.linalg.norm(stacked, axis=0), 1e-9) == len(base.names)


def _random_states(robot, N, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, robot.nj)), rng.normal(size=(N, robot.nj)), rng.normal(size=(N, robot.nj))


def test_rx90_symbolic_is_opensymoro_regp():
    grouped, relations = _reference()
    assert len(grouped) == 40
    robot = library("rx90")
    base = base_parameters(robot)
    names = list(base)
    assert names[:40] == grouped
    assert names[40:] == [f"{f}{j}" for j in range(1, 7) for f in ("FV", "FS")]
    for name in grouped:
        assert sympy.expand(base[name] - relations[name]) == 0, name
    assert list(base_parameters(robot, friction=False)) == grouped


def test_rx90_numeric_equals_symbolic():
    robot = library("rx90")
    geometry = {"D3": 0.45, "RL4": 0.42}
    symbolic = base_parameter_set(robot)
    numeric = base_parameter_set(robot, "numeric", values=geometry)
    assert numeric.names == symbolic.names
    assert numeric.columns == symbolic.columns
    Ts, Tn = symbolic.matrix(geometry), numeric.matrix()
    assert np.max(np.abs(Ts - Tn)) < 1e-9
    difference = sympy.expand(numeric.expressions["MXR2"] - sympy.sympify("MX2 + 0.45*(M3 + M4 + M5 + M6)"))
    assert difference == 0 or max(abs(c) for c in sympy.Poly(difference, *difference.free_symbols).coeffs()) < 1e-12
    q, qd, qdd = _random_states(robot, 20, 1)
    _check_base_regressor(robot, symbolic, {**geometry, "G3": -9.81}, q, qd, qdd)


def test_symbolic_matrix_needs_the_geometry():
    base = base_parameter_set(library("rx90"))
    with pytest.raises(ParameterError, match="D3, RL4"):
        base.matrix()


@pytest.mark.parametrize("name,count", [("planar2", 5), ("stanford", 37), ("puma560", 40), ("krang", 126)])
@pytest.mark.long
def test_symbolic_and_numeric_agree(name, count):
    robot = library(name)
    geometry = _geometry(robot, 3)
    symbolic = base_parameter_set(robot, friction=False)
    numeric = base_parameter_set(robot, "numeric", values=geometry, friction=False)
    assert len(symbolic.names) == len(numeric.names) == count
    Ts, Tn = symbolic.matrix(geometry), numeric.matrix()
    assert _rank(Ts) == _rank(Tn) == _rank(np.vstack([Ts, Tn])) == count
    q, qd, qdd = _random_states(robot, 12, 5)
    values = {**geometry, "G3": -9.81}
    _check_base_regressor(robot, symbolic, values, q, qd, qdd)
    _check_base_regressor(robot, numeric, values, q, qd, qdd)


def test_friction_after_inertial_parameters():
    robot = library("stanford")
    names = list(base_parameters(robot))
    assert names[-12:] == [f"{f}{j}" for j in range(1, 7) for f in ("FV", "FS")]
    assert not any(n.startswith(("FV", "FS")) for n in names[:-12])
    assert len(names) == 37 + 12


def test_bound_geometry_changes_the_grouping():
    """With D3 = 0 the RX-90's joints 2 and 3 meet: the symbolic rules, run on
    the bound robot, and the numeric method group differently than with D3 free."""
    robot = library("rx90")
    values = {"D3": 0.0, "RL4": 0.35}
    symbolic = base_parameter_set(robot, values=values, friction=False)
    numeric = base_parameter_set(robot, "numeric", values=values, friction=False)
    assert symbolic.names == numeric.names
    Ts, Tn = symbolic.matrix(), numeric.matrix()
    assert _rank(np.vstack([Ts, Tn])) == len(symbolic.names) == 40
    # nothing is grouped into MX2 and XZ2 any more (their terms were D3 * ...)
    assert "MX2" in symbolic.names and "XZ2" in symbolic.names and "MXR2" not in symbolic.names
    assert symbolic.expressions["ZZR2"] == sympy.sympify("IA2 + ZZ2")


def test_errors():
    rx90 = library("rx90")
    with pytest.raises(ParameterError, match="D3, RL4"):
        base_parameter_set(rx90, "numeric")
    with pytest.raises(KaneRobotError, match="unknown method"):
        base_parameter_set(rx90, "qr")
    with pytest.raises(KaneRobotError, match="method='numeric'"):
        base_parameter_set(library("sr400"))


def _sr400_parallelogram(q):
    """A closed configuration of the SR400's parallelogram mode (the active joints given)."""
    out = np.zeros(9)
    out[[0, 1, 3, 4, 5, 6]] = q
    out[2] = -out[1] + out[6] + 1.5 * np.pi
    out[7] = out[1] - out[6]
    out[8] = -out[1] + out[6]
    return out


@pytest.mark.long
def test_fourbar_numeric_and_rules_agree():
    robot = library("fourbar")
    q0 = [1.0, -1.0, 1.0, -1.0]
    numeric = base_parameter_set(robot, "numeric", q0=q0)
    symbolic = base_parameter_set(robot, q0=q0)
    # a parallelogram: the coupler translates, its mass acts at the crank tip (unit links)
    assert numeric.names == symbolic.names == ["ZZR1", "FVR1", "FSR1"]
    assert symbolic.expressions["ZZR1"] == sympy.sympify("ZZ1 + ZZ3 + M2 + IA1 + IA2 + IA3")
    assert _rank(np.vstack([numeric.matrix(), symbolic.matrix()])) == 3


@pytest.mark.slow
def test_sr400_numeric_and_rules_agree():
    robot = library("sr400")
    geometry = _geometry(robot, 0)
    q0 = _sr400_parallelogram([0.3, 0.5, -0.4, 0.7, 0.2, -0.6])
    # the parallelogram also closes as an anti-parallelogram, with 65 base parameters
    with pytest.raises(KaneRobotError, match=r"assembly modes with different base parameters \(65 .*57|57 .*65"):
        base_parameter_set(robot, "numeric", values=geometry)
    numeric = base_parameter_set(robot, "numeric", values=geometry, q0=q0)
    symbolic = base_parameter_set(robot, values=geometry, q0=q0)
    assert len(numeric.names) == len(symbolic.names) == 57
    Ts, Tn = symbolic.matrix(), numeric.matrix()
    assert _rank(np.vstack([Ts, Tn])) == 57
    # D K = D_b K_b around the configuration (closed, parallelogram mode)
    dyn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)) | geometry, backend="numpy")
    rng = np.random.default_rng(9)
    active = [0, 1, 3, 4, 5, 6]
    q = np.array([dyn.configuration(q0[active] + rng.uniform(-0.1, 0.1, 6), guess=q0[[2, 7, 8]]) for _ in range(15)])
    qd, qdd = rng.normal(size=(15, 6)), rng.normal(size=(15, 6))
    _check_base_regressor(robot, numeric, {**geometry, "G3": -9.81}, q, qd, qdd)


def test_cli_model_regp_and_dim(capsys):
    from kanerobot.cli import main

    main(["model", "rx90", "regp"])
    out = capsys.readouterr().out
    assert "ZZR1 = D3**2*M3 + D3**2*M4 + D3**2*M5 + D3**2*M6 + IA1 + YY2 + YY3 + ZZ1" in out
    assert "Base inertial parameters by grouping (52" in out and out.rstrip().endswith("*=*")
    main(["model", "planar2", "dim"])
    out = capsys.readouterr().out
    assert "DG1_M2 = N31M2" in out and "DG2_FS2 = sign(QP2)" in out


def test_tree_with_oblique_axes_and_a_fixed_link():
    """conftest's tree: general frames with oblique revolute and prismatic axes,
    a fixed leaf frame; the rules for an oblique axis carry c (I - a a^T), lam a, M."""
    from conftest import tree_robot

    robot = tree_robot()
    geometry = _geometry(robot, 3)
    symbolic = base_parameter_set(robot, friction=False)
    numeric = base_parameter_set(robot, "numeric", values=geometry, friction=False)
    assert len(symbolic.names) == len(numeric.names) == 34
    Ts, Tn = symbolic.matrix(geometry), numeric.matrix()
    assert _rank(np.vstack([Ts, Tn])) == 34
    q, qd, qdd = _random_states(robot, 10, 2)
    _check_base_regressor(robot, symbolic, {**geometry, "G3": -9.81}, q, qd, qdd)


def test_plate_robot_needs_bound_geometry_for_the_rules():
    """A fixed frame carrying a link and an oblique prismatic joint next to the
    first joint: relations that depend on the geometry remain after the rules."""
    from conftest import plate_robot

    robot = plate_robot()
    geometry = {"L": 0.3, "b": 0.2}
    with pytest.raises(KaneRobotError, match="depending on the geometry"):
        base_parameter_set(robot, friction=False)
    symbolic = base_parameter_set(robot, values=geometry, friction=False)
    numeric = base_parameter_set(robot, "numeric", values=geometry, friction=False)
    assert symbolic.names == numeric.names and len(numeric.names) == 13
    assert _rank(np.vstack([symbolic.matrix(), numeric.matrix()])) == 13
