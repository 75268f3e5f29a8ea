"""Numeric inputs checked where they enter: states (shape, finite numbers),
parameter values (finite numbers, real bodies), and random parameters
(gravity as the robot file writes it)."""

import numpy as np
import pytest
import sympy
from conftest import derived, library

from kanerobot.dynamics.parameters import (
    check_physical,
    gravity_values,
    is_physically_consistent,
    physical_violations,
    random_link,
    random_parameters,
)
from kanerobot.errors import KaneRobotError, ParameterError

_MODELS = {}


def numeric(name, **options):
    """``(robot, model, values, fn)`` of a shipped robot with random physical values."""
    key = (name, tuple(sorted(options.items())))
    if key not in _MODELS:
        robot, model = library(name), derived(name)
        values = random_parameters(robot, np.random.default_rng(0), friction=False)
        _MODELS[key] = robot, model, values, model.numeric(values, backend="numpy", **options)
    return _MODELS[key]


# ------------------------------------------------------------------ states
# One state of each structure (rest at a valid configuration) and the call
# whose argument ``argument`` gets an inf at ``entry``.
STATES = {
    "planar2": lambda fn: ("h", [[0.1, 0.2], [0.0, 0.0]]),
    "satellite": lambda fn: ("h", [[0, 0, 0, 0, 0, 0, 1, 0.1, 0.2, 0.3], [0.0] * 9]),
    "flexarm1": lambda fn: ("h", [[0.1, 0.1], [0.0, 0.0]]),
    "fourbar": lambda fn: ("h", [list(fn.configuration([0.3], guess=[-0.3, 0.3, -0.3])), [0.0]]),
    "diffdrive": lambda fn: ("h", [[0.0] * 7, [0.0, 0.0]]),
}


@pytest.mark.parametrize("name", sorted(STATES))
def test_a_state_that_is_not_finite_is_refused_by_every_structure(name):
    """inf in qd made every output NaN without a word (issue 13, defect 7).
    Each function names its own argument (qd, qd_a of the independent speeds, zd)."""
    *_, fn = numeric(name)
    method, (q, qd) = STATES[name](fn)
    call = getattr(fn, method)
    assert np.all(np.isfinite(call(q, qd)))
    bad = list(qd)
    bad[-1] = np.inf
    with pytest.raises(KaneRobotError, match=rf"^(qd|qd_a|zd)\[{len(qd) - 1}\] = inf: states must be finite numbers"):
        call(q, bad)
    bad_q = list(q)
    bad_q[0] = np.nan
    with pytest.raises(KaneRobotError, match=r"^(q|z)\[0\] = nan"):
        call(bad_q, qd)
    # in a batch, the state is named too
    with pytest.raises(KaneRobotError, match=rf"^(qd|qd_a|zd)\[1, {len(qd) - 1}\] \(state 1 of the batch\) = inf"):
        call(np.array([q, q]), np.array([qd, bad]))


def test_flexible_inverse_dynamics_reads_no_link_side_acceleration():
    """zdd of a flexible joint's link side is an output of the three-step
    model: a NaN placeholder there is fine, an inf of the motor is not."""
    *_, fn = numeric("flexarm1")
    z, zd = [0.1, 0.2], [0.3, -0.1]
    inverse = fn.inverse_dynamics(z, zd, [np.nan, 0.5])
    assert np.isfinite(inverse.qdd_flexible).all() and np.isfinite(inverse.torque_motor).all()
    with pytest.raises(KaneRobotError, match=r"^zdd\[1\] = inf"):
        fn.inverse_dynamics(z, zd, [np.nan, np.inf])


def test_check_false_skips_the_test_and_gives_what_the_arithmetic_gives():
    _robot, model, values, _ = numeric("planar2")
    fn = model.numeric(values, backend="numpy", check=False)
    with np.errstate(invalid="ignore"):
        h = fn.h([0.1, 0.2], [np.inf, 0.0])
    assert np.isnan(h).any()


