"""The joint models (kanerobot.robot.joints): sizes, transforms, motion subspaces, integration.

Independent paths: finite differences of the transforms and of
``integrate`` (the motion subspace is the twist a unit speed gives, in the
joint's own frame), the round trip ``integrate(q, difference(q, q1)) == q1``,
and pinocchio's ``JointModelRevoluteUnaligned``, ``JointModelPrismaticUnaligned``,
``JointModelSpherical``, ``JointModelPlanar`` and ``JointModelFreeFlyer``
(placement ``M(q)``, motion subspace, ``integrate`` and ``difference``) when
`pin` is installed.
"""

import numpy as np
import pytest
import sympy

from kanerobot.robot import joints
from kanerobot.robot.joints import JOINT_MODELS

AXIS = np.array([0.36, -0.48, 0.8])  # unit
MODELS = [name for name in JOINT_MODELS if name != "fixed"]


def numeric_transform(model, q):
    """``M(q)`` of ``model`` (identity placement) evaluated at ``q``, 4x4."""
    symbols = sympy.symbols(f"c0:{model.nq}")
    T = model.placed(sympy.eye(3), sympy.zeros(3, 1), sympy.Matrix(AXIS), symbols)
    return np.array(T.subs(dict(zip(symbols, q))), dtype=float)


def twist(T0, T1, dt):
    """The body twist ``[v; w]`` (frame of T0) taking T0 to T1 in dt, to first order."""
    dT = np.linalg.inv(T0) @ (T1 - T0) / dt
    return np.concatenate([dT[:3, 3], [dT[2, 1], dT[0, 2], dT[1, 0]]])


@pytest.mark.parametrize("name", MODELS)
def test_motion_subspace_is_the_twist_of_a_unit_speed(name):
    """``M(q)^-1 dM/dt`` for ``qd = S v``, by central differences along ``integrate``, equals ``S v``."""
    model = joints.joint_model(name)
    rng = np.random.default_rng(MODELS.index(name))
    q = model.random_configuration(rng)
    S = np.array(model.motion_subspace(sympy.Matrix(AXIS)), dtype=float)
    assert S.shape == (6, model.nv)
    for k in range(model.nv):
        v = np.eye(model.nv)[k]
        h = 1e-6
        T_plus, T_minus = numeric_transform(model, model.integrate(q, v, h)), numeric_transform(model, model.integrate(q, v, -h))
        T = numeric_transform(model, q)
        np.testing.assert_allclose(twist(T, T_plus, 1.0) / (2 * h) - twist(T, T_minus, 1.0) / (2 * h), S[:, k], atol=1e-7)


@pytest.mark.parametrize("name", MODELS)
def test_integrate_difference_and_derivative_agree(name):
    model = joints.joint_model(name)
    rng = np.random.default_rng(10 + MODELS.index(name))
    q0 = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    q1 = model.integrate(q0, v, 0.7)
    np.testing.assert_allclose(model.difference(q0, q1), 0.7 * v, atol=1e-12)
    np.testing.assert_allclose(numeric_transform(model, model.integrate(q0, model.difference(q0, q1))), numeric_transform(model, q1), atol=1e-12)
    h = 1e-6
    derivative = (model.integrate(q0, v, h) - model.integrate(q0, v, -h)) / (2 * h)
    np.testing.assert_allclose(model.configuration_derivative(q0, v), derivative, atol=1e-8)
    assert model.integrate(np.stack([q0, q0]), np.stack([v, 2 * v]), np.array([0.7, 0.35])).shape == (2, model.nq)


def test_registry_and_codes():
    """SYMORO's codes give the three types of its files; an unknown code or name is refused with the choices."""
    assert [joints.from_sigma(code).name for code in (0, 1, 2)] == ["revolute", "prismatic", "fixed"]
    assert {name: (m.nq, m.nv) for name, m in JOINT_MODELS.items()} == {
        "revolute": (1, 1), "prismatic": (1, 1), "fixed": (0, 0), "free-flyer": (7, 6), "spherical": (4, 3), "planar": (3, 3)
    }
    with pytest.raises(ValueError, match="use 0 \\(revolute\\), 1 \\(prismatic\\) or 2 \\(fixed\\)"):
        joints.from_sigma(7)
    with pytest.raises(ValueError, match="unknown joint type 'ball': use revolute, prismatic, fixed, free-flyer, spherical, planar"):
        joints.joint_model("ball")
    assert joints.Spherical() == joints.Spherical() and joints.Spherical() != joints.Planar()


# ------------------------------------------------------------------ pinocchio
def pinocchio_joint(pin, name):
    axis = AXIS
    return {
        "revolute": lambda: pin.JointModelRevoluteUnaligned(*axis),
        "prismatic": lambda: pin.JointModelPrismaticUnaligned(*axis),
        "spherical": pin.JointModelSpherical,
        "planar": pin.JointModelPlanar,
        "free-flyer": pin.JointModelFreeFlyer,
    }[name]()


def to_pinocchio(name, q):
    """Our configuration in pinocchio's: the planar joint's theta as (cos, sin)."""
    return np.array([q[0], q[1], np.cos(q[2]), np.sin(q[2])]) if name == "planar" else np.asarray(q)


@pytest.mark.parametrize("name", MODELS)
def test_against_pinocchio(name):
    pin = pytest.importorskip("pinocchio", reason="pip install -e '.[bench]' (pinocchio) to compare with pinocchio's joint models")
    model = joints.joint_model(name)
    pmodel = pin.Model()
    pmodel.addJoint(0, pinocchio_joint(pin, name), pin.SE3.Identity(), "j")
    data = pmodel.createData()
    rng = np.random.default_rng(20 + MODELS.index(name))
    S = np.array(model.motion_subspace(sympy.Matrix(AXIS)), dtype=float)
    for _ in range(3):
        q, v = model.random_configuration(rng), rng.normal(size=model.nv)
        pq = to_pinocchio(name, q)
        pin.forwardKinematics(pmodel, data, pq, v)
        np.testing.assert_allclose(numeric_transform(model, q), data.oMi[1].homogeneous, atol=1e-12)
        np.testing.assert_allclose(S @ v, data.v[1].vector, atol=1e-12)  # the joint's twist in its own frame
        q1 = model.integrate(q, v, 1.0)
        np.testing.assert_allclose(to_pinocchio(name, q1), pin.integrate(pmodel, pq, v), atol=1e-12)
        np.testing.assert_allclose(model.difference(q, q1), pin.difference(pmodel, pq, to_pinocchio(name, q1)), atol=1e-10)
