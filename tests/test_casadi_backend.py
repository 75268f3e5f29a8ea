"""The CasADi backend (issue 29): every program as a casadi.Function.

``model.numeric(values, backend="casadi")`` runs each model's program as the
SX graph of :mod:`kanerobot.codegen.casadi`; its numbers must be the C
backend's (numpy's where there is no compiler) to 1e-12 relative, for one
state and a batch, on the RX-90, Krang, the floating satellite and two arms
of example-robot-data (UR5, Unitree Z1), with random physically consistent
parameters at random states.  ``model.casadi(name)`` with the parameters as
an input, evaluated at the values, equals the function with the values
bound; CasADi's own ``jacobian`` of the inverse dynamics graph equals the
derivative program (an independent path: automatic differentiation of the
graph against the forward-mode program of kanerobot.dynamics.derivatives).
"""

import shutil
import sys

import numpy as np
import pytest
import sympy
from conftest import assert_close, benchmark

import kanerobot as kr
from kanerobot.codegen import compiled
from kanerobot.codegen.backend import CodegenError
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.symbolic import Program

casadi = pytest.importorskip("casadi", reason="pip install -e '.[casadi]'")

from kanerobot.codegen.casadi import CasadiBackend, casadi_program  # noqa: E402 (needs casadi)

#: The reference backend: compiled C, numpy without a compiler.
REFERENCE = "c" if any(shutil.which(name) for name in compiled.COMPILERS) else "numpy"
RTOL = 1e-12
BASE_MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix", "direct_dynamics")
DERIVATIVES = ("inverse_dynamics_derivatives", "direct_dynamics_derivatives")
#: The robots, by the path of their files.
ROBOTS = {
    "rx90": lambda: kr.frames_path("rx90"),
    "satellite": lambda: kr.frames_path("satellite"),
    "krang": lambda: kr.frames_path("krang"),
    "ur5": lambda: _urdf("ur5_robot"),
    "z1": lambda: _urdf("z1"),
}


def _urdf(stem):
    robots = benchmark("urdf_vs_pinocchio").corpus()
    if stem not in robots:
        pytest.skip(f"{stem}.urdf of example-robot-data: pip install -e '.[bench]'")
    return robots[stem]


DEFAULT = ("rx90", "satellite")
#: The robots of the default run's checks; the others are long (their models take 3 to 5 s to build).
CHEAP = [pytest.param(name, marks=() if name in DEFAULT else pytest.mark.long) for name in ROBOTS]


class Case:
    """One robot: its model (derived once per module), values, the casadi and reference functions, random states."""

    def __init__(self, name, seed):
        self.robot = kr.load(ROBOTS[name]())
        self.model = kr.derive(self.robot)
        rng = np.random.default_rng(seed)
        self.values = random_parameters(self.robot, rng)
        self.fn = self.model.numeric(self.values, backend="casadi")
        self.reference = self.model.numeric(self.values, backend=REFERENCE)
        N, nv, n = 4, self.model.nv, self.model.n
        self.q = np.array([self.fn.random_configuration(rng) for _ in range(N)])
        self.qd, self.qdd, self.tau = rng.uniform(-2, 2, (N, nv)), rng.uniform(-3, 3, (N, nv)), rng.uniform(-5, 5, (N, n))

    def arguments(self, name, k=None):
        """The arguments of numeric function ``name`` at state ``k`` (the batch when None)."""
        pick = (lambda x: x) if k is None else (lambda x: x[k])
        q, qd, qdd, tau = pick(self.q), pick(self.qd), pick(self.qdd), pick(self.tau)
        return {
            "inverse_dynamics": (q, qd, qdd), "mass_matrix": (q,), "h": (q, qd), "gravity": (q,),
            "coriolis_matrix": (q, qd), "direct_dynamics": (q, qd, tau), "base_acceleration": (q, qd, qdd[..., self.model.root.nv:]),
            "inverse_dynamics_derivatives": (q, qd, qdd), "direct_dynamics_derivatives": (q, qd, tau),
        }[name]  # fmt: skip


@pytest.fixture(scope="module")
def cases():
    """{robot name: Case}, each derived on first use and kept for the module."""
    return {}


def case_of(cases, name):
    if name not in cases:
        cases[name] = Case(name, len(name))
    return cases[name]