def test_states_that_are_not_numbers_or_have_the_wrong_shape():
    *_, fn = numeric("planar2")
    with pytest.raises(KaneRobotError, match="qd must be numbers, got"):
        fn.h([0.0, 0.0], ["fast", 0.0])
    with pytest.raises(KaneRobotError, match=r"q must have shape \(2,\) or \(N, 2\), got \(3,\)"):
        fn.gravity([0.0, 0.0, 0.0])
    with pytest.raises(KaneRobotError, match=r"wrench of link 6 = .*inf|wrench of link 6\[2\] = inf"):
        numeric("rx90")[3].inverse_dynamics(np.zeros(6), np.zeros(6), np.zeros(6), wrench={"6": [0, 0, np.inf, 0, 0, 0]})


# ------------------------------------------------------- parameter values
def test_a_value_that_is_not_a_finite_number_is_named():
    _robot, model, values, _ = numeric("planar2")
    for bad, shown in ((float("nan"), "M2 = nan"), (float("inf"), "M2 = inf"), ("heavy", "M2 = 'heavy'")):
        with pytest.raises(ParameterError, match=f"robot planar2: {shown}: every value must be a finite number"):
            model.numeric(dict(values, M2=bad), backend="numpy", physical=False)


def test_negative_mass_and_friction_are_refused_and_physical_false_accepts_them():
    _robot, model, values, _ = numeric("planar2")
    with pytest.raises(ParameterError, match=r"link 2 \(.*M2 = -1.*\): mass M = -1 < 0.*physical=False"):
        model.numeric(dict(values, M2=-1.0), backend="numpy")
    with pytest.raises(ParameterError, match=r"link 1 .*FV = -0.5 < 0"):
        model.numeric(dict(values, FV1=-0.5), backend="numpy")
    # The opt-out binds the numbers as they are: A(q) of the planar 2R arm,
    # A11 = IA1 + ZZ1 + ZZ2 + M2 L1^2 + 2 L1 (MX2 c2 - MY2 s2), A12 = ZZ2 + L1 (MX2 c2 - MY2 s2), A22 = IA2 + ZZ2.
    v = dict(values, M2=-1.0, FV1=-0.5)
    fn = model.numeric(v, backend="numpy", physical=False)
    q2 = 0.7
    s = v["L1"] * (v["MX2"] * np.cos(q2) - v["MY2"] * np.sin(q2))
    A11 = v["IA1"] + v["ZZ1"] + v["ZZ2"] + v["M2"] * v["L1"] ** 2 + 2 * s
    expected = [[A11, v["ZZ2"] + s], [v["ZZ2"] + s, v["IA2"] + v["ZZ2"]]]
    np.testing.assert_allclose(fn.mass_matrix([0.3, q2]), expected, rtol=1e-12)


def test_an_inertia_that_is_no_body_is_refused_naming_the_link():
    _robot, model, values, _ = numeric("rx90")
    # Link 3 as a point mass at c with J_O = M (c.c I - c c^T) is a body (J_G = 0) ...
    m, c = 2.0, np.array([0.1, -0.2, 0.3])
    J = m * (c @ c * np.eye(3) - np.outer(c, c))
    point = dict(zip(("XX3", "XY3", "XZ3", "YY3", "YZ3", "ZZ3"), (J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2])))
    point.update(MX3=m * c[0], MY3=m * c[1], MZ3=m * c[2], M3=m)
    model.numeric(dict(values, **point), backend="numpy")
    # ... less inertia about x than the point mass has is not.
    with pytest.raises(ParameterError, match=r"link 3 .*not positive semi-definite"):
        model.numeric(dict(values, **dict(point, XX3=J[0, 0] - 0.01)), backend="numpy")
    # A positive definite inertia that breaks the triangle inequality: a flat
    # plate has I_z = I_x + I_y at most.
    plate = dict(point, XX3=J[0, 0] + 0.01, YY3=J[1, 1] + 0.01, ZZ3=J[2, 2] + 0.05)
    with pytest.raises(ParameterError, match=r"link 3 .*break the triangle inequality"):
        model.numeric(dict(values, **plate), backend="numpy")


