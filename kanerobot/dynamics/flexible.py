"""Robots with flexible joints: OpenSYMORO's three-step recursion, Kane's
method on rotor coordinates, and Spong's motor-side model.

A joint j with ``eta_j = 1`` is elastic (OpenSYMORO section IV-C): a spring
of stiffness ``k_j`` between its motor and its link gives the link the
elastic torque (a force for a prismatic joint)::

    Gamma_fj = -k_j (q_j - q_rj)                                              (13)

``q_j`` is the link-side joint variable (``th2``), ``q_rj`` the motor-side
position reduced to the joint, named ``qr<label>`` (``qr2``; velocity
``QPr2``, acceleration ``QDPr2``).  For a flexible joint, ``GAM_j`` is the
motor torque and ``IA_j``, ``FV_j``, ``FS_j`` are the motor's (rotor inertia
and friction, on ``qd_rj``); the link side has no rotor inertia and no
friction.

Three models of the motors (the ``rotor`` argument):

``rotor=None``
    OpenSYMORO's model of the links (eqs 12-15), the motor positions
    ``q_r`` being inputs.
``rotor="spong"``
    Spong's reduced model (Spong 1987), the default of :func:`derive`: the
    link equations and a decoupled motor equation per flexible joint.
``rotor="full"``
    The rotor is a body carried by the antecedent link, with the
    gyroscopic coupling Spong's model neglects.

Both engines give every model: Newton-Euler (:func:`inverse_dynamics`,
:func:`direct_dynamics`) by the three-step recursion of OpenSYMORO eqs
16-29 on the tree of links and rotors, Kane (:class:`FlexibleModel` with
``method="kane"``) on the rigid tree of :func:`augmented_robot`, in which
each flexible joint j gets a rotor frame ``r<label>``.

State and conventions
---------------------
``z = (q, q_r)``: the n joint variables in ``robot.joint_labels`` order, then
the nf motor positions in the order of the flexible joints
(:func:`flexible_joints`); ``zd``, ``zdd`` likewise (n + nf each).  ``tau``
has n entries in joint order: ``GAM_j``, the joint torque of a rigid joint and
the motor torque of a flexible one.  The equations of motion are::

    A(z) zdd + H(z, zd) = B tau + S Gamma_f(z)

``B`` puts the rigid joints' torques on their rows and the motor torques on
the motor rows; ``S`` has ``+1`` on the row of ``q_j`` and ``-1`` on the row
of ``q_rj`` of each flexible joint.

The derivation (the three models of the motors, the mapping of a flexible
joint to the tree for each, the three-step recursion with its equations
16-29) is in ``docs/theory/flexible.md``.

Examples
--------
>>> import numpy as np
>>> import kanerobot as kr
>>> from kanerobot.dynamics import flexible
>>> model = flexible.derive(kr.load(kr.frames_path("flexarm1")))
>>> model.coordinates
['th1', 'qr1']
>>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
>>> fn = model.numeric(values, backend="numpy")
>>> fn.direct_dynamics([0.0, 0.1], [0.0, 0.0], [10.0]).round(6)   # K1 * 0.1 / ZZ1, (10 - K1 * 0.1) / IA1
array([20.,  0.])
"""

import collections
from collections.abc import Callable

import numpy as np
import sympy

from kanerobot.dynamics import composite, coriolis, lagrange, newton_euler
from kanerobot.dynamics.common import (
    check_structure,
    link_parameter,
    program_inputs,
)
from kanerobot.dynamics.direct import articulated_bodies
from kanerobot.dynamics.dynamic_model import (
    METHODS,
    STRUCTURE_MODELS,
    NumericProtocol,
    ProgramCache,
    argument_groups,
    as_states,
    bound_numeric,
    bound_values,
    matrix_grid,
    parameters_without_state,
    select_backend,
    solve_dynamics,
)
from kanerobot.dynamics.dynamic_model import MODELS as BASE_MODELS
from kanerobot.dynamics.kinematic_programs import FrameKinematics
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.description import (
    DYNAMIC_NAMES,
    INERTIAL_NAMES,
    Frame,
    GeneralPlacement,
    KKPlacement,
    Robot,
)
from kanerobot.robot.joints import Revolute
from kanerobot.state_space import StateSpace
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

__all__ = [
    "FlexibleInverse",
    "FlexibleModel",
    "NumericFlexible",
    "ROTORS",
    "augmented_robot",
    "check_flexible",
    "derive",
    "direct_dynamics",
    "flexible_joints",
    "inverse_dynamics",
    "motor_symbols",
]

#: Models of the motors: Spong's reduced model, and the rotor as a body on the antecedent.
ROTORS = ("spong", "full")
#: Models a :class:`FlexibleModel` offers, with what they compute (over z = (q, q_r)): every model of a
#: rigid robot, and the springs' torques.
MODELS = {**BASE_MODELS, "elastic_torques": STRUCTURE_MODELS["elastic_torques"]}
#: Models the Kane and Lagrange engines solve from A and H instead of a program.
SOLVED = {"kane": {"inverse_dynamics", "direct_dynamics"}, "lagrange": {"inverse_dynamics", "direct_dynamics"}}


# ---------------------------------------------------------------------------
# Flexible joints, their symbols, the tree of links and rotors
# ---------------------------------------------------------------------------


def flexible_joints(robot):
    """Labels of the joints with ``eta = 1``, in joint order.

    Examples
    --------
    >>> import kanerobot as kr
    >>> flexible_joints(kr.load(kr.frames_path("planar2flex"))), flexible_joints(kr.load(kr.frames_path("planar2")))
    (('1', '2'), ())
    """
    return robot.flexible_joints


def motor_symbols(robot):
    """The motor-side symbols of each flexible joint.

    Returns
    -------
    dict
        ``label -> (qr, QPr, QDPr)``: ``Symbol("qr<label>")``, the motor
        position reduced to the joint (``q_rj`` of eq. 13), its velocity and
        its acceleration.

    Examples
    --------
    >>> import kanerobot as kr
    >>> motor_symbols(kr.load(kr.frames_path("flexarm1")))
    {'1': (qr1, QPr1, QDPr1)}
    """
    stem = robot.stems
    return {
        label: tuple(sympy.Symbol(f"{prefix}{stem[label]}") for prefix in ("qr", "QPr", "QDPr"))
        for label in flexible_joints(robot)
    }


def _robot_symbol_names(robot):
    exprs = [v for table in (robot.dynamics, robot.joint_parameters) for d in table.values() for v in d.values()]
    exprs += [v for key in ("Z", "W0", "WP0", "V0", "VP0", "G") for v in getattr(robot.base, key)]
    names = set(robot.geometric_parameters) | {str(s) for s in robot.joint_symbols}
    for expr in exprs:
        names |= {str(s) for s in sympy.sympify(expr).free_symbols}
    return names