def _same(got, expected, what):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), what
        for k, (a, b) in enumerate(zip(got, expected)):
            assert_close(a, b, rtol=RTOL, what=f"{what}[{k}]")
    else:
        assert_close(got, expected, rtol=RTOL, what=what)


def _check_models(case, name, models, reference, state):
    for model in models:
        function, expected = getattr(case.fn, model), getattr(reference, model)
        _same(function(*case.arguments(model, state)), expected(*case.arguments(model, state)), f"{name} {model}, one state")
        _same(function(*case.arguments(model)), expected(*case.arguments(model)), f"{name} {model}, batch")


def _models(case):
    return BASE_MODELS + (("base_acceleration",) if case.robot.floating else ()) + DERIVATIVES


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.long
def test_every_model_equals_the_reference_backend(cases, name):
    """Each model of the numeric protocol and the derivative programs, one state and a batch:
    casadi == C (numpy without a compiler).  Long: compiling every program to C takes
    3 to 5 s a robot (most of a minute for Krang)."""
    case = case_of(cases, name)
    assert case.fn.backend == "casadi" and case.fn.requested_backend == "casadi"
    _check_models(case, name, _models(case), case.reference, 0)


@pytest.mark.parametrize("name", ["rx90", "satellite"])
def test_every_model_equals_numpy(cases, name):
    """The default run's check (C's is the long test's; C and numpy agree to 1e-15, tests/test_compiled.py)."""
    case = case_of(cases, name)
    assert case.fn.backend == "casadi"
    _check_models(case, name, _models(case), case.model.numeric(case.values, backend="numpy"), 1)


@pytest.mark.parametrize("name", CHEAP)
def test_parameters_as_input_equal_the_bound_function(cases, name):
    """model.casadi(m) at p = the values == fn.casadi(m) (values folded in) == the numeric function."""
    case = case_of(cases, name)
    p = case.fn.parameter_values
    models = ("inverse_dynamics", "mass_matrix", "direct_dynamics") + (("base_acceleration",) if case.robot.floating else ())
    for model in models:
        free, bound = case.model.casadi(model), case.fn.casadi(model)
        assert free.name_in() == bound.name_in() + ["p"] and free.name_out() == bound.name_out()
        arguments = [np.asarray(a) for a in case.arguments(model, 2)]
        a = [x.full() for x in free.call(arguments + [p])]
        b = [x.full() for x in bound.call(arguments)]
        expected = getattr(case.fn, model)(*case.arguments(model, 2))  # equal to C's: test_every_model_*
        expected = expected if isinstance(expected, tuple) else (expected,)
        for k, (x, y, z) in enumerate(zip(a, b, expected)):
            assert_close(x, y, rtol=RTOL, what=f"{name} {model} output {k}: p as input vs bound")
            assert_close(y.reshape(np.shape(z)), z, rtol=RTOL, what=f"{name} {model} output {k}: bound vs numeric")


@pytest.mark.parametrize("name", CHEAP)
def test_casadi_jacobian_of_the_inverse_dynamics_equals_the_derivative_program(cases, name):
    """casadi.jacobian of the graph of tau(q, qd, qdd) == inverse_dynamics_derivatives (1e-10).

    On a floating base, q holds the base position and quaternion: the joints' columns
    are compared (the base's are along a twist of frame 0 in the program)."""
    case = case_of(cases, name)
    f = case.fn.casadi("inverse_dynamics")
    q, qd, qdd = (casadi.SX.sym(k, f.size1_in(k)) for k in ("q", "qd", "qdd"))
    tau = f(q, qd, qdd)
    jacobians = casadi.Function("J", [q, qd, qdd], [casadi.jacobian(tau, q), casadi.jacobian(tau, qd)])
    nq_root, nv_root = case.model.root.nq, case.model.root.nv
    for k in range(len(case.q)):
        state = case.arguments("inverse_dynamics", k)
        dq, dqd = (x.full() for x in jacobians(*state))
        program_dq, program_dqd = case.fn.inverse_dynamics_derivatives(*state)  # the program, run by casadi
        assert_close(dq[:, nq_root:], program_dq[:, nv_root:], rtol=1e-10, what=f"{name} dtau/dq, state {k}")
        assert_close(dqd, program_dqd, rtol=1e-10, what=f"{name} dtau/dqd, state {k}")
        if nq_root:  # the base position does not enter the dynamics
            assert_close(dq[:, :3], np.zeros((case.model.nv, 3)), rtol=1e-10, what=f"{name} dtau/d(base position)")


