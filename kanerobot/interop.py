"""Bridges to other robotics libraries (optional dependencies).

:func:`to_pinocchio` builds a pinocchio model (the ``pin`` package) of a
robot whose parameters are bound to numbers, so that benchmarks and tests
can hold kanerobot's models against pinocchio's algorithms on the same robot.
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError, ParameterError


def _numeric(matrix, values, what):
    bound = sympy.Matrix(matrix).xreplace(values)
    free = sorted({str(s) for s in bound.free_symbols})
    if free:
        raise ParameterError(f"no value for {', '.join(free)} (needed by {what})")
    return np.array(bound.evalf(), dtype=float)


def inertia_about_com(dynamics, values):
    """(mass, centre of mass, inertia about the centre of mass) of one link.

    SYMORO's parameters are the inertia about the frame origin J_O and the
    first moments MS = m c, so ``I_G = J_O - m (c.c I - c c^T)``.
    """
    get = lambda name: float(sympy.sympify(dynamics[name]).xreplace(values))  # noqa: E731
    mass = get("M")
    if mass <= 0:
        raise KaneRobotError(f"a link has mass {mass}: pinocchio needs positive masses")
    c = np.array([get("MX"), get("MY"), get("MZ")]) / mass
    J = np.array(
        [
            [get("XX"), get("XY"), get("XZ")],
            [get("XY"), get("YY"), get("YZ")],
            [get("XZ"), get("YZ"), get("ZZ")],
        ]
    )
    return mass, c, J - mass * (c @ c * np.eye(3) - np.outer(c, c))


#: pinocchio's joint model of each of ours, from its axis (a planar joint's configuration is (x, y, cos, sin) there).
_PINOCCHIO_JOINTS = {
    "revolute": lambda pin, axis: pin.JointModelRevoluteUnaligned(*axis),
    "prismatic": lambda pin, axis: pin.JointModelPrismaticUnaligned(*axis),
    "spherical": lambda pin, axis: pin.JointModelSpherical(),
    "planar": lambda pin, axis: pin.JointModelPlanar(),
    "free-flyer": lambda pin, axis: pin.JointModelFreeFlyer(),
}


def to_pinocchio(robot, values):
    """A ``pinocchio.Model`` of ``robot`` with the parameters in ``values``.

    Joints follow ``robot.joint_labels``, so pinocchio's q, v, a and tau line
    up with kanerobot's.  A floating robot's link 0 hangs from a free-flyer
    joint, first: pinocchio's (x, y, z, quaternion x y z w) and base speeds
    in frame 0 are kanerobot's (:mod:`kanerobot.dynamics.floating`).  Fixed
    frames are folded into the placement of their successors.  Rotor
    inertia, friction and external wrenches are not represented: compare
    with IA = FV = FS = 0 and no wrench.

    Mimic joints (``robot.mimics``) become pinocchio's ``JointModelMimic``
    (``transformJointIntoMimic``): the model's q and v then hold the
    independent joints only, as kanerobot's mimic model's speeds do
    (:mod:`kanerobot.dynamics.mimic`); a coupling pinocchio cannot hold (a
    mimic joint before its leader in the tree, several leaders) is refused
    in one line: ``to_pinocchio(mimic_tree(robot), values)``
    (:func:`~kanerobot.dynamics.mimic.mimic_tree`) gives the free tree.

    Raises
    ------
    KaneRobotError
        If the robot has loops, a wheeled base or rolling discs, ``pin`` is
        not installed, or a mimic joint pinocchio cannot hold.
    """
    if robot.loops or robot.wheeled or robot.discs:  # the robot first: installing pinocchio would not help
        raise KaneRobotError("to_pinocchio handles serial and tree robots, with a fixed or floating base (no loops, wheels "
                             "or rolling discs: pinocchio's model is the tree's)")  # fmt: skip
    try:
        import pinocchio as pin
    except ImportError:
        raise KaneRobotError("pinocchio is not installed: pip install 'kanerobot[bench]' (the pin package)") from None
    symbols = {sympy.Symbol(str(k)): v for k, v in values.items()}
    zero_q = {q: 0 for q in robot.joint_symbols}
    model = pin.Model()
    model.gravity.linear = _numeric(robot.base.G, symbols, "gravity").ravel()
    joint_id = {"0": 0}
    if robot.floating:
        joint_id["0"] = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
        model.appendBodyToJoint(joint_id["0"], pin.Inertia(*inertia_about_com(robot.dynamics["0"], symbols)), pin.SE3.Identity())
    placement_to_joint = {"0": np.eye(4)}  # frame label -> (parent joint frame) T (this frame at q = 0)
    for frame in robot.frames:
        parent = frame.antecedent
        T = placement_to_joint[parent] @ _numeric(frame.transform().xreplace(zero_q), symbols, f"frame {frame.label}")
        if not frame.is_joint:
            joint_id[frame.label] = joint_id[parent]
            placement_to_joint[frame.label] = T
            if frame.label in robot.dynamics:  # a link rigidly fixed to its antecedent
                mass, c, I_G = inertia_about_com(robot.dynamics[frame.label], symbols)
                model.appendBodyToJoint(joint_id[parent], pin.Inertia(mass, c, I_G), pin.SE3(T[:3, :3], T[:3, 3]))
            continue
        axis = _numeric(frame.axis, symbols, f"axis of {frame.label}").ravel()
        joint = _PINOCCHIO_JOINTS[frame.joint.name](pin, axis)
        placement = pin.SE3(T[:3, :3], T[:3, 3])
        joint_id[frame.label] = model.addJoint(joint_id[parent], joint, placement, f"joint{frame.label}")
        placement_to_joint[frame.label] = np.eye(4)
        if frame.label in robot.dynamics:
            mass, c, I_G = inertia_about_com(robot.dynamics[frame.label], symbols)
            model.appendBodyToJoint(joint_id[frame.label], pin.Inertia(mass, c, I_G), pin.SE3.Identity())
    return _with_mimics(pin, model, robot, joint_id, symbols)


def _with_mimics(pin, model, robot, joint_id, symbols):
    """``model`` with each mimic joint of ``robot`` made pinocchio's mimic of its leader (``q_m = k q_l + o``)."""
    for item in robot.mimics:
        where = f"to_pinocchio of {robot.name}: mimic joint {item.joint}"
        if len(item.terms) > 1:
            raise KaneRobotError(
                f"{where} follows {len(item.terms)} joints ({', '.join(item.leaders)}): pinocchio's mimic joint has one "
                f"leader; give to_pinocchio(mimic_tree(robot), values) for the free tree"
            )
        if joint_id[item.leader] > joint_id[item.joint]:
            raise KaneRobotError(
                f"{where} comes before its leader {item.leader} in the tree: pinocchio's mimic joint follows its "
                f"leader; give to_pinocchio(mimic_tree(robot), values) for the free tree"
            )
        k, o = _numeric([item.multiplier, item.offset], symbols, f"mimic joint {item.joint}").ravel()
        model = pin.transformJointIntoMimic(model, joint_id[item.leader], joint_id[item.joint], float(k), float(o))
    return model