def check_flexible(robot, what="the flexible-joint model", rotor="spong"):
    """Raise unless ``robot``'s flexible joints can be modelled.

    Checks the structure (serial or tree, base fixed or of known motion:
    :func:`~kanerobot.dynamics.common.check_structure`), that every flexible
    joint's stiffness ``k`` is a positive number or an expression of
    symbols, that a numeric rotor inertia ``IA`` is positive (with a
    ``rotor`` model: the motor equation divides by it), and that the names
    this module adds (``qr<j>``, ``QPr<j>``, ``QDPr<j>``, frames ``r<j>``)
    are free.

    Raises
    ------
    KaneRobotError
        Naming the joint and what to change.

    Examples
    --------
    >>> import dataclasses, kanerobot as kr
    >>> arm = kr.load(kr.frames_path("flexarm1"))
    >>> check_flexible(arm)
    >>> joints = {"1": dict(arm.joint_parameters["1"], k=-5)}
    >>> check_flexible(dataclasses.replace(arm, joint_parameters=joints))
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: the flexible-joint model of flexarm1: joint 1 is flexible (eta = 1) but its stiffness k is -5: give k a positive value (k -> infinity is the rigid joint, eta = 0)
    """
    check_structure(robot, what)
    names = _robot_symbol_names(robot)
    labels = set(robot.labels)
    for label in flexible_joints(robot):
        where = f"{what} of {robot.name}: joint {label} is flexible (eta = 1)"
        k = sympy.sympify(robot.joint_parameters[label]["k"])
        if k.is_number and not (k.is_real and k > 0):
            raise KaneRobotError(
                f"{where} but its stiffness k is {k}: give k a positive value (k -> infinity is the rigid joint, eta = 0)"
            )
        IA = sympy.sympify(link_parameter(robot, label, "IA"))
        if rotor is not None and IA.is_number and not (IA.is_real and IA > 0):
            raise KaneRobotError(
                f"{where} but its rotor inertia IA{label} is {IA}: the motor side IA qdd_r + k (q_r - q) = GAM needs IA > 0"
            )
        taken = sorted({s.name for s in motor_symbols(robot)[label]} & names)
        if taken:
            raise KaneRobotError(f"{where}: its motor symbols {', '.join(taken)} are already used by the robot; rename them")
        if f"r{label}" in labels:
            raise KaneRobotError(f"{where}: its rotor frame r{label} clashes with a frame of the robot; rename that frame")


def _rotor_placement(frame, qr):
    """Frame ``frame``'s placement with its joint symbol replaced by ``qr``."""
    p = frame.placement
    mapping = {frame.q: qr}
    if isinstance(p, KKPlacement):
        return KKPlacement(*(sympy.sympify(getattr(p, key)).xreplace(mapping) for key in KKPlacement.KEYS))
    return GeneralPlacement(p.R0, p.P, p.axis, sympy.sympify(p.q).xreplace(mapping))


def _link_side(robot):
    """``(frames, links, dynamics, joints)`` of ``robot`` with every joint
    rigid, the flexible joints' ``IA``, ``FV``, ``FS`` set to 0 and their
    torque ``GAM`` to 0 (the tree joint is not actuated)."""
    flexible = set(flexible_joints(robot))
    dynamics = {label: dict(robot.dynamics[label]) for label in robot.links}
    for label in flexible & set(dynamics):
        dynamics[label].update(IA=0, FV=0, FS=0)
    joints = {label: dict(robot.joint_parameters[label], eta=0) for label in robot.joint_labels}
    for label in flexible:
        joints[label]["GAM"] = 0
    return list(robot.frames), list(robot.links), dynamics, joints


def augmented_robot(robot, rotor="spong"):
    """The rigid tree of links and rotors that models ``robot``'s flexible joints.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, base fixed or of known motion.
    rotor : {"spong", "full"} or None
        How each flexible joint j's rotor is described (see the table in
        docs/theory/flexible.md): ``"spong"``, a massless frame ``r<j>`` whose joint has the
        rotor inertia ``IA_j`` (Spong's reduced model); ``"full"``, a rotor
        body of inertia ``IA_j`` about the joint axis; ``None``, no rotor
        (the link side only, OpenSYMORO's eqs 12-15).

    Returns
    -------
    Robot
        Named ``<name>_<rotor>``, every joint rigid (``eta = 0``).  Frames:
        the robot's, then one rotor frame ``r<j>`` per flexible joint j, on
        a(j), placed as frame j with ``qr<j>`` for the joint variable, with
        ``QP = QPr<j>``, ``QDP = QDPr<j>``, ``GAM = GAM_j`` (the motor
        torque) and the motor friction ``FV_j``, ``FS_j``.  Flexible joint j
        keeps its link, without ``IA``, friction or torque (``GAM = 0``: the
        spring torque is added as a generalized force, see
        docs/theory/flexible.md).
        Its joint order is ``z = (q, q_r)``.

    Raises
    ------
    KaneRobotError
        As :func:`check_flexible`; for an unknown ``rotor``.

    Examples
    --------
    >>> import kanerobot as kr
    >>> tree = augmented_robot(kr.load(kr.frames_path("planar2flex")))
    >>> tree.joint_labels, list(tree.q.T), tree.structure
    (('1', '2', 'r1', 'r2'), [th1, th2, qr1, qr2], 'tree')
    >>> [tree.dynamics["r2"][name] for name in ("ZZ", "M", "IA", "FV")], tree.joint_parameters["r2"]["GAM"]
    ([0, 0, IA2, FV2], GAM2)
    >>> full = augmented_robot(kr.load(kr.frames_path("planar2flex")), rotor="full")
    >>> [full.dynamics["r2"][name] for name in ("ZZ", "M", "IA", "FV")]
    [IA2, 0, 0, FV2]
    """
    if rotor not in ROTORS + (None,):
        raise KaneRobotError(f"unknown rotor model {rotor!r}: use 'spong' (Spong's reduced model), 'full' (rotor bodies) or None")
    check_flexible(robot, "the tree of links and rotors", rotor)
    frames, links, dynamics, joints = _link_side(robot)
    if rotor is not None:
        for label, (qr, QPr, QDPr) in motor_symbols(robot).items():
            frame = robot.frame(label)
            r = f"r{label}"
            frames.append(Frame(r, frame.antecedent, frame.joint, 1, _rotor_placement(frame, qr), "r" + frame.stem))
            links.append(r)
            IA = link_parameter(robot, label, "IA")
            values = dict.fromkeys(INERTIAL_NAMES, 0)
            if rotor == "spong":
                values["IA"] = IA
            elif isinstance(frame.joint, Revolute):
                e = sympy.Matrix(frame.axis)
                J = IA * e * e.T
                values.update(XX=J[0, 0], XY=J[0, 1], XZ=J[0, 2], YY=J[1, 1], YZ=J[1, 2], ZZ=J[2, 2])
            else:
                values["M"] = IA
            values.update(FV=link_parameter(robot, label, "FV"), FS=link_parameter(robot, label, "FS"))
            dynamics[r] = values
            joints[r] = {"QP": QPr, "QDP": QDPr, "GAM": robot.joint_parameters[label]["GAM"], "eta": 0, "k": 0}
    name = f"{robot.name}_{rotor or 'links'}"
    return Robot.create(name, frames, links=links, dynamics=dynamics, joint_parameters=joints, base=robot.base)


