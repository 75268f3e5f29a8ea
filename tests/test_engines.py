"""The three engines give the same models: Kane = Newton-Euler = Lagrange.

For every serial and tree robot of frames/ (the other structures have their
own modules, which hold their engines equal too),
each engine's inverse dynamics, inertia matrix, Coriolis matrix, gravity
torques, H and direct dynamics are evaluated through kr.derive(...).numeric
on random states with random physically consistent parameters, and compared
with Newton-Euler to 1e-9 relative.
"""

import numpy as np
import pytest
from conftest import assert_models_close, derived, library

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters


def _is_tree(robot):
    flexible = any(robot.joint_parameters[label]["eta"] == 1 for label in robot.joint_labels)
    return not (robot.loops or robot.floating or robot.wheeled or flexible)


# Closed loops: tests/test_closed_loop.py; flexible joints: test_flexible.py;
# floating base: test_floating.py.
ROBOTS = [name for name in kr.robot_names() if _is_tree(library(name))]
METHODS = ["lagrange", "kane"]


def test_every_supported_library_robot_is_covered():
    assert {"rx90", "stanford", "puma560", "planar2", "krang"} <= set(ROBOTS)


# Lagrange on Krang (10 s of derivation) and both other engines on the 7-joint arm7 (3 s each) run with
# -m slow; Kane on Krang, both on the 6-joint arms, and Lagrange on trees in tests/test_lagrange.py and
# test_floating.py, run by default.
SLOW = {("krang", "lagrange"), ("arm7", "lagrange"), ("arm7", "kane")}
CASES = [pytest.param(n, m, marks=pytest.mark.slow) if (n, m) in SLOW else (n, m) for n in ROBOTS for m in METHODS]


@pytest.mark.parametrize("name, method", CASES)
@pytest.mark.long
def test_engine_agrees_with_newton_euler(name, method):
    robot = library(name)
    rng = np.random.default_rng(ROBOTS.index(name) * 7 + METHODS.index(method))
    values = random_parameters(robot, rng)
    reference = derived(name, "newton-euler").numeric(values)
    engine = derived(name, method).numeric(values, backend="numpy")
    n = robot.nj
    q, qd, qdd = rng.uniform(-np.pi, np.pi, (4, n)), rng.uniform(-2, 2, (4, n)), rng.uniform(-3, 3, (4, n))
    assert_models_close(engine, reference, q, qd, qdd, what=f"{name} {method}")


def test_every_engine_module_names_its_models_alike():
    """One name per model across engines: each engine module has a function per
    model of kanerobot.dynamics.model.MODELS it builds, under that name; the
    historical names are the same functions, and Newton-Euler's ``h`` is the
    program derive gives."""
    from kanerobot.dynamics import floating, kane, lagrange, newton_euler
    from kanerobot.dynamics.model import MODELS

    for module in (newton_euler, kane, lagrange, floating):
        for name in ("inverse_dynamics", "h", "gravity"):
            assert name in MODELS and callable(getattr(module, name)), (module.__name__, name)
            assert name in module.__all__, (module.__name__, name)
    assert newton_euler.h is newton_euler.coriolis_gravity and newton_euler.gravity is newton_euler.gravity_torques
    assert kane.h is kane.coriolis_gravity and kane.gravity is kane.gravity_torques
    assert floating.h is floating.nonlinear_effects and floating.gravity is floating.gravity_forces
    robot = library("planar2")
    assert newton_euler.h(robot).outputs == derived("planar2").program("h").outputs
