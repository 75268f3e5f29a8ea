"""Analytic derivatives of the inverse and direct dynamic models (issue 16, point 2).

Every derivative is checked against an independent path: central finite
differences of the numeric models (the configuration of a floating base
moved by :func:`kanerobot.robot.joints.integrate`, pinocchio's tangent
space) and, when pinocchio is installed, its ``computeRNEADerivatives`` and
``computeABADerivatives``; the solved derivatives of Lagrange and Kane
against Newton-Euler's programs.  Random physically consistent parameters,
random states; each robot is derived once per session.
"""

import functools

import numpy as np
import pytest
import sympy
from conftest import derived, floating_copy, tree_robot

import kanerobot as kr
from kanerobot.codegen import generate
from kanerobot.dynamics import derivatives
from kanerobot.dynamics.floating import FloatingBaseModel
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.interop import to_pinocchio
from kanerobot.robot.joints import integrate


@functools.cache
def model_of(name):
    """The Newton-Euler model of ``name``: frames/ robots, ``tree`` (fixed-base tree of
    conftest) and ``floating_tree`` (the same on a free flyer), derived once."""
    if name == "tree":
        return kr.derive(tree_robot())
    if name == "floating_tree":
        return FloatingBaseModel(floating_copy(tree_robot()))
    return derived(name)


def numeric(name, seed, backend="numpy", **options):
    model = model_of(name)
    values = random_parameters(model.robot, np.random.default_rng(seed), **options)
    if name == "floating_tree":
        values.update(G1=0.3, G2=-1.1, G3=-9.81)  # gravity makes the base orientation count
    return model.numeric(values, backend=backend)


def random_state(fn, rng):
    """(q, qd, qdd, tau), a unit quaternion for a floating base, rates away from 0 (Coulomb friction)."""
    model = fn.model
    q = rng.uniform(-1.5, 1.5, model.nq)
    if model.nq != model.nv:
        q[3:7] /= np.linalg.norm(q[3:7])
    qd = rng.uniform(0.3, 1.5, model.nv) * rng.choice([-1, 1], model.nv)
    return q, qd, rng.uniform(-2, 2, model.nv), rng.uniform(-3, 3, model.n)


def moved(fn, q, dv):
    """``q (+) dv``: joints by addition, a free flyer by the exponential of its twist."""
    return integrate(q, dv, 1.0) if fn.model.nq != fn.model.nv else q + dv


def central(fn, f, args, index, step=1e-6, **options):
    """Central differences of ``f(*args, **options)`` along each unit direction of argument
    ``index`` (a configuration moves by :func:`moved`), one column per direction."""
    x = args[index]
    columns = []
    for k in range(len(x) if index else fn.model.nv):
        d = np.zeros(len(x) if index else fn.model.nv)
        d[k] = step
        values = []
        for sign in (1, -1):
            shifted = list(args)
            shifted[index] = x + sign * d if index else moved(fn, x, sign * d)
            values.append(f(*shifted, **options))
        columns.append((values[0] - values[1]) / (2 * step))
    return np.array(columns).T


def assert_relative(actual, expected, tolerance, what):
    scale = max(1.0, np.abs(expected).max())
    error = np.abs(actual - expected).max()
    assert error <= tolerance * scale, f"{what}: max abs difference {error:.3g}, scale {scale:.3g}"


def check_against_differences(fn, rng, states=2, wrench=None):
    """Both derivative models of ``fn`` equal central differences of its models to 1e-6 relative."""
    model = fn.model
    extra = {} if wrench is None else {"wrench": wrench}
    # a fixed base's direct dynamics takes no wrench
    ddm_extra = extra if model.nq != model.nv else {}
    for _ in range(states):
        q, qd, qdd, tau = random_state(fn, rng)
        derivatives_ = fn.inverse_dynamics_derivatives(q, qd, qdd, **extra)
        assert [d.shape for d in derivatives_] == [(model.nv, model.nv)] * 2
        for k, (what, d) in enumerate(zip(("dtau/dq", "dtau/dqd"), derivatives_)):
            assert_relative(d, central(fn, fn.inverse_dynamics, (q, qd, qdd), k, **extra), 1e-6, what)
        derivatives_ = fn.direct_dynamics_derivatives(q, qd, tau, **ddm_extra)
        assert [d.shape for d in derivatives_] == [(model.nv, model.nv)] * 2 + [(model.nv, model.n)]
        for k, (what, d) in enumerate(zip(("dqdd/dq", "dqdd/dqd", "dqdd/dtau"), derivatives_)):
            assert_relative(d, central(fn, fn.direct_dynamics, (q, qd, tau), k, **ddm_extra), 1e-6, what)


@pytest.mark.parametrize("name", ["rx90", "tree", "satellite", "floating_tree"])
@pytest.mark.long
def test_derivatives_equal_finite_differences(name):
    """Serial (RX-90, with friction and its wrench on link 6), tree, floating (satellite, a tree on
    a free flyer): both derivative models, numpy backend, against central differences."""
    fn = numeric(name, 3)
    rng = np.random.default_rng(11)
    wrench = {label: rng.uniform(-2, 2, 6) for label in fn.model.wrench} or None
    check_against_differences(fn, rng, wrench=wrench)