# ---------------------------------------------------------------------------
# Newton-Euler: the three-step recursion
# ---------------------------------------------------------------------------


def _elastic_torques(program, robot):
    """``GAMF<j> = -k_j (q_j - q_rj)`` (eq. 13) of every flexible joint, assigned."""
    stem = robot.stems
    out = {}
    for label, (qr, _, _) in motor_symbols(robot).items():
        k = robot.joint_parameters[label]["k"]
        out[label] = program.assign(f"GAMF{stem[label]}", k * (qr - robot.frame(label).q))
    return out


def _inputs(robot, tree, rotor, model):
    """Program inputs: z, zd, then the known accelerations (``model="inverse"``) or
    torques (``"direct"``), the parameters (sorted) and the stiffnesses last."""
    motors = motor_symbols(robot)
    rigid = [label for label in robot.joint_labels if label not in motors]
    z = [robot.frame(label).q for label in robot.joint_labels] + [m[0] for m in motors.values()]
    zd = list(robot.qd) + ([m[1] for m in motors.values()] if rotor else [])
    if model == "inverse":
        known = [robot.joint_parameters[label]["QDP"] for label in rigid] + ([m[2] for m in motors.values()] if rotor else [])
    elif model == "direct":
        torque = rigid + (list(motors) if rotor else [])
        known = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels if label in torque]
    else:
        known = []
    inputs = program_inputs(tree, [z, zd, known], DYNAMIC_NAMES, base=True)
    stiffness = set()
    for label in motors:
        stiffness |= sympy.sympify(robot.joint_parameters[label]["k"]).free_symbols
    return inputs + sorted(stiffness - set(inputs), key=str)


def inverse_dynamics(robot, *, rotor=None, trig=True):
    """Inverse dynamic model of a robot with flexible joints by OpenSYMORO's
    three-step recursion (eqs 13, 16-29): the flexible joints' accelerations
    and the rigid joints' torques.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, base fixed or of known motion; joints with
        ``eta = 1`` are flexible, of stiffness ``k``.
    rotor : {None, "spong", "full"}, optional
        ``None`` (default): the paper's model, links only; the motor
        positions ``qr<j>`` are inputs.  ``"spong"`` or ``"full"``: also the
        motor torques, from the motor velocities ``QPr<j>`` and accelerations
        ``QDPr<j>`` (see docs/theory/flexible.md for the two models).
    trig : bool, optional
        Apply the program's trigonometric rules (``C23``).

    Returns
    -------
    Program
        Pruned.  Outputs, in joint order: ``QDP<j>`` for a flexible joint
        (its link-side acceleration, eq. 27), ``GAM<j>`` for a rigid one
        (eq. 29); then, with a rotor model, ``GAM<j>`` of each flexible
        joint: its motor torque.  Inputs: the joint variables and the motor
        positions ``z = (q, q_r)``, ``QP`` (and ``QPr``), the rigid joints'
        ``QDP`` (and ``QDPr``), the geometric parameters, every link's
        dynamic parameters, the base motion and gravity, and the
        stiffnesses ``k``.  The elastic torques are named ``GAMF<j>``.

    Raises
    ------
    KaneRobotError
        As :func:`check_flexible`.

    Examples
    --------
    The one-link flexible arm of ``frames/flexarm1.par`` (gravity along x of
    frame 0): ``ZZ1 QDP1 + MX1 G1 sin(th1) = K1 (qr1 - th1)`` (with ``MY1 = 0``):

    >>> import kanerobot as kr
    >>> print(inverse_dynamics(kr.load(kr.frames_path("flexarm1"))))
    GAMF1 = K1*(qr1 - th1)
    C1 = cos(th1)
    S1 = sin(th1)
    JD1 = 1/ZZ1
    JU11 = -JD1*MY1
    JU21 = JD1*MX1
    VR11 = -C1*G1
    VR21 = G1*S1
    GU1 = JU11*VR11 + JU21*VR21
    QDP1 = GAMF1*JD1 - GU1

    (``H1 = ZZ1``: no rotor inertia on the link side; ``VR1`` is ``-G`` in
    frame 1.)

    With Spong's motor, ``GAM1 = IA1 QDPr1 + FV1 QPr1 + FS1 sign(QPr1) + K1 (qr1 - th1)``:

    >>> program = inverse_dynamics(kr.load(kr.frames_path("flexarm1")), rotor="spong")
    >>> list(program.outputs), program.outputs["GAM1"]
    (['QDP1', 'GAM1'], FS1*sign(QPr1) + FV1*QPr1 + GAMF1 + IA1*QDPr1)
    """
    stem = robot.stems
    what = "the flexible inverse dynamic model"
    check_flexible(robot, what, rotor)
    tree = augmented_robot(robot, rotor)
    program = Program(inputs=_inputs(robot, tree, rotor, "inverse"), trig=trig)
    Gamma_f = _elastic_torques(program, robot)
    flexible = set(Gamma_f)
    QDP = dict(zip(tree.joint_labels, tree.qdd))
    known_qdd = {j: QDP[j] for j in tree.joint_labels if j not in flexible}
    known_tau = dict(Gamma_f)
    bodies = articulated_bodies(program, tree, known_tau, known_qdd, what=what)
    qdd, Gamma = bodies.qdd, bodies.torque
    for j in robot.joint_labels:
        if j in flexible:
            program.set_output(f"QDP{stem[j]}", qdd[j])
        else:
            program.set_output(f"GAM{stem[j]}", Gamma[j])
    if rotor is not None:
        for j in Gamma_f:  # in joint order
            # The rotor's generalized force is GAM_j - Gamma_fj: the spring pulls it back.
            program.set_output(f"GAM{stem[j]}", Gamma[f"r{j}"] + Gamma_f[j])
    program.prune()
    return program


