"""The JAX backend (issue 29): ``model.numeric(values, backend="jax")`` and ``fn.jax_function(name)``.

Every model as a pure JAX function equals the C backend (numpy without a
compiler) at random states and random physically consistent parameters, one
state and a batch; JAX's forward-mode autodiff of the inverse and direct
dynamics equals the derivative programs (an independent path: they are
sympy programs of their own, :mod:`kanerobot.dynamics.derivatives`); a
``vmap`` over parameter vectors equals one numeric model per vector.

The raw functions are checked eagerly (op by op: no XLA compilation, which
takes seconds for programs of thousands of lines); the jitted paths on the
RX-90's smaller programs, and every model through ``backend="jax"`` under
``long``.
"""

import functools
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_close, derived, library

import kanerobot as kr
from kanerobot.dynamics.dynamic_model import select_backend
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

jax = pytest.importorskip("jax", reason="pip install -e '.[jax]'")

from kanerobot.dynamics.jax_model import JAX_FUNCTIONS  # noqa: E402  (after the skip: loads kanerobot.codegen.jax)

REFERENCE = select_backend("auto")[0]  # "c", or "numpy" without a compiler
URDFS = {"double_pendulum": "double_pendulum_description/urdf/double_pendulum_continuous.urdf", "ur5": "ur_description/urdf/ur5_robot.urdf"}
DERIVATIVES = ("inverse_dynamics_derivatives", "direct_dynamics_derivatives")
#: (robot, backend of the derivative programs' reference).  Compiling the derivative programs to C
#: takes 5 to 15 s a robot: the default run reads them with numpy (the same programs, not JAX's
#: path), the long run with C, and adds the UR5 and the 17-joint Krang.
ROBOTS = [("rx90", "numpy"), ("satellite", "numpy"), ("double_pendulum", "numpy")] + [
    pytest.param(name, REFERENCE, marks=pytest.mark.long) for name in ("rx90", "satellite", "double_pendulum", "ur5", "krang")
]
BATCH = 3