@pytest.mark.long
def test_floating_urdf_derivatives_equal_finite_differences(tmp_path):
    """A URDF loaded with floating=True (test_urdf's arm: oblique axes, a prismatic joint, fixed
    joints, friction and damping from the file): a free flyer's derivatives from parsed values."""
    from test_urdf import ARM, render

    from kanerobot.robot.urdf import parse_urdf

    path = tmp_path / "arm.urdf"
    path.write_text(render(ARM))
    robot = parse_urdf(path, floating=True).robot
    assert robot.floating
    fn = kr.derive(robot).numeric(robot.values, backend="numpy")
    check_against_differences(fn, np.random.default_rng(13), states=1)


@pytest.mark.slow
def test_krang_derivatives_equal_finite_differences():
    check_against_differences(numeric("krang", 5, backend="c"), np.random.default_rng(12), states=1)


def test_batches_and_backends_agree():
    """A batch gives each state's derivatives; C (when a compiler is found) gives numpy's."""
    fn = numeric("planar2", 1)
    rng = np.random.default_rng(2)
    states = [random_state(fn, rng) for _ in range(4)]
    q, qd, qdd, tau = (np.array(column) for column in zip(*states))
    batch = fn.direct_dynamics_derivatives(q, qd, tau)
    assert [block.shape for block in batch] == [(4, 2, 2)] * 3
    for k in range(4):
        for block, one in zip(batch, fn.direct_dynamics_derivatives(q[k], qd[k], tau[k])):
            np.testing.assert_allclose(block[k], one, rtol=1e-13, atol=1e-13)
    try:
        c = numeric("planar2", 1, backend="c")
    except kr.KaneRobotError as exc:  # no C compiler: CompileError names why
        pytest.skip(f"no C backend: {exc}")
    for got, expected in zip(c.inverse_dynamics_derivatives(q, qd, qdd) + c.direct_dynamics_derivatives(q, qd, tau),
                             fn.inverse_dynamics_derivatives(q, qd, qdd) + batch):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_models_programs_and_counts():
    """The derivative models are models like the others: programs, counts, C layout; Coulomb
    friction's sign differentiates to 0; every construction of each gives the same numbers."""
    model = model_of("planar2")
    assert set(derivatives.DERIVATIVE_MODELS) <= set(model.models)
    program = model.program("inverse_dynamics_derivatives")
    assert len(program.outputs) == 2 * 4 and model.op_count("inverse_dynamics_derivatives") == program.op_count()
    assert "DiracDelta" not in str(program) and "sign" not in str(program)
    assert len(model.program("direct_dynamics_derivatives").outputs) == 2 * 6
    assert [len(row) for row in model._output_grid("direct_dynamics_derivatives")] == [6, 6]
    fn = numeric("planar2", 4)
    q, qd, qdd, tau = random_state(fn, np.random.default_rng(5))
    given = {str(k): v for k, v in fn.values.items()}
    for symbols, values in ((model.q, q), (model.qd, qd), (model.qdd, qdd), (model.tau, tau)):
        given |= dict(zip(map(str, symbols), values))

    def run(program):
        return np.array(program.to_function()(*[given.get(str(s), 0.0) for s in program.inputs]), dtype=float)

    for build, constructions in ((derivatives.inverse_dynamics_derivatives, ("forward", "coriolis")),
                                 (derivatives.direct_dynamics_derivatives, ("direct", "inverse", "product"))):
        first, *others = (run(build(model, construction)) for construction in constructions)
        for other in others:
            np.testing.assert_allclose(other, first, rtol=1e-11, atol=1e-11)


SOLVED_CASES = [("planar2", "lagrange"), ("planar2", "kane"), ("satellite", "kane"),
                pytest.param("satellite", "lagrange", marks=pytest.mark.slow)]