def direct_dynamics(robot, *, rotor=None, trig=True):
    """Direct dynamic model of a robot with flexible joints: every link
    acceleration (and every motor acceleration) from the torques, by the
    three-step recursion with every joint's torque known (OpenSYMORO eqs
    16-28; no inertia matrix is formed).

    Parameters
    ----------
    robot : Robot
        Serial or tree robot, base fixed or of known motion.
    rotor : {None, "spong", "full"}, optional
        ``None`` (default): the paper's model, links only: the accelerations
        ``QDP`` of every joint from the rigid joints' torques ``GAM`` and the
        motor positions ``qr<j>``.  ``"spong"`` or ``"full"``: also the motor
        accelerations ``QDPr<j>`` from the motor torques ``GAM<j>`` of the
        flexible joints and their velocities ``QPr<j>``.
    trig : bool, optional

    Returns
    -------
    Program
        Pruned; outputs ``QDP<j>`` in joint order, then (with a rotor model)
        ``QDPr<j>`` of the flexible joints.  Inputs as
        :func:`inverse_dynamics`, with ``GAM`` (rigid joints' torques and
        motor torques) instead of the accelerations.

    Raises
    ------
    KaneRobotError
        As :func:`check_flexible`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> program = direct_dynamics(kr.load(kr.frames_path("flexarm1")), rotor="spong")
    >>> list(program.outputs)
    ['QDP1', 'QDPr1']
    >>> print(program)  # doctest: +ELLIPSIS
    GAMF1 = K1*(qr1 - th1)
    ...
    JDr1 = 1/IA1
    GWr1 = -FS1*sign(QPr1) - FV1*QPr1 + GAM1 - GAMF1
    ...
    QDP1 = GAMF1*JD1 - GU1
    QDPr1 = GWr1*JDr1
    """
    stem = robot.stems
    what = "the flexible direct dynamic model"
    check_flexible(robot, what, rotor)
    tree = augmented_robot(robot, rotor)
    program = Program(inputs=_inputs(robot, tree, rotor, "direct"), trig=trig)
    Gamma_f = _elastic_torques(program, robot)
    known_tau = {}
    for j in robot.joint_labels:
        known_tau[j] = Gamma_f.get(j, robot.joint_parameters[j]["GAM"])
    if rotor is not None:
        for j in Gamma_f:
            known_tau[f"r{j}"] = robot.joint_parameters[j]["GAM"] - Gamma_f[j]
    qdd = articulated_bodies(program, tree, known_tau, what=what).qdd
    for j in robot.joint_labels:
        program.set_output(f"QDP{stem[j]}", qdd[j])
    if rotor is not None:
        for j in Gamma_f:
            program.set_output(f"QDPr{stem[j]}", qdd[f"r{j}"])
    program.prune()
    return program


# ---------------------------------------------------------------------------
# The model: programs of both engines, numeric functions
# ---------------------------------------------------------------------------

FlexibleInverse = collections.namedtuple("FlexibleInverse", ["qdd_flexible", "torque_rigid", "torque_motor"])
FlexibleInverse.__doc__ = """Result of :meth:`NumericFlexible.inverse_dynamics`.

Attributes
----------
qdd_flexible : ndarray, shape (nf,) or (N, nf)
    Link-side accelerations of the flexible joints (eq. 27).
torque_rigid : ndarray, shape (nr,) or (N, nr)
    Torques of the rigid joints (eq. 29).
torque_motor : ndarray, shape (nf,) or (N, nf)
    Motor torques ``GAM_j`` of the flexible joints.
"""