def test_physical_violations_agree_with_is_physically_consistent():
    """The complete test (all ten values known) against the existing one, on
    random bodies and random perturbations of them."""
    rng = np.random.default_rng(5)
    agree = refused = 0
    for _ in range(400):
        link = random_link(rng)
        if rng.uniform() < 0.7:
            name = rng.choice(["XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ"])
            link[name] += rng.normal() * 0.3
        consistent = is_physically_consistent(link, tol=0.0)
        violations = physical_violations(link, tol=0.0)
        assert (not violations) == consistent, (link, violations)
        agree += 1
        refused += bool(violations)
    assert agree == 400 and 50 < refused < 350  # both kinds were met


def test_partial_links_give_necessary_conditions():
    """Only some of a link's values known (the others no model needs)."""
    # ZZ about G = ZZ - (MX^2 + MY^2) / M whatever MZ is
    assert physical_violations({"ZZ": 0.5, "MX": 1.0, "M": 1.0}) == ["the inertia about the centre of mass has ZZ_G = -0.5 < 0"]
    assert physical_violations({"ZZ": 1.5, "MX": 1.0, "M": 1.0}) == []
    # a massless link with first moments cannot be
    assert "massless" in physical_violations({"M": 0.0, "MX": 0.1})[0]
    # zero everywhere (a link the model does not move) is accepted
    assert physical_violations(dict.fromkeys(["XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M"], 0.0)) == []


def test_numbers_of_the_robot_file_are_checked_with_the_values_of_their_link():
    """A link written in numbers only is the file's (published tables run as
    published); values given to one of its parameters check the whole link."""
    robot = library("planar2").subs({"M2": -2})
    check_physical(robot, {})
    with pytest.raises(ParameterError, match=r"link 2 \(ZZ2 = 1, MX2 = 0.1, MY2 = 0, M = -2\): mass M = -2 < 0"):
        check_physical(robot, {"ZZ2": 1.0, "MX2": 0.1, "MY2": 0.0})


def test_identification_binds_arbitrary_base_parameter_values():
    """The unit models of the numeric regressor (MX2 = 1 with M2 = 0) are no
    bodies: identification passes physical=False, and D1 K = A(q) qd holds."""
    from kanerobot.identification.numeric_regressor import Regressors

    robot, _model, values, fn = numeric("planar2")
    reg = Regressors(robot, {"L1": values["L1"], "G3": values["G3"]}, backend="numpy")
    K = np.array([values[name] for name in reg.parameters])
    q, qd = np.array([0.3, -0.7]), np.array([1.1, 0.4])
    D1, _ = reg.lagrangian(q, qd)
    np.testing.assert_allclose(D1[0] @ K, fn.mass_matrix(q) @ qd, rtol=1e-12)


# ------------------------------------------------------------------ gravity
def test_random_parameters_give_gravity_its_physical_value():
    """Gravity was drawn at random in size and sign (G3 = +0.287 on Krang:
    gravity up; the satellite in orbit fell) (issue 13, defect 5)."""
    for name, expected in (("krang", {"G3": -9.81}), ("rx90", {"G3": -9.81}), ("flexarm1", {"G1": 9.81}),
                           ("satellite", {"G1": 0.0, "G2": 0.0, "G3": 0.0})):
        robot = library(name)
        for seed in (0, 1):
            values = random_parameters(robot, np.random.default_rng(seed))
            assert {k: values[k] for k in expected} == expected, name
    assert gravity_values([0, 0, sympy.Symbol("G3")], gravity=1.62) == {"G3": -1.62}
    assert gravity_values(sympy.symbols("G1 G2 G3")) == {"G1": 0.0, "G2": 0.0, "G3": -9.81}  # a fixed base: z0 up
    assert gravity_values([sympy.Symbol("G1"), sympy.Symbol("G2"), 0], gravity=(1.0, 2.0, 0.0)) == {"G1": 1.0, "G2": 2.0}
    with pytest.raises(KaneRobotError, match="gravity must be a number"):
        gravity_values([0, 0, sympy.Symbol("G3")], gravity=(0, 1))


def test_the_satellite_at_rest_stays_at_rest():
    """In orbit (gravity 0) and without torques, nothing accelerates."""
    _robot, _model, _values, fn = numeric("satellite")
    q = [0.3, -0.2, 0.1, 0, 0, 0, 1, 0.4, -0.5, 0.6]
    np.testing.assert_allclose(fn.direct_dynamics(q, np.zeros(9), np.zeros(3)), np.zeros(9), atol=1e-12)
