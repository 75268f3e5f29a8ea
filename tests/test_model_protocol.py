"""One numeric protocol for every structure (kanerobot.dynamics.dynamic_model.PROTOCOL).

For one robot of each structure (serial, tree, floating base, closed loop,
wheeled base, flexible joints), the numeric model has every method of the
protocol with the signature of :class:`NumericDynamics`, and each method
either answers in the shapes its sizes say (nq, nv, the inputs) or raises a
:class:`KaneRobotError` saying why.
"""

import inspect

import numpy as np
import pytest
from conftest import library, tree_robot

import kanerobot as kr
from kanerobot.dynamics.dynamic_model import PROTOCOL, NumericDynamics
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

ROBOTS = ("planar2", "tree", "satellite", "fourbar", "diffdrive", "planar2flex")
#: Over 1.5 s (the derivative and balance programs of 7 joints, of a free flyer): the long group.
LONG = ("tree", "satellite")


@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.long) if name in LONG else name for name in ROBOTS])
def case(request):
    """``(fn, space, state)`` of one robot, numpy backend (nothing compiled), a random state."""
    robot = tree_robot() if request.param == "tree" else library(request.param)
    rng = np.random.default_rng(ROBOTS.index(request.param))
    fn = kr.derive(robot).numeric(random_parameters(robot, rng, wrench=False), backend="numpy", physical=False)
    space = fn.state_space
    q, qd = space.sample(rng)
    return request.param, fn, space, (q, qd, rng.uniform(-1, 1, space.nv), rng.uniform(-1, 1, space.ntau))


def _signature(function):
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_every_method_has_the_signature_of_the_protocol(case):
    _, fn, _, _ = case
    for name in PROTOCOL:
        reference = inspect.getattr_static(NumericDynamics, name)
        mine = inspect.getattr_static(type(fn), name)
        if isinstance(reference, property):
            assert isinstance(mine, property), name
            continue
        assert _signature(mine) == _signature(reference), name
    assert (fn.nq, fn.nv) == (len(case[3][0]), len(case[3][1]))


def _call(fn, name, q, qd, qdd, tau, frame):
    calls = {
        "inverse_dynamics": lambda: fn.inverse_dynamics(q, qd, qdd),
        "mass_matrix": lambda: fn.mass_matrix(q),
        "h": lambda: fn.h(q, qd),
        "gravity": lambda: fn.gravity(q),
        "coriolis_matrix": lambda: fn.coriolis_matrix(q, qd),
        "direct_dynamics": lambda: fn.direct_dynamics(q, qd, tau),
        "base_acceleration": lambda: fn.base_acceleration(q, qd, qdd[6:]),
        "inverse_dynamics_derivatives": lambda: fn.inverse_dynamics_derivatives(q, qd, qdd),
        "direct_dynamics_derivatives": lambda: fn.direct_dynamics_derivatives(q, qd, tau),
        "pose": lambda: fn.pose(frame, q),
        "jacobian": lambda: fn.jacobian(frame, q),
        "center_of_mass": lambda: fn.center_of_mass(q),
        "center_of_mass_jacobian": lambda: fn.center_of_mass_jacobian(q),
        "centroidal_momentum_matrix": lambda: fn.centroidal_momentum_matrix(q),
        "center_of_mass_velocity": lambda: fn.center_of_mass_velocity(q, qd),
        "centroidal_momentum": lambda: fn.centroidal_momentum(q, qd),
        "total_mass": lambda: fn.total_mass(),
        "configuration_derivative": lambda: fn.configuration_derivative(q, qd),
        "rhs": lambda: fn.rhs(0.0, np.concatenate([q, qd]), tau),
        "state_space": lambda: fn.state_space,
    }
    return calls[name]()


def test_every_method_answers_in_its_shape_or_says_why_not(case):
    robot, fn, space, (q, qd, qdd, tau) = case
    nq, nv, ntau = space.nq, space.nv, space.ntau
    shapes = {
        "inverse_dynamics": (nv,), "mass_matrix": (nv, nv), "h": (nv,), "gravity": (nv,), "coriolis_matrix": (nv, nv),
        "direct_dynamics": (nv,), "base_acceleration": ((6,), (ntau,)), "inverse_dynamics_derivatives": ((nv, nv),) * 2,
        "direct_dynamics_derivatives": ((nv, nv), (nv, nv), (nv, ntau)), "pose": (4, 4), "jacobian": (6, nv),
        "center_of_mass": (3,), "center_of_mass_jacobian": (3, nv), "centroidal_momentum_matrix": (6, nv),
        "center_of_mass_velocity": (3,), "centroidal_momentum": (6,), "total_mass": (), "configuration_derivative": (nq,),
        "rhs": (nq + nv,),
    }  # fmt: skip
    if robot == "planar2flex":  # the three-step inverse model: flexible accelerations, rigid and motor torques
        shapes["inverse_dynamics"] = ((2,), (0,), (2,))
    frame = fn.model.robot.frames[-1].label
    refused = set()
    for name in PROTOCOL:
        try:
            result = _call(fn, name, q, qd, qdd, tau, frame)
        except KaneRobotError as exc:
            assert str(exc) and fn.model.robot.name in str(exc), (name, str(exc))
            refused.add(name)
            continue
        if name == "state_space":
            assert (result.nq, result.nv, result.ntau) == (nq, nv, ntau)
        elif shapes[name] and isinstance(shapes[name][0], tuple):
            assert tuple(np.shape(r) for r in result) == shapes[name], name
        else:
            assert np.shape(result) == shapes[name], name
            assert np.all(np.isfinite(result)), name
    expected = {
        "planar2": {"base_acceleration"},
        "tree": {"base_acceleration"},
        "satellite": set(),
        "fourbar": {"base_acceleration", "inverse_dynamics_derivatives", "direct_dynamics_derivatives"},
        "diffdrive": {"base_acceleration", "inverse_dynamics_derivatives", "direct_dynamics_derivatives"},
        "planar2flex": {"base_acceleration", "inverse_dynamics_derivatives", "direct_dynamics_derivatives", "center_of_mass",
                        "center_of_mass_jacobian", "centroidal_momentum_matrix", "center_of_mass_velocity",
                        "centroidal_momentum", "total_mass"},
    }  # fmt: skip
    assert refused == expected[robot]


def test_out_and_wrench_everywhere_or_refused_with_a_reason(case):
    robot, fn, space, (q, qd, qdd, tau) = case
    out = np.empty(space.nv)
    assert fn.direct_dynamics(q, qd, tau, out=out) is out
    assert fn.h(q, qd, wrench=None, out=out) is out
    if robot == "planar2flex":
        with pytest.raises(KaneRobotError, match="no wrench="):
            fn.h(q, qd, wrench={"2": np.ones(6)})
        with pytest.raises(KaneRobotError, match="several arrays"):
            fn.inverse_dynamics(q, qd, qdd, out=out)