def derive(robot, method="newton-euler", rotor="spong"):
    """The dynamic models of a robot with flexible joints.

    This is the entry point :func:`kanerobot.derive` can hand flexible robots
    to.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed or known-motion base; joints with
        ``eta = 1`` are flexible (a robot without any is modelled as well:
        its models are the rigid ones over ``z = q``).
    method : {"newton-euler", "kane", "lagrange"}
        Newton-Euler: the three-step recursion for the inverse and direct
        models, composite links for A, Newton-Euler for H, all on the tree
        of links and rotors.  Kane: A and H of that tree by
        :class:`~kanerobot.dynamics.kane.KaneSystem`, the inverse and direct
        models solved from them numerically.  Lagrange: likewise, A and H
        from the tree's energies (:mod:`kanerobot.dynamics.lagrange`).
    rotor : {"spong", "full"}
        The motor model (see docs/theory/flexible.md); both engines give both.

    Returns
    -------
    FlexibleModel

    Raises
    ------
    KaneRobotError
        For an unknown method or rotor model, and as :func:`check_flexible`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = derive(kr.load(kr.frames_path("planar2flex")), method="kane")
    >>> model.coordinates, model.torques
    (['th1', 'th2', 'qr1', 'qr2'], ['GAM1', 'GAM2'])
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown method {method!r} for flexible joints: available are {', '.join(METHODS)}")
    if rotor not in ROTORS:
        raise KaneRobotError(f"unknown rotor model {rotor!r}: available are {', '.join(ROTORS)}")
    return FlexibleModel(robot, method, rotor)


class FlexibleModel(ProgramCache):
    """The programs of one flexible robot's dynamic models, derived on first use.

    Parameters
    ----------
    robot : Robot
    method : {"newton-euler", "kane", "lagrange"}
    rotor : {"spong", "full"}

    Attributes
    ----------
    robot : Robot
    method, rotor : str
    tree : Robot
        :func:`augmented_robot`: the rigid tree of links and rotors.
    flexible : tuple of str
        Labels of the flexible joints.
    coordinates : list of str
        Names of ``z = (q, q_r)``: the joint symbols, then ``qr<j>``.
    torques : list of str
        Names of ``tau``: ``GAM<j>`` in joint order (motor torques for the
        flexible joints).

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = FlexibleModel(kr.load(kr.frames_path("flexarm1")), "newton-euler", "spong")
    >>> model.op_count("direct_dynamics")
    {'add': 6, 'mul': 13, 'fn': 3}
    >>> model.parameters
    ['ZZ1', 'MX1', 'MY1', 'IA1', 'FV1', 'FS1', 'K1', 'G1']
    """

    models = MODELS
    deriving_detail = ", flexible joints"

    def __init__(self, robot, method="newton-euler", rotor="spong"):
        if method not in METHODS:
            raise KaneRobotError(f"unknown method {method!r} for flexible joints: available are {', '.join(METHODS)}")
        if rotor not in ROTORS:
            raise KaneRobotError(f"unknown rotor model {rotor!r}: available are {', '.join(ROTORS)}")
        self.robot = robot
        self.method = method
        self.rotor = rotor
        self.tree = augmented_robot(robot, rotor)
        self.flexible = flexible_joints(robot)
        self.n = robot.nj
        self.nf = len(self.flexible)
        motors = motor_symbols(robot)
        self._z = [robot.frame(label).q for label in robot.joint_labels] + [m[0] for m in motors.values()]
        self._zd = list(self.tree.qd)
        self._zdd = list(self.tree.qdd)
        self._tau = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
        self.coordinates = [s.name for s in self._z]
        self.torques = [str(s) for s in self._tau]
        self._programs = {}
        self._compiled = {}
        self._kane = None

    def __repr__(self):
        return f"<FlexibleModel {self.robot.name}: {self.method}, rotor {self.rotor!r}, {self.n} joints ({self.nf} flexible)>"

    # --------------------------------------------------------- programs
    def has_program(self, name):
        """False for the models this engine solves numerically (the inverse and
        direct models of Kane and Lagrange)."""
        return name not in SOLVED.get(self.method, set())

    def _check_program(self, name):
        if not self.has_program(name):
            raise KaneRobotError(
                f"the {self.method} engine has no program for {name}: it is solved numerically from A and H; "
                f"use method='newton-euler' for the three-step recursion"
            )

    def _derive(self, name):
        """The :class:`~kanerobot.symbolic.Program` of model ``name`` (see :data:`MODELS`), for :meth:`program`.

        Matrices and vectors are over ``z = (q, q_r)``: ``mass_matrix``
        outputs ``A<r><c>`` (r <= c, 1-based positions in z), ``h`` and
        ``gravity`` one entry per coordinate, named after the joints of
        :attr:`tree` (``GAM1 .. GAMr2``, ``Q1 .. Qr2``), ``elastic_torques``
        ``GAMF<j>``; ``inverse_dynamics`` and ``direct_dynamics`` are the
        programs of :func:`inverse_dynamics` and :func:`direct_dynamics`
        with this model's ``rotor``.
        """
        if name == "elastic_torques":
            program = Program(inputs=_inputs(self.robot, self.tree, None, None))
            for label, value in _elastic_torques(program, self.robot).items():
                program.set_output(f"GAMF{self.robot.stems[label]}", value)
            program.prune()
            return program
        if name == "inverse_dynamics":
            return inverse_dynamics(self.robot, rotor=self.rotor)
        if name == "direct_dynamics":
            return direct_dynamics(self.robot, rotor=self.rotor)
        if self.method == "lagrange":
            if name == "coriolis_matrix":
                return lagrange.coriolis_matrix(self.tree, self.program("mass_matrix"))
            builders: dict[str, Callable[..., Program]] = {"mass_matrix": lagrange.mass_matrix, "h": lagrange.h, "gravity": lagrange.gravity}
            return builders[name](self.tree)
        if self.method == "kane":
            if self._kane is None:
                # imported on first use: kane loads sympy.physics.mechanics (no import cycle)
                from kanerobot.dynamics.kane import KaneSystem

                self._kane = KaneSystem(self.tree)
            return self._kane.program(name)
        if name == "mass_matrix":
            return composite.mass_matrix(self.tree)
        if name == "coriolis_matrix":
            return coriolis.coriolis_matrix(self.tree, self.program("mass_matrix"))
        if name == "h":
            return newton_euler.coriolis_gravity(self.tree)
        return newton_euler.gravity_torques(self.tree)

    @property
    def kane_system(self):
        """The :class:`~kanerobot.dynamics.kane.KaneSystem` of the tree (Kane models only)."""
        if self.method != "kane":
            raise KaneRobotError(f"this model was derived by {self.method}: use method='kane'")
        self.program("mass_matrix")
        return self._kane

    def op_count(self, name):
        """Operations of model ``name``: ``{"mul", "add", "fn"}``.

        For a model Kane or Lagrange solve numerically, the counts of ``A``, ``H`` and
        the elastic torques plus a Cholesky factorisation and two triangular
        solves of the unknowns' block (s unknowns: ``s(s+1)(s+2)/6 + s^2``
        multiplications, as many additions plus s, s square roots) and, for
        the inverse model, the product of the known accelerations
        (``s (m - s)`` of each, m = n + nf).
        """
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        if self.has_program(name):
            return dict(self.program(name).op_count())
        m = self.n + self.nf
        s = m if name == "direct_dynamics" else self.nf
        parts = [self.op_count(part) for part in ("mass_matrix", "h", "elastic_torques")]
        total = {key: sum(p[key] for p in parts) for key in ("add", "mul", "fn")}
        solve = s * (s + 1) * (s + 2) // 6 + s * s
        product = s * (m - s) if name == "inverse_dynamics" else 0
        total["mul"] += solve + product
        total["add"] += solve + s + product
        total["fn"] += s
        return total

    # ------------------------------------------------------- parameters
    def _model_names(self):
        if not self.has_program("direct_dynamics"):
            return ("mass_matrix", "h", "elastic_torques")
        return ("inverse_dynamics", "direct_dynamics")

    @property
    def state_symbols(self):
        """z, zd, zdd, tau symbols (the non-symbol entries left out), in this order."""
        out = []
        for group in (self._z, self._zd, self._zdd, self._tau):
            out += [s for s in group if isinstance(s, sympy.Symbol) and s not in out]
        return out

    @property
    def parameters(self):
        """Names of the symbols the models need besides the state, in the robot's order.

        Newton-Euler: those of the inverse and direct programs; Kane and
        Lagrange: those of A, H and the elastic torques (which may name a few more: Kane's
        central inertias read the masses ``M`` of links whose first moments
        are used, as :class:`~kanerobot.dynamics.model.DynamicModel` does).
        """
        if not hasattr(self, "_parameters"):
            used = set().union(*(self.program(name).used_inputs() for name in self._model_names()))
            self._parameters = parameters_without_state(self.robot, used - set(self.state_symbols))
        return list(self._parameters)

    def numeric(self, values, backend="auto", physical=True, check=True, bind=False):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        ``values`` must give every name of :attr:`parameters` (other symbols
        of the robot are accepted and ignored); flexible joints need a
        positive stiffness ``k`` and rotor inertia ``IA``.  ``backend``,
        ``physical`` and ``check`` as for
        :meth:`kanerobot.dynamics.model.DynamicModel.numeric`: ``"numpy"``,
        ``"c"`` or ``"auto"``; physical values; finite states.

        Raises
        ------
        ParameterError
            For missing or unknown names, and for a flexible joint whose
            stiffness or rotor inertia is not positive, naming the joint.
        """
        if bind:  # the numbers folded into the code: DynamicModel.numeric's bind
            return bound_numeric(self, values, self._rebuilt, backend=backend, physical=physical, check=check)
        return NumericFlexible(self, values, backend=backend, physical=physical, check=check)

    @property
    def state_space(self):
        """The :class:`~kanerobot.state_space.StateSpace`: ``z = (q, q_r)``, ``zd``, n joint and motor torques.

        The inputs drive the rigid joints and the motors (``B``); a flexible
        joint's link side is free, moved by its spring.
        """
        labels = self.robot.joint_labels
        flexible = set(self.flexible)
        coordinates = tuple(self.coordinates)
        motor = {k: coordinates.index(f"qr{self.robot.stems[label]}") for k, label in enumerate(labels) if label in flexible}
        controlled = tuple(motor.get(k, k) for k in range(self.n))
        B = np.zeros((self.n, self.n + self.nf))
        B[np.arange(self.n), controlled] = 1.0  # zd . B^T tau: rigid joints on their rows, motor torques on the motors'
        # joint_limit("2") names joint 2's link side; "qr2" and "r2" its motor
        aliases = {label: k for k, label in enumerate(labels)} | {f"r{label}": motor[k] for k, label in enumerate(labels) if k in motor}
        every = slice(None)
        return StateSpace(
            kind="flexible joints", adjective="flexible-joint", name=self.robot.name, coordinates=coordinates,
            q_names=coordinates, qd_names=tuple(map(str, self._zd)), torques=tuple(self.torques),
            layout_q=f"z = (q, q_r): {', '.join(coordinates)}", layout_qd="zd, as z",
            tau_layout=f"{', '.join(self.torques)} (motor torques on flexible joints)", actuation=B, controlled=controlled,
            controlled_labels=tuple(f"qr{label}" if k in motor else label for k, label in enumerate(labels)),
            origin=np.zeros(len(coordinates)), tree=self.tree, joints=tuple(self.tree.joint_labels), aliases=aliases,
            link_columns=tuple(range(self.n)), program_inputs=(("z", "q", every), ("zd", "qd", every), ("tau", "tau", every)),
            not_rigid="computed torque needs a rigid model: a flexible-joint model is of fourth order in the link "
                      "positions; use pd_gravity on it, or build the computed torque on the rigid robot (eta = 0)",
        )  # fmt: skip

    def _rebuilt(self, robot):
        """The model of this kind (method, options) of another robot (``numeric(..., bind=True)``'s)."""
        return type(self)(robot, self.method, rotor=self.rotor)

    # ---------------------------------------------------------- compiled
    def _groups(self):
        """Argument groups ``[(name, symbols)]`` of every numeric function; entries that
        are not symbols (a customised 0) get placeholders no program uses."""
        return argument_groups((("z", self._z), ("zd", self._zd), ("zdd", self._zdd), ("tau", self._tau)))

    def _program_layout(self, name):
        """``(args, outputs)`` of program ``name``'s generated function (C, JAX): the groups
        ``z, zd, zdd, tau`` and ``p``; the (m, m) grid of a matrix, else None (a vector)."""
        args = self._groups() + [("p", [sympy.Symbol(s) for s in self.parameters])]
        if name not in ("mass_matrix", "coriolis_matrix"):
            return args, None
        return args, matrix_grid(self.program(name), self.n + self.nf, name, name == "mass_matrix")

    def compiled(self, name):
        """Program ``name`` compiled to C: a :class:`~kanerobot.codegen.compiled.CompiledFunction`
        of the groups ``z, zd, zdd, tau`` (``(N, k)`` or ``(k,)``) and ``p`` (the
        parameters, in the order of :attr:`parameters`)."""
        if name not in self._compiled:
            from kanerobot.codegen.compiled import compile_program

            program = self.program(name)
            args, outputs = self._program_layout(name)
            self._compiled[name] = compile_program(
                program, f"kr_flexible_{name}", args, outputs=outputs, constant=("p",),
                doc=f"{MODELS[name]}, robot {self.robot.name}, {self.method}, rotor {self.rotor}",
            )
        return self._compiled[name]

    def casadi_function(self, name):
        """Program ``name`` as a :class:`~kanerobot.codegen.casadi.CasadiFunction` of the arguments
        of :meth:`compiled` (``backend="casadi"``), built once and kept."""
        key = ("casadi", name)
        if key not in self._compiled:
            from kanerobot.codegen.casadi import casadi_program

            program = self.program(name)
            args = self._groups() + [("p", [sympy.Symbol(s) for s in self.parameters])]
            outputs = None
            if name in ("mass_matrix", "coriolis_matrix"):
                outputs = matrix_grid(program, self.n + self.nf, name, name == "mass_matrix")
            self._compiled[key] = casadi_program(
                program, f"kr_flexible_{name}", args, outputs=outputs, constant=("p",),
                doc=f"{MODELS[name]}, robot {self.robot.name}, {self.method}, rotor {self.rotor}",
            )
        return self._compiled[key]