@pytest.mark.parametrize(("name", "method"), SOLVED_CASES)
def test_solved_derivatives_of_lagrange_and_kane(name, method):
    """Lagrange and Kane have no articulated-body program: their direct model's derivatives are
    solved from A and their own idm derivatives (the quaternion's tangent seeds serve their
    programs too), and equal Newton-Euler's programs."""
    ne = numeric(name, 6)
    values = {str(k): v for k, v in ne.values.items()}
    robot = ne.model.robot
    other = (FloatingBaseModel(robot, method=method) if robot.floating else derived(name, method)).numeric(values, backend="numpy")
    assert not other.model.has_program("direct_dynamics_derivatives")
    q, qd, qdd, tau = random_state(ne, np.random.default_rng(7))
    for got, expected in zip(other.inverse_dynamics_derivatives(q, qd, qdd) + other.direct_dynamics_derivatives(q, qd, tau),
                             ne.inverse_dynamics_derivatives(q, qd, qdd) + ne.direct_dynamics_derivatives(q, qd, tau)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    count = other.model.op_count("direct_dynamics_derivatives")
    assert count["mul"] > other.model.op_count("inverse_dynamics_derivatives")["mul"]


def test_errors():
    model = model_of("satellite")
    with pytest.raises(KaneRobotError, match="floating base: its direct model's derivatives take construction='direct'"):
        derivatives.direct_dynamics_derivatives(model, construction="inverse")
    with pytest.raises(KaneRobotError, match="unknown construction 'fast': choose among auto, product, inverse, direct"):
        derivatives.direct_dynamics_derivatives(model, construction="fast")
    with pytest.raises(KaneRobotError, match="satellite: dtau/dqd = 2 C \\+ diag\\(FV\\) needs a fixed root"):
        derivatives.inverse_dynamics_derivatives(model, construction="coriolis")
    with pytest.raises(KaneRobotError, match="unknown construction 'reverse': choose among auto, coriolis, forward"):
        derivatives.inverse_dynamics_derivatives(model, construction="reverse")
    fn = numeric("satellite", 2)
    with pytest.raises(KaneRobotError, match="q must have 10 values"):
        fn.inverse_dynamics_derivatives(np.zeros(9), np.zeros(9), np.zeros(9))
    with pytest.raises(KaneRobotError, match="tau must have 3 values"):
        fn.direct_dynamics_derivatives(np.r_[np.zeros(6), 1.0, np.zeros(3)], np.zeros(9), np.zeros(9))


# --------------------------------------------------------------- pinocchio
def check_against_pinocchio(name, seed, states=3, backend="numpy"):
    """Both derivative models against computeRNEADerivatives / computeABADerivatives to 1e-8;
    returns the largest absolute difference."""
    pin = pytest.importorskip("pinocchio", reason="pinocchio compares the derivatives: pip install -e '.[bench]'")
    model = model_of(name)
    rng = np.random.default_rng(seed)
    values = random_parameters(model.robot, rng, friction=False, rotor=False, wrench=False)
    fn = model.numeric(values, backend=backend)
    pmodel = to_pinocchio(model.robot, values)
    data = pmodel.createData()
    worst = 0.0
    for _ in range(states):
        q, qd, qdd, tau = random_state(fn, rng)
        expected = tuple(np.array(x) for x in pin.computeRNEADerivatives(pmodel, data, q, qd, qdd)[:2])  # copies: data is reused
        got = fn.inverse_dynamics_derivatives(q, qd, qdd)
        full = np.concatenate([np.zeros(model.nv - model.n), tau])
        pin.computeABADerivatives(pmodel, data, q, qd, full)
        Minv = np.triu(data.Minv) + np.triu(data.Minv, 1).T
        expected += (data.ddq_dq, data.ddq_dv, Minv[:, model.nv - model.n:])
        got += fn.direct_dynamics_derivatives(q, qd, tau)
        for what, a, b in zip(("dtau/dq", "dtau/dqd", "dqdd/dq", "dqdd/dqd", "dqdd/dtau"), got, expected):
            assert_relative(a, np.asarray(b), 1e-8, f"{name} {what} against pinocchio")
            worst = max(worst, float(np.abs(a - b).max()))
    return worst


@pytest.mark.parametrize("name", ["rx90", "satellite", "floating_tree"])
def test_derivatives_equal_pinocchio(name):
    check_against_pinocchio(name, 21)


@pytest.mark.slow
def test_krang_derivatives_equal_pinocchio():
    check_against_pinocchio("krang", 22, states=2, backend="c")


def test_exported_python_equals_the_numeric_model():
    """The derivative programs export like every model (kanerobot.codegen.generate, the
    model's output layout): the generated Python gives the numeric functions' matrices."""
    model = model_of("planar2")
    fn = numeric("planar2", 8)
    q, qd, qdd, tau = random_state(fn, np.random.default_rng(9))
    parameters = [sympy.Symbol(name) for name in model.parameters]
    groups = {"q": (model.q, q), "qd": (model.qd, qd), "qdd": (model.qdd, qdd), "tau": (model.tau, tau)}
    for name, keys, expected in (
        ("inverse_dynamics_derivatives", ("q", "qd", "qdd"), np.hstack(fn.inverse_dynamics_derivatives(q, qd, qdd))),
        ("direct_dynamics_derivatives", ("q", "qd", "tau"), np.hstack(fn.direct_dynamics_derivatives(q, qd, tau))),
    ):
        args = [(key, groups[key][0]) for key in keys] + [("p", parameters)]
        text = generate(model.program(name), "python", name, args, outputs=model._output_grid(name))
        namespace = {}
        exec(text, namespace)
        got = namespace[name](*(groups[key][1] for key in keys), [fn.values[s] for s in parameters])
        np.testing.assert_allclose(np.asarray(got, dtype=float), expected, rtol=1e-12, atol=1e-12)