@pytest.mark.parametrize("name", DEFAULT)
def test_external_wrenches_as_inputs(cases, name):
    """wrench=True: the robot's wrenches are inputs; zero when not (the numeric functions' default)."""
    case = case_of(cases, name)
    labels = list(case.model.wrench)
    assert labels, f"{name} describes an external wrench"
    wrench = {label: np.random.default_rng(5).uniform(-3, 3, 6) for label in labels}
    for model in ("inverse_dynamics", "direct_dynamics"):
        f = case.fn.casadi(model, wrench=True)
        assert f.name_in()[3:] == [f"wrench_{label}" for label in labels]
        state = case.arguments(model, 3)
        got = f(*state, *wrench.values()).full().ravel()
        assert_close(got, getattr(case.fn, model)(*state, wrench=wrench), rtol=RTOL, what=f"{name} {model}")
        assert case.fn.casadi(model).name_in() == f.name_in()[:3]


@pytest.mark.parametrize("method", ["lagrange", "kane"])
def test_direct_dynamics_without_a_program_is_solved_in_the_graph(method):
    """Lagrange and Kane have no recursive direct dynamics: A^-1 ([0; tau] - H) by casadi.solve
    equals the numeric functions' solve (and the Newton-Euler recursive program)."""
    robot = kr.load(kr.frames_path("rx90"))
    model = kr.derive(robot, method=method)
    values = random_parameters(robot, np.random.default_rng(8))
    fn = model.numeric(values, backend="numpy")
    f = model.casadi("direct_dynamics", values)
    rng = np.random.default_rng(9)
    for _ in range(3):
        q, qd, tau = rng.uniform(-2, 2, 6), rng.uniform(-2, 2, 6), rng.uniform(-5, 5, 6)
        assert_close(f(q, qd, tau).full().ravel(), fn.direct_dynamics(q, qd, tau), rtol=1e-10)


def test_kinematics_run_through_casadi(cases):
    """pose, jacobian and the balance programs of the numeric protocol, casadi == numpy."""
    case = case_of(cases, "rx90")
    q, reference = case.q, case.model.numeric(case.values, backend="numpy")
    for call in (
        lambda fn: fn.pose("6", q), lambda fn: fn.jacobian("6", q[0], projection="6"),
        lambda fn: fn.center_of_mass(q), lambda fn: fn.centroidal_momentum_matrix(q[1]),
    ):  # fmt: skip
        assert_close(call(case.fn), call(reference), rtol=RTOL)


def test_flexible_joints_run_through_casadi():
    robot = kr.load(kr.frames_path("flexarm1"))
    model = kr.derive(robot)
    values = random_parameters(robot, np.random.default_rng(3))
    fn, reference = model.numeric(values, backend="casadi"), model.numeric(values, backend="numpy")
    assert fn.backend == "casadi"
    rng = np.random.default_rng(4)
    z, zd, tau = rng.uniform(-1, 1, (3, fn.m)), rng.uniform(-1, 1, (3, fn.m)), rng.uniform(-1, 1, (3, fn.n))
    assert_close(fn.mass_matrix(z), reference.mass_matrix(z), rtol=RTOL)
    assert_close(fn.direct_dynamics(z[0], zd[0], tau[0]), reference.direct_dynamics(z[0], zd[0], tau[0]), rtol=RTOL)


def test_constrained_structures_run_through_casadi():
    """A wheeled base (and closed loops, mimic joints): their tree's programs run through casadi."""
    robot = kr.load(kr.frames_path("diffdrive"))
    model = kr.derive(robot)
    values = random_parameters(robot, np.random.default_rng(6))
    fn, reference = model.numeric(values, backend="casadi"), model.numeric(values, backend="numpy")
    assert fn.backend == "casadi"
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1, 1, (3, fn.nq)), rng.uniform(-1, 1, (3, fn.nv)), rng.uniform(-1, 1, (3, fn.nv))
    assert_close(fn.inverse_dynamics(q, qd, qdd), reference.inverse_dynamics(q, qd, qdd), rtol=RTOL)
    assert_close(fn.mass_matrix(q[0]), reference.mass_matrix(q[0]), rtol=RTOL)