def _states(*arguments, check=True):
    """Each ``(x, k, what)`` as an (N, k) array, and whether all were one state (1-D)."""
    arrays, single = [], True
    for x, k, what in arguments:
        array, one = as_states(x, k, what, check=check)
        single = single and one
        arrays.append(array)
    return arrays, single


class NumericFlexible(NumericProtocol, FrameKinematics):
    """Numeric dynamic functions of a flexible robot with bound parameters.

    The state is ``x = (z, zd)`` with ``z = (q, q_r)``: the n link-side joint
    variables in joint order, then the nf motor positions of the flexible
    joints (:attr:`FlexibleModel.coordinates`); m = n + nf.  Torques ``tau``
    have n entries in joint order: the joint torque of a rigid joint, the
    motor torque of a flexible one.  Every function takes one state (1-D
    arrays) or a batch (2-D arrays, one state per row) and returns arrays of
    matching shape.  Equations of motion::

        A(z) zdd + H(z, zd) = B tau + S Gamma_f(z),    Gamma_f = -k (q_f - q_r)

    Attributes
    ----------
    model : FlexibleModel
    n, nf, m : int
    flexible_index, rigid_index, motor_index : ndarray of int
        Positions in z of the flexible joints' link side, of the rigid
        joints and of the motors.
    backend : {"c", "numpy"}
    fallback_reason : str or None
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        select = select_backend(backend)
        self.model = model
        self.check = check
        robot = model.robot
        names = set(model.parameters)

        def stiffness_hint(missing):
            stiff = [
                f"{name} (stiffness of flexible joint {label})"
                for label in model.flexible
                for name in map(str, sympy.sympify(robot.joint_parameters[label]["k"]).free_symbols)
                if name in missing
            ]
            return f": give {', '.join(stiff)} a positive value" if stiff else ""

        bound_values(robot, model.parameters, _robot_symbol_names(robot), values, hint=stiffness_hint, physical=physical)
        given_values = {str(k): v for k, v in values.items()}
        self._given = {k: float(v) for k, v in given_values.items()}  # the poses may read lengths no dynamic model needs
        known = names | _robot_symbol_names(robot)
        numbers = {sympy.Symbol(k): sympy.Float(float(v)) for k, v in given_values.items() if k in known}
        for label in model.flexible:
            checks = (("stiffness k", robot.joint_parameters[label]["k"]), ("rotor inertia IA", link_parameter(robot, label, "IA")))
            for what, expr in checks:
                value = sympy.sympify(expr).xreplace(numbers)
                if value.is_number and not float(value) > 0:
                    raise ParameterError(
                        f"robot {robot.name}: flexible joint {label} has {what} = {expr} = {float(value):g}: it must be positive"
                    )
        self.values = {sympy.Symbol(k): float(v) for k, v in given_values.items() if k in names}
        self._p = np.array([self.values[sympy.Symbol(s)] for s in model.parameters], dtype=float)
        self.n, self.nf = model.n, model.nf
        self.m = self.n + self.nf
        flexible = set(model.flexible)
        labels = robot.joint_labels
        self.flexible_index = np.array([k for k, label in enumerate(labels) if label in flexible], dtype=int)
        self.rigid_index = np.array([k for k, label in enumerate(labels) if label not in flexible], dtype=int)
        self.motor_index = np.arange(self.n, self.m)
        self._numpy = {}
        self.requested_backend = backend
        self.backend, self.fallback_reason = select

    # ----------------------------------------------------------- plumbing
    def _evaluate(self, name, **states):
        """Program ``name`` on a batch: (N, k) or (N, m, m); groups left out are 0."""
        batch = max(array.shape[0] for array in states.values())
        if not self.model.program(name).outputs:  # the elastic torques of a robot without flexible joints
            return np.zeros((batch, 0))
        groups = self.model._groups()
        arrays = []
        for argname, symbols in groups:
            array = states.get(argname)
            arrays.append(np.zeros((batch, len(symbols))) if array is None else np.broadcast_to(array, (batch, len(symbols))))
        if self.backend == "casadi":
            return self.model.casadi_function(name).batch(batch, arrays + [self._p])
        if self.backend == "jax":
            from kanerobot.dynamics.jax_model import flexible_evaluate

            return flexible_evaluate(self.model, name, arrays, self._p)
        if self.backend == "c":
            from kanerobot.codegen.backend import CodegenError
            from kanerobot.codegen.compiled import CompileError

            try:
                function = self.model.compiled(name)
                return function.batch(batch, arrays + [self._p])
            except (CompileError, CodegenError) as exc:
                if self.requested_backend == "c":
                    raise
                self.backend = "numpy"
                self.fallback_reason = f"{name}: {exc}"
        if name not in self._numpy:
            args = [s for _, symbols in groups for s in symbols] + [sympy.Symbol(s) for s in self.model.parameters]
            self._numpy[name] = self.model.program(name).to_function(args=args)
        columns = [array[:, k] for array in arrays for k in range(array.shape[1])]
        out = np.asarray(self._numpy[name](*columns, *self._p), dtype=float)
        flat = np.broadcast_to(out.reshape(out.shape[0], -1), (out.shape[0], batch)).T
        if name not in ("mass_matrix", "coriolis_matrix"):
            return flat
        m = self.m
        names = matrix_entry_names("A" if name == "mass_matrix" else "C", (m, m))
        position = {names[r][c]: (r, c) for r in range(m) for c in range(m)}
        M = np.zeros((batch, m, m))
        for k, output in enumerate(self.model.program(name).outputs):
            r, c = position[output]
            M[:, r, c] = flat[:, k]
            if name == "mass_matrix":
                M[:, c, r] = flat[:, k]
        return M

    @staticmethod
    def _result(array, single):
        return array[0] if single else array

    @property
    def nq(self):
        """Length of ``z = (q, q_r)`` (and of ``zd``): m."""
        return self.m

    nv = nq

    def _no_wrench(self, wrench):
        if wrench:
            self._unavailable("wrench=", "the flexible-joint programs take no external wrench")

    # ------------------------------------------------------------ models
    def mass_matrix(self, q, out=None):
        """Inertia matrix A(z) at ``q = z = (q, q_r)``, shape (m, m) or (N, m, m); ``out`` receives the result."""
        (z,), single = _states((q, self.m, "z"), check=self.check)
        return self._output(self._result(self._evaluate("mass_matrix", z=z), single), out)

    def h(self, q, qd, wrench=None, out=None):
        """Centrifugal, Coriolis, gravity and friction forces H(z, zd), shape (m,) or (N, m)."""
        self._no_wrench(wrench)
        (z, zd), single = _states((q, self.m, "z"), (qd, self.m, "zd"), check=self.check)
        return self._output(self._result(self._evaluate("h", z=z, zd=zd), single), out)

    def coriolis_matrix(self, q, qd, out=None):
        """Coriolis matrix C(z, zd) of the link and motor coordinates, shape (m, m) or
        (N, m, m): ``C zd = H - Q - friction`` and ``Adot - 2C`` is skew-symmetric."""
        (z, zd), single = _states((q, self.m, "z"), (qd, self.m, "zd"), check=self.check)
        return self._output(self._result(self._evaluate("coriolis_matrix", z=z, zd=zd), single), out)

    def gravity(self, q, out=None):
        """Gravity forces Q(z), shape (m,) or (N, m) (0 on the motor rows but
        for a ``"full"`` prismatic rotor's weight)."""
        (z,), single = _states((q, self.m, "z"), check=self.check)
        return self._output(self._result(self._evaluate("gravity", z=z), single), out)

    def configuration_derivative(self, q, qd):
        """``dz/dt = zd``, shape (m,) or (N, m)."""
        (z, zd), single = _states((q, self.m, "z"), (qd, self.m, "zd"), check=self.check)
        return self._result(np.broadcast_to(zd, (max(len(z), len(zd)), self.m)).copy(), single)

    def elastic_torques(self, z):
        """``Gamma_f = -k (q_f - q_r)``, shape (nf,) or (N, nf)."""
        (z,), single = _states((z, self.m, "z"), check=self.check)
        return self._result(self._evaluate("elastic_torques", z=z), single)

    def generalized_forces(self, z, tau):
        """``B tau + S Gamma_f(z)``, shape (m,) or (N, m): the rigid joints'
        torques, the elastic torques on the flexible joints' rows, motor torque
        minus elastic torque on the motor rows."""
        (z, tau), single = _states((z, self.m, "z"), (tau, self.n, "tau"), check=self.check)
        batch = max(z.shape[0], tau.shape[0])
        Gf = np.broadcast_to(self._evaluate("elastic_torques", z=z), (batch, self.nf))
        tau = np.broadcast_to(tau, (batch, self.n))
        Q = np.zeros((batch, self.m))
        Q[:, self.rigid_index] = tau[:, self.rigid_index]
        Q[:, self.flexible_index] = Gf
        Q[:, self.motor_index] = tau[:, self.flexible_index] - Gf
        return self._result(Q, single)

    def direct_dynamics(self, q, qd, tau, wrench=None, out=None):
        """Accelerations ``zdd`` of the link and motor coordinates at ``q = z``, ``qd = zd``, shape (m,) or (N, m).

        Newton-Euler: the three-step recursion (no inertia matrix); Kane and
        Lagrange: ``A^-1 (B tau + S Gamma_f - H)``.  ``out`` receives the result.
        """
        self._no_wrench(wrench)
        (z, zd, tau), single = _states((q, self.m, "z"), (qd, self.m, "zd"), (tau, self.n, "tau"), check=self.check)
        if self.model.has_program("direct_dynamics"):
            return self._output(self._result(self._evaluate("direct_dynamics", z=z, zd=zd, tau=tau), single), out)
        A = self._evaluate("mass_matrix", z=z)
        rhs = self.generalized_forces(z, tau) - self._evaluate("h", z=z, zd=zd)
        return self._output(self._result(solve_dynamics(A, rhs, self.model.robot.name), single), out)

    def inverse_dynamics(self, q, qd, qdd, wrench=None, out=None):
        """The three-step output: flexible joints' accelerations, rigid joints' and motors' torques.

        Parameters
        ----------
        q, qd : array_like, shape (m,) or (N, m)
            ``z`` and ``zd``.
        qdd : array_like, shape (m,) or (N, m)
            ``zdd``, the known accelerations: the rigid joints' and the motors'; the
            entries of the flexible joints' link side are not read.
        wrench, out
            Not available here (no wrench input; the result is three arrays).

        Returns
        -------
        FlexibleInverse
            ``(qdd_flexible, torque_rigid, torque_motor)``.  Newton-Euler:
            the program of :func:`inverse_dynamics`; Kane and Lagrange: eq. 14 on ``A``
            and ``H``, ``qdd_f = A_ff^-1 (Gamma_f - H_f - A_fk zdd_k)``, then
            the other rows (eq. 15).
        """
        self._no_wrench(wrench)
        self._no_out("inverse_dynamics", out)
        (z, zd), single = _states((q, self.m, "z"), (qd, self.m, "zd"), check=self.check)
        (zdd,), one = _states((qdd, self.m, "zdd"), check=False)
        single = single and one
        if self.check:
            # the flexible joints' link-side entries are not read: NaN placeholders are fine there
            read = zdd.copy()
            read[:, self.flexible_index] = 0.0
            _states((read[0] if one else read, self.m, "zdd"))
        batch = max(z.shape[0], zd.shape[0], zdd.shape[0])
        f, r, mt = self.flexible_index, self.rigid_index, self.motor_index
        zdd = np.array(np.broadcast_to(zdd, (batch, self.m)))
        zdd[:, f] = 0.0
        if self.model.has_program("inverse_dynamics"):
            out = self._evaluate("inverse_dynamics", z=z, zd=zd, zdd=zdd)
            link, motor = out[:, : self.n], out[:, self.n :]
            result = FlexibleInverse(link[:, f], link[:, r], motor)
        else:
            A = np.broadcast_to(self._evaluate("mass_matrix", z=z), (batch, self.m, self.m))
            H = np.broadcast_to(self._evaluate("h", z=z, zd=zd), (batch, self.m))
            Gf = np.broadcast_to(self._evaluate("elastic_torques", z=z), (batch, self.nf))
            known = np.concatenate([r, mt])
            rhs = Gf - H[:, f] - np.einsum("nij,nj->ni", A[:, f][:, :, known], zdd[:, known])
            zdd[:, f] = solve_dynamics(A[:, f][:, :, f], rhs, self.model.robot.name, "inertia of the flexible joints")
            total = np.einsum("nij,nj->ni", A, zdd) + H
            result = FlexibleInverse(zdd[:, f], total[:, r], total[:, mt] + Gf)
        return FlexibleInverse(*(self._result(np.ascontiguousarray(x), single) for x in result))

    def rhs(self, t, x, tau=None):
        """``xdot = (zd, zdd)`` for ``x = (z, zd)``: :meth:`NumericProtocol.rhs
        <kanerobot.dynamics.dynamic_model.NumericProtocol.rhs>`.

        Examples
        --------
        >>> import kanerobot as kr
        >>> model = derive(kr.load(kr.frames_path("flexarm1")))
        >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
        >>> fn = model.numeric(values, backend="numpy")
        >>> fn.rhs(0.0, [0.0, 0.0, 1.0, 2.0], [0.0])
        array([1., 2., 0., 0.])
        """
        return super().rhs(t, x, tau)

    # ------------------------------------------------------ the kinematics
    def pose(self, frame, q):
        """Homogeneous transform 0T_frame, (4, 4) or (N, 4, 4), at ``z = (q, q_r)`` as every function here takes it.

        The frames of the links are those of the link side (they read q);
        the rotor of flexible joint j has frame ``r<j>`` (placed as frame
        j, turned by its motor position ``q_rj`` reduced to the joint): the
        frames of :func:`augmented_robot`, whose generated program runs as
        the dynamic models do (C or numpy).

        Raises
        ------
        KaneRobotError
            An unknown frame, a ``z`` of the wrong length.
        """
        return self._frame_pose(frame, q)

    def jacobian(self, frame, q, projection=None):
        """Jacobian of the origin of ``frame`` in the rates ``zd``: ``[V; w] = J zd``, (6, m) or (N, 6, m).

        One column per coordinate of z (a link frame's motor columns are 0:
        a motor moves its link through the spring only), linear rows first,
        projected into frame ``projection``'s axes; that of
        :func:`kanerobot.kinematics.jacobian` on :func:`augmented_robot`.
        """
        return self._frame_jacobian(frame, q, "0" if projection is None else projection)

    def _frame_robot(self):
        return self.model.tree, "kr_flexible_"

    def _frame_states(self, z):
        (z,), single = _states((z, self.m, "z"), check=self.check)
        return z, single

    # ------------------------------------------------------- state space
    @property
    def state_space(self):
        """The model's :class:`~kanerobot.state_space.StateSpace` with the springs' maps (built once)."""
        if "_state_space" not in self.__dict__:
            self._state_space = self.model.state_space.bind(
                self, values={str(k): v for k, v in self.values.items()}, monitor_map=self._deflection,
                elastic_energy=self._elastic_energy, configuration_map=self._configuration,
                control_inertia=self._motor_inertia, control_gravity=self._link_gravity, stiffness=self._stiffness,
            )  # fmt: skip
        return self._state_space

    def _deflection(self, q_raw, q, qd):
        return {"deflection": q[:, self.flexible_index] - q[:, self.motor_index]} if len(q) else {}

    def _elastic_energy(self, z):
        """``U_e = -1/2 Gamma_f . (q_f - q_r)`` of a batch (N,)."""
        if not self.nf:
            return np.zeros(len(z))
        Gf = np.asarray(self.elastic_torques(z), dtype=float).reshape(len(z), self.nf)
        return -0.5 * np.sum(Gf * (z[:, self.flexible_index] - z[:, self.motor_index]), axis=1)

    def _configuration(self, p):
        """The links and motors at ``p`` (springs at rest)."""
        return np.concatenate([p, p[self.flexible_index]])

    def _motor_inertia(self, z):
        """What a PD's default gains see: the link inertia plus the rotor's on each joint (diagonal, n x n)."""
        d = np.diag(np.asarray(self.mass_matrix(z), dtype=float))
        inertia = d[: self.n].copy()
        inertia[self.flexible_index] += d[self.motor_index]
        return np.diag(inertia)

    def _link_gravity(self, z):
        """The gravity torques of the joints (link rows), (n,): what Tomei's controller compensates."""
        return np.asarray(self.gravity(z), dtype=float)[: self.n]

    def _stiffness(self):
        """Joint stiffnesses k (0 on rigid joints), (n,)."""
        z = np.zeros(self.m)
        z[self.motor_index] = 1.0
        k = np.zeros(self.n)
        k[self.flexible_index] = np.asarray(self.elastic_torques(z), dtype=float).reshape(-1)
        return k