def urdf_path(name):
    try:
        folder = Path(importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed: pip install -e '.[test]'")
    return folder / URDFS[name]


@functools.cache
def case(name):
    """(reference numeric functions, JAX ones, one state's arguments by model, a batch's), derived once per module."""
    model = kr.derive(kr.load(urdf_path(name))) if name in URDFS else derived(name)
    rng = np.random.default_rng(29)
    values = random_parameters(model.robot, rng)
    reference = model.numeric(values, backend=REFERENCE)
    fj = model.numeric(values, backend="jax")
    readers = {REFERENCE: reference, "numpy": model.numeric(values, backend="numpy")}
    q = np.stack([reference.random_configuration(rng) for _ in range(BATCH)])
    qd, qdd = rng.normal(size=(BATCH, reference.nv)), rng.normal(size=(BATCH, reference.nv))
    tau, joints_qdd = rng.normal(size=(BATCH, reference.n)), rng.normal(size=(BATCH, reference.n))
    batch = {"q": q, "qd": qd, "qdd": qdd, "tau": tau}
    arguments = {
        name: [joints_qdd if (name == "base_acceleration" and key == "qdd") else batch[key] for key in keys]
        for name, keys in JAX_FUNCTIONS.items()
    }
    return reference, fj, arguments, readers


def models(fn):
    return [name for name in JAX_FUNCTIONS if fn.provides(name)]


def assert_same(actual, expected, rtol, what):
    actual = actual if isinstance(actual, tuple) else (actual,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual) == len(expected), what
    for a, e in zip(actual, expected):
        assert_close(np.asarray(a), e, rtol=rtol, what=what)


@pytest.mark.parametrize("name, derivatives", ROBOTS)
def test_every_jax_function_equals_the_reference(name, derivatives):
    reference, fj, arguments, readers = case(name)
    for model in models(reference):
        if model in DERIVATIVES:
            reference = readers[derivatives]
        function = fj.jax_function(model)
        args = arguments[model]
        assert_same(function(*args), getattr(reference, model)(*args), 1e-12, f"{name} {model}, batch")
        assert_same(function(*[a[0] for a in args]), getattr(reference, model)(*[a[0] for a in args]), 1e-12, f"{name} {model}")


def tangent_map(fn, q):
    """``dq/dv`` at ``q``: column k is the configuration's rate at the speed e_k (a quaternion's 1/2 Q (e_k, 0))."""
    return np.stack([fn.configuration_derivative(q, e) for e in np.eye(fn.nv)], axis=1)


@pytest.mark.parametrize("name, derivatives", ROBOTS)
def test_autodiff_equals_the_derivative_programs(name, derivatives):
    _, fj, arguments, readers = case(name)
    reference = readers[derivatives]
    q, qd, qdd = (a[0] for a in arguments["inverse_dynamics"])
    tau = arguments["direct_dynamics"][2][0]
    G = tangent_map(reference, q)  # derivatives along q (+) e_k: the chain rule through dq/dv
    inverse = fj.jax_function("inverse_dynamics")
    d_dq, d_dqd = jax.jacfwd(inverse, argnums=(0, 1))(q, qd, qdd)
    assert_same((np.asarray(d_dq) @ G, d_dqd), reference.inverse_dynamics_derivatives(q, qd, qdd), 1e-10, f"{name} d tau")
    direct = fj.jax_function("direct_dynamics")
    d_dq, d_dqd, d_dtau = jax.jacfwd(direct, argnums=(0, 1, 2))(q, qd, tau)
    assert_same((np.asarray(d_dq) @ G, d_dqd, d_dtau), reference.direct_dynamics_derivatives(q, qd, tau), 1e-10, f"{name} d qdd")


def test_vmap_over_parameters_equals_one_model_per_vector():
    reference, fj, arguments, _ = case("rx90")
    model, robot = reference.model, reference.model.robot
    draws = [random_parameters(robot, np.random.default_rng(k)) for k in range(3)]
    P = np.array([[draw[name] for name in model.parameters] for draw in draws])
    q, qd, qdd = (a[0] for a in arguments["inverse_dynamics"])
    inverse, mass = fj.jax_function("inverse_dynamics"), fj.jax_function("mass_matrix")
    torques = jax.vmap(inverse, in_axes=(None, None, None, 0))(q, qd, qdd, P)
    masses = jax.vmap(mass, in_axes=(None, 0))(q, P)
    for k, draw in enumerate(draws):
        one = model.numeric(draw, backend=REFERENCE)
        assert_close(np.asarray(torques[k]), one.inverse_dynamics(q, qd, qdd), rtol=1e-12, what=f"tau, draw {k}")
        assert_close(np.asarray(masses[k]), one.mass_matrix(q), rtol=1e-12, what=f"A, draw {k}")
    # and over states and parameters at once: the batch of states broadcast against one vector per state
    Q = arguments["inverse_dynamics"][0]
    both = jax.vmap(inverse)(Q, *arguments["inverse_dynamics"][1:], P)
    for k, draw in enumerate(draws):
        one = model.numeric(draw, backend=REFERENCE)
        assert_close(np.asarray(both[k]), one.inverse_dynamics(*(a[k] for a in arguments["inverse_dynamics"])), rtol=1e-12)


def test_jit_equals_the_reference_and_grad_of_a_cost():
    reference, fj, arguments, _ = case("rx90")
    args = arguments["inverse_dynamics"]
    inverse = jax.jit(fj.jax_function("inverse_dynamics"))
    assert_close(np.asarray(inverse(*args)), reference.inverse_dynamics(*args), rtol=1e-12)
    assert inverse(*args).dtype == np.float64
    # a scalar cost of the torques, differentiated (reverse mode, eagerly: jitting it compiles for seconds):
    # the gradient is 2 dtau/dqd^T tau
    q, qd, qdd = (a[0] for a in args)
    cost = jax.grad(lambda v: (fj.jax_function("inverse_dynamics")(q, v, qdd) ** 2).sum())
    _, d_dqd = reference.inverse_dynamics_derivatives(q, qd, qdd)
    assert_close(np.asarray(cost(qd)), 2 * d_dqd.T @ reference.inverse_dynamics(q, qd, qdd), rtol=1e-10)


def test_backend_jax_answers_the_protocol():
    """The numeric methods on backend="jax" (jitted programs): the RX-90's smaller ones here, all under long."""
    reference, fj, arguments, _ = case("rx90")
    assert fj.backend == "jax"
    for model in ("inverse_dynamics", "gravity"):
        args = arguments[model]
        assert_close(getattr(fj, model)(*args), getattr(reference, model)(*args), rtol=1e-12, what=model)
        assert_close(getattr(fj, model)(*[a[0] for a in args]), getattr(reference, model)(*[a[0] for a in args]), rtol=1e-12)
    q = arguments["inverse_dynamics"][0]
    assert_close(fj.pose("6", q), reference.pose("6", q), rtol=1e-12, what="pose")


@pytest.mark.long
@pytest.mark.parametrize("name", ["rx90", "satellite", "double_pendulum", "ur5"])  # Krang's jit builds take many minutes
def test_backend_jax_answers_every_method(name):
    reference, fj, arguments, _ = case(name)
    for model in models(reference):
        args = arguments[model]
        assert_same(getattr(fj, model)(*args), getattr(reference, model)(*args), 1e-12, f"{name} {model}")
    q, qd = arguments["h"]
    frame = reference.model.robot.joint_labels[-1]
    for method, args in [("pose", (frame, q)), ("jacobian", (frame, q)), ("center_of_mass", (q,)),
                         ("centroidal_momentum_matrix", (q,)), ("centroidal_momentum", (q, qd))]:  # fmt: skip
        assert_close(getattr(fj, method)(*args), getattr(reference, method)(*args), rtol=1e-12, what=f"{name} {method}")


def test_missing_jax_is_one_line(monkeypatch):
    reference, _, _, _ = case("rx90")
    values = {str(k): v for k, v in reference.values.items()}
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now fails
    with pytest.raises(KaneRobotError, match=r"backend 'jax' needs JAX, which is not installed: pip install 'kanerobot\[jax\]'"):
        reference.model.numeric(values, backend="jax")


def test_importing_kanerobot_does_not_import_jax():
    code = "import sys, kanerobot, kanerobot.codegen, kanerobot.dynamics.model; print('jax' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1])
    assert result.stdout.strip() == "False"


def test_unknown_function_and_fixed_base_acceleration():
    _, fj, _, _ = case("rx90")
    with pytest.raises(KaneRobotError, match="no JAX function 'pose_matrix': available are inverse_dynamics, mass_matrix"):
        fj.jax_function("pose_matrix")
    with pytest.raises(KaneRobotError, match="no base_acceleration"):
        fj.jax_function("base_acceleration")
    assert library("rx90").name == fj.model.robot.name


def test_models_solved_from_a_and_h():
    """Lagrange has no direct-dynamics program: the JAX functions solve ``A qdd = tau - H`` as the numeric ones do."""
    model = derived("planar2", "lagrange")
    values = random_parameters(model.robot, np.random.default_rng(3))
    reference, fj = model.numeric(values, backend="numpy"), model.numeric(values, backend="jax")
    rng = np.random.default_rng(4)
    q, qd, tau = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    for name in ("direct_dynamics", "direct_dynamics_derivatives"):
        assert not model.has_program(name)
        assert_same(fj.jax_function(name)(q, qd, tau), getattr(reference, name)(q, qd, tau), 1e-12, name)
    d_dq = jax.jacfwd(fj.jax_function("direct_dynamics"))(q[0], qd[0], tau[0])
    assert_close(np.asarray(d_dq), reference.direct_dynamics_derivatives(q[0], qd[0], tau[0])[0], rtol=1e-10)


@pytest.mark.parametrize("name", ["flexarm1", pytest.param("diffdrive", marks=pytest.mark.long)])
def test_other_structures_run_their_programs_on_jax(name):
    """Flexible joints (their own programs) and a wheeled base (the tree's, projected): backend="jax" runs them."""
    model = derived(name)
    values = random_parameters(model.robot, np.random.default_rng(5))
    reference, fj = model.numeric(values, backend=REFERENCE), model.numeric(values, backend="jax")
    rng = np.random.default_rng(6)
    q, qd, tau = rng.normal(size=(BATCH, fj.nq)), rng.normal(size=(BATCH, fj.nv)), rng.normal(size=(BATCH, len(model.state_space.torques)))
    for method, args in [("mass_matrix", (q,)), ("h", (q, qd)), ("direct_dynamics", (q, qd, tau))]:
        assert_close(getattr(fj, method)(*args), getattr(reference, method)(*args), rtol=1e-12, what=f"{name} {method}")
    # the JAX programs ran: the flexible model's own, or the tree's under the wheeled one
    assert any("mass_matrix" in m.__dict__.get("_jax_functions", {}) for m in (model, model.tree))
    assert fj.backend == "jax"


def test_jit_falls_back_where_xla_lacks_an_option(monkeypatch):
    """kanerobot.codegen.jax.jit asks XLA's CPU compiler for faster builds; an XLA without the option compiles plainly."""
    from kanerobot.codegen import jax as jax_code

    monkeypatch.setattr(jax_code, "CPU_COMPILER_OPTIONS", {"xla_kanerobot_no_such_option": True})
    square = jax_code.jit(lambda x: x * x)
    assert float(square(3.0)) == 9.0 and float(square(4.0)) == 16.0
