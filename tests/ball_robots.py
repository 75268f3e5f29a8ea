"""Test robots with joints of several speeds (spherical, planar), shared by the engine tests.

``ball_tree`` is a tree with a revolute, a spherical (quaternion, three
speeds), a planar (x, y, theta, three speeds) and a second revolute branch,
on a fixed or a free-flying base.  ``random_state`` draws a configuration
from each joint's own model (unit quaternions), ``pinocchio_q`` turns it
into pinocchio's (a planar joint holds cos and sin of theta there), and
``evaluate`` runs a program at one state with numpy.
"""

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.robot import joints
from kanerobot.robot.description import GeneralPlacement
from kanerobot.symbolic.printing import matrix_entry_names

ROTATION = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]

#: Parameters pinocchio has no counterpart for: rotor inertia, friction, external wrenches.
UNMATCHED = ("IA", "FV", "FS", "FX", "FY", "FZ", "CX", "CY", "CZ")


def ball_tree(floating=False, name=None):
    """Revolute 1 - spherical 2 - planar 3, and revolute 4 on link 1 (nq 9, nv 8; +7/+6 floating)."""
    frames = [
        kr.Frame("1", "0", 0, 1, GeneralPlacement(R0=ROTATION, P=[0, 0, "L0"], axis=[0, 1, 0], q="q1")),
        kr.Frame("2", "1", joints.Spherical(), 1, GeneralPlacement(R0=ROTATION, P=["L1", 0, 0], axis=[0, 0, 1])),
        kr.Frame("3", "2", joints.Planar(), 1, GeneralPlacement(R0=[[1, 0, 0], [0, 0, -1], [0, 1, 0]], P=["L2", 0, "L3"], axis=[0, 0, 1])),
        kr.Frame("4", "1", 1, 1, GeneralPlacement(R0=[[1, 0, 0], [0, 1, 0], [0, 0, 1]], P=[0, "L4", 0], axis=[1, 0, 0], q="q4")),
    ]
    name = name or ("floating_ball_and_plane" if floating else "ball_and_plane")
    return kr.Robot.create(name, frames, floating=floating)


def random_values(robot, seed):
    """Random physically consistent parameters, zero where pinocchio has no counterpart."""
    values = random_parameters(robot, np.random.default_rng(seed))
    values.update({name: 0.0 for name in values if name[:2] in UNMATCHED})
    return values


def joint_models(robot):
    """The joint models in the order of ``robot.q``: the root joint's first on a floating base."""
    models = [frame.joint for frame in robot.frames if frame.is_joint]
    if robot.floating:
        models.insert(0, joints.FreeFlyer())
    return models


def state_symbols(robot):
    """Names of (q, qd, qdd) in the order of the numeric models: a floating base's first (X0 .. QW0, VX0 .. WZ0)."""
    names = ([], [], [])
    if robot.floating:
        base = joints.FreeFlyer()
        names = (list(base.configuration_names("0")), list(base.speed_names("0")), list(base.acceleration_names("0")))
    return tuple(head + [str(s) for s in tail] for head, tail in zip(names, (robot.q, robot.qd, robot.qdd)))


def random_state(robot, rng):
    """Random (q, qd, qdd) over the root and the joints: each configuration from its joint's model (unit quaternions)."""
    q = np.concatenate([model.random_configuration(rng) for model in joint_models(robot)])
    names = state_symbols(robot)
    assert len(q) == len(names[0]) and len(names[1]) == robot.dof
    return q, rng.normal(size=robot.dof), rng.normal(size=robot.dof)


def pinocchio_q(robot, q):
    """pinocchio's configuration: a planar joint's theta becomes (cos, sin)."""
    out, k = [], 0
    for model in joint_models(robot):
        part = q[k:k + model.nq]
        out.append(np.array([part[0], part[1], np.cos(part[2]), np.sin(part[2])]) if model.name == "planar" else part)
        k += model.nq
    return np.concatenate(out)


def evaluate(program, values, robot, q, qd=(), qdd=(), extra=None):
    """The program's outputs at one state (numpy), in ``program.outputs`` order; ``extra`` adds inputs (e.g. GAM1)."""
    point = dict(values, **(extra or {}))
    for symbols, numbers in zip(state_symbols(robot), (q, qd, qdd)):
        point.update(zip(symbols, numbers))
    f = program.to_function()
    return np.asarray(f(*[point[str(a)] for a in f.args]), dtype=float)


def symmetric_matrix(program, outputs, n, stem="A"):
    """The (n, n) symmetric matrix from a program's upper-triangle outputs."""
    names = matrix_entry_names(stem, (n, n))
    where = {names[r][c]: (r, c) for r in range(n) for c in range(n)}
    M = np.zeros((n, n))
    for name, value in zip(program.outputs, outputs):
        r, c = where[name]
        M[r, c] = M[c, r] = value
    return M
