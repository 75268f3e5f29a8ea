"""Dynamic models of a robot, derived once, evaluated by generated code.

:func:`derive` gathers the algorithms of this package into a
:class:`DynamicModel` (or the model of the robot's structure, chosen in
:data:`STRUCTURES`): each model is a :class:`~kanerobot.symbolic.Program`
derived on first use and kept, with its operation count.  ``model.numeric``
binds the parameters to numbers and returns :class:`NumericDynamics`, whose
functions run the programs as generated code (no sympy substitution), for
one state or a batch of states: numpy source, or C compiled with the system
compiler (:mod:`kanerobot.codegen.compiled`) when one is available.

    Gamma = A(q) qdd + C(q, qd) qd + Q(q) + friction,   H = C qd + Q + friction

The classes and helpers live in :mod:`kanerobot.dynamics.dynamic_model`, which
every structure module imports; this module only adds :func:`derive` on top
of the structures (so none of them imports it back) and re-exports the rest
under their historical names (``kanerobot.dynamics.model.DynamicModel`` ...).
"""

from kanerobot.dynamics import flexible
from kanerobot.dynamics.closed_loop import ClosedLoopModel
from kanerobot.dynamics.constrained import ConstrainedDynamics, ConstrainedModel
from kanerobot.dynamics.dynamic_model import (
    BACKENDS,
    MATRIX_MODELS,
    METHODS,
    MODELS,
    SOLVED,
    DynamicModel,
    NumericDynamics,
    argument_groups,
    as_states,
    bound_values,
    finite_values,
    matrix_grid,
    name_prefix,
    parameters_without_state,
    select_backend,
)
from kanerobot.dynamics.flexible import FlexibleModel, NumericFlexible
from kanerobot.dynamics.mimic import MimicModel
from kanerobot.dynamics.rolling_disc import robot_discs_model
from kanerobot.dynamics.wheeled import WheeledModel
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import Robot

__all__ = [
    "BACKENDS",
    "DerivedModel",
    "MATRIX_MODELS",
    "METHODS",
    "MODELS",
    "NumericModel",
    "SOLVED",
    "STRUCTURES",
    "DynamicModel",
    "NumericDynamics",
    "argument_groups",
    "as_states",
    "bound_values",
    "derive",
    "finite_values",
    "matrix_grid",
    "name_prefix",
    "parameters_without_state",
    "select_backend",
]


#: What :func:`derive` returns, the model of the robot's structure (a type,
#: for the type hints of the functions that take a derived model): a tree
#: under any :class:`~kanerobot.dynamics.constrained.VelocityConstraint`
#: (closed loops, wheels) is a :class:`~kanerobot.dynamics.constrained.ConstrainedModel`.
DerivedModel = DynamicModel | ConstrainedModel | FlexibleModel

#: What ``model.numeric(values)`` returns for a :data:`DerivedModel` (a type,
#: for type hints; a floating base's numeric model is a
#: :class:`NumericDynamics`, every constrained tree's a ``ConstrainedDynamics``).
NumericModel = NumericDynamics | ConstrainedDynamics | NumericFlexible


def _has_flexible_joint(robot):
    return any(robot.joint_parameters[label]["eta"] == 1 for label in robot.joint_labels)


#: How :func:`derive` chooses the model of a robot: (structure, test on the
#: robot, ``build(robot, method)``), the first that applies wins, in this
#: order (a wheeled or floating robot is never asked about flexible joints or
#: loops: their models refuse those combinations with their own message); a
#: robot none applies to is a rigid serial or tree robot, a :class:`DynamicModel`.
#: A new velocity constraint is one line here: ``("name", test,
#: constrained(Constraint))`` (:func:`~kanerobot.dynamics.constrained.constrained`),
#: or its model class where it adds to it (mimic joints: their configuration).
#: Mimic joints come first: :class:`~kanerobot.dynamics.mimic.Mimic` refuses
#: the structures it does not compose with, by name.  Rolling discs come
#: before them all: :class:`~kanerobot.dynamics.rolling_disc.RobotDiscs`
#: refuses (or takes) every other structure with its own message, so that no
#: robot's discs are ever ignored.
STRUCTURES = (
    ("rolling discs", lambda robot: bool(robot.discs), robot_discs_model),
    ("mimic joints", lambda robot: bool(robot.mimics), MimicModel),
    ("wheeled", lambda robot: robot.wheeled, WheeledModel),
    ("floating base", lambda robot: robot.floating, DynamicModel),  # the free flyer is the root joint: a tree model
    ("flexible joints", _has_flexible_joint, flexible.derive),
    ("closed loops", lambda robot: bool(robot.loops), ClosedLoopModel),
)


def derive(robot: Robot, method: str = "newton-euler") -> DerivedModel:
    """The dynamic models of ``robot`` by ``method``.

    Parameters
    ----------
    robot : Robot
        Serial, tree or closed-loop robot, its joints any joint model
        (revolute, prismatic, spherical, planar), with a fixed, moving
        (known motion) or free-flying base, wheels or flexible joints.
    method : {"newton-euler", "lagrange", "kane"}
        The engine.  All give the same models (to rounding); Newton-Euler
        gives the shortest programs and a recursive direct dynamic model,
        Lagrange and Kane are there to cross-validate and for users of those
        methods.  With Lagrange and Kane, the direct dynamic model is solved
        numerically from A and H (qdd = A^-1 (Gamma - H)).

    Returns
    -------
    DynamicModel, ConstrainedModel or FlexibleModel
        A :class:`DynamicModel` for a tree on any root joint: for a floating
        base (every engine), the free flyer is the root joint, state in
        pinocchio's free-flyer convention.  For closed loops, a
        :class:`~kanerobot.dynamics.closed_loop.ClosedLoopModel`: the tree
        model of ``method`` projected on the active joints.  With flexible joints
        (``eta = 1``), a :class:`~kanerobot.dynamics.flexible.FlexibleModel`
        (Spong's motor-side model; see :func:`kanerobot.dynamics.flexible.derive`
        for the others), state ``(q, q_r)``.  On wheels, a
        :class:`~kanerobot.dynamics.wheeled.WheeledModel`: the tree model
        projected on the independent speeds of the rolling constraints.  With
        mimic joints (``robot.mimics``), a
        :class:`~kanerobot.dynamics.mimic.MimicModel`: the tree model projected
        on the independent joints (``q`` every joint, the couplings satisfied).

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("planar2")))
    >>> model.parameters[:5]  # frame by frame, in SYMORO's order (Robot.parameter_order)
    ['ZZ1', 'IA1', 'FV1', 'FS1', 'L1']
    >>> fn = model.numeric({name: 1.0 for name in model.parameters}, physical=False)  # all 1.0: no real body
    >>> fn.mass_matrix([0.0, 0.0]).shape
    (2, 2)
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown method {method!r}: available are {', '.join(METHODS)}")
    if not robot.joint_labels and not robot.floating:
        raise KaneRobotError(
            f"{robot.name} has no moving joint and a fixed base: it has no dynamic model (every model would be "
            f"empty); give it a joint, or a floating base (a free-flying rigid body)"
        )
    leaks = robot.state_leaks()
    if leaks:
        raise KaneRobotError(f"{robot.name}: {leaks[0][2]} (the models would take it for a parameter)")
    for _, applies, build in STRUCTURES:
        if applies(robot):
            return build(robot, method)
    return DynamicModel(robot, method)