def test_the_graph_has_one_node_per_assignment_and_shares_them():
    """The SX graph is the program's: an assignment read by several outputs is built once (no expansion)."""
    x, y = sympy.symbols("x y")
    program = Program(inputs=[x, y])
    shared = program.assign("S", sympy.sin(x) * sympy.cos(y) + x * y)
    for k in range(1, 6):
        program.set_output(f"o{k}", k * shared)
    f = casadi_program(program, "shared", [("v", [x, y])]).function
    # sin, cos, two products, a sum: five operations for S, and one product per output
    assert f.n_instructions() - f.nnz_in() - f.nnz_out() <= 5 + 5 + 2  # + the constants 2 .. 5 (1 * S is S)
    assert_close(f([0.3, 0.7]).full().ravel(), [k * (np.sin(0.3) * np.cos(0.7) + 0.21) for k in range(1, 6)])


def test_printer_functions_match_numpy():
    """Abs, sign, atan2, Min, Max, sqrt and powers: casadi == sympy's own evaluation."""
    x, y = sympy.symbols("x y")
    program = Program(inputs=[x, y])
    exprs = [
        sympy.Abs(x) * sympy.sign(y), sympy.atan2(y, x), sympy.Min(x, y, 0.2), sympy.Max(x, y),
        sympy.sqrt(x**2 + y**2), 1 / sympy.sqrt(1 + x**2),
        sympy.exp(x) + sympy.log(1 + y**2) + sympy.tanh(y) + sympy.pi + sympy.E, x**3 - (1 + y**2) ** sympy.Rational(1, 3),
    ]  # fmt: skip
    for k, expr in enumerate(exprs):
        program.set_output(f"e{k}", expr)
    args = [("v", [x, y])]
    f = casadi_program(program, "mixed", args)
    for point in ([0.5, -0.3], [-0.4, 0.9], [-1.5, -2.0], [0.0, 0.7]):
        exact = [float(expr.evalf(30, subs={x: point[0], y: point[1]})) for expr in exprs]
        assert_close(f(point), exact, rtol=RTOL, what=str(point))


def test_a_piecewise_is_an_if_else():
    x, y = sympy.symbols("x y")
    program = Program(inputs=[x, y])
    program.set_output("e", sympy.Piecewise((x, x > y), (y**2, x < 0), (1, True)))
    f = casadi_program(program, "piecewise", [("v", [x, y])])
    closed_form = lambda a, b: a if a > b else b**2 if a < 0 else 1.0  # noqa: E731
    for point in ([0.5, -0.3], [-0.4, 0.9], [0.2, 0.9]):
        assert f(point)[0] == closed_form(*point)


def test_a_function_casadi_lacks_is_one_codegen_error():
    x = sympy.Symbol("x")
    program = Program(inputs=[x])
    program.set_output("y", sympy.besselj(0, x))
    with pytest.raises(CodegenError, match="casadi cannot print besselj"):
        CasadiBackend(program, "f", [("v", [x])]).generate()


def test_without_casadi_one_line_says_how_to_install_it(monkeypatch):
    model = kr.derive(kr.load(kr.frames_path("planar2")))
    values = random_parameters(model.robot, np.random.default_rng(1))
    monkeypatch.setitem(sys.modules, "casadi", None)  # import casadi raises ImportError
    for call in (lambda: model.numeric(values, backend="casadi"), lambda: model.casadi("inverse_dynamics")):
        with pytest.raises(kr.KaneRobotError) as error:
            call()
        assert str(error.value) == "backend 'casadi' needs CasADi, which is not installed: pip install 'kanerobot[casadi]'"
    with pytest.raises(kr.KaneRobotError, match="choose among auto, c, numpy, casadi"):
        model.numeric(values, backend="casadi2")


def test_a_model_without_casadi_function_is_refused():
    model = kr.derive(kr.load(kr.frames_path("planar2")))
    with pytest.raises(kr.KaneRobotError, match="model 'pose' has no casadi function: choose among inverse_dynamics, "):
        model.casadi("pose")
    lagrange = kr.derive(model.robot, method="lagrange")
    with pytest.raises(kr.KaneRobotError, match="lagrange engine has no program for direct_dynamics_derivatives"):
        lagrange.casadi("direct_dynamics_derivatives")
    with pytest.raises(kr.ParameterError, match="no value for"):
        model.casadi("inverse_dynamics", {"L1": 1.0})
