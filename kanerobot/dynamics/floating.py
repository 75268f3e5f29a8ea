"""Floating robots: the free flyer as link 0's root joint (OpenSYMORO section IV-D, eqs 30-41).

A floating robot (humanoid, satellite, eel) is a tree on a base link 0 that
hangs from the world by a free-flyer joint: its six speeds join the n joint
rates.  The dynamic model (OpenSYMORO eq. 30) is::

    [ F_0 ]   [ A11    A12 ] [ 0Vdot_0 ]   [ H1 ]
    [     ] = [            ] [         ] + [    ]                           (30)
    [ GAM ]   [ A12^T  A22 ] [ qdd     ]   [ H2 ]

with ``F_0`` the wrench applied to the base (zero for a free-floating
robot), ``A11`` the 6x6 spatial inertia of composite link 0 (the whole
robot, about O_0, in frame 0), ``A22`` the n x n inertia matrix of the arm
with the base held, ``A12`` their coupling.  Here the base acceleration is
the derivative of the base speeds of the state below (it differs from the
paper's classical ``0Vdot_0`` by ``[0w_0 x 0v_0; 0]``, a velocity term that
goes to H), so that ``A`` and ``H`` are pinocchio's.

**State** (pinocchio's free flyer, :mod:`kanerobot.robot.joints`).  ``q =
(x, y, z, qx, qy, qz, qw, q_1 .. q_n)``: the position of O_0 in the world
frame, the unit quaternion of 0's orientation ``wR_0`` (x y z w, scalar
last), then the joints; ``qd = (v, w, qd_1 .. qd_n)``: the velocity of O_0
and the angular velocity of link 0, both in frame 0, then the joint rates;
``qdd`` is the time derivative of ``qd`` (so ``dv/dt = 0R_w d2x/dt2 - w x
v``, not the classical acceleration ``VP`` of SYMORO).  Gravity ``G``
(``robot.base.G``) is given in the world frame and rotated into frame 0
through the quaternion.

**Program inputs.**  The programs read the base state through symbols of
fixed names: the quaternion :data:`QUATERNION` ``QX0 QY0 QZ0 QW0`` (unit),
the base speeds :data:`BASE_VELOCITY` ``VX0 VY0 VZ0 WX0 WY0 WZ0`` and their
derivatives :data:`BASE_ACCELERATION` ``DVX0 .. DWZ0``, besides the joint
variables, ``QP``, ``QDP``, ``GAM`` and the parameters; ``W0, WP0, V0,
VP0`` of ``robot.base`` are not used (the base motion is the state).

**No algorithm of its own.**  Every recursion serves the free flyer as it
serves a fixed root (:mod:`~kanerobot.dynamics.root` gives link 0's motion;
the free flyer's motion subspace is the identity, so its generalized forces
are the whole wrench at O_0).  The names below are those functions:
:func:`inverse_dynamics`, :func:`nonlinear_effects` (``h``) and
:func:`gravity_forces` (``gravity``) are Newton-Euler's
(:mod:`~kanerobot.dynamics.newton_euler`); :func:`mass_matrix` the
composite links (:mod:`~kanerobot.dynamics.composite`);
:func:`direct_dynamics` and :func:`base_acceleration` (the free-floating
inverse dynamic model, OpenSYMORO eqs 31-39: joint accelerations known,
``F_0 = 0``) the articulated-body passes of
:mod:`~kanerobot.dynamics.direct`, the 6x6 base system solved in the
program by :func:`ldl_solve`.  Lagrange (the Boltzmann-Hamel rows of
:mod:`~kanerobot.dynamics.lagrange`), Kane's nested sums
(:mod:`~kanerobot.dynamics.kane`) and the Coriolis matrix (the root's
Hamel terms, :mod:`~kanerobot.dynamics.coriolis`) serve it too.
:func:`integrate` and :func:`configuration_derivative` update the base
pose ``wT_0`` (the ``Z`` of OpenSYMORO eqs 40-41) with the quaternion, free
of the singularities of Euler angles; :func:`base_pose` gives ``wT_0`` back
(all from :mod:`kanerobot.robot.joints`).  Errors: :func:`check_masses` (a
base or robot without mass).

No model class of its own either: :class:`~kanerobot.dynamics.dynamic_model.DynamicModel`
serves every root joint (its ``(nq, nv)`` include the free flyer's ``(7, 6)``,
its models the ``base_acceleration``), and
:class:`~kanerobot.dynamics.dynamic_model.NumericDynamics` runs them on
free-flyer states (the quaternion normalised on the way in, integrated by
the joint models).  :class:`FloatingBaseModel` is a DynamicModel that
refuses a robot without a floating base; :class:`FloatingBaseDynamics` is
NumericDynamics by its former name.  With Kane and Lagrange the base
acceleration and the direct dynamics are solved numerically from ``A`` and
``H``; the three engines agree to rounding (``tests/test_floating.py``).
"""

from kanerobot.dynamics import composite, direct, newton_euler
from kanerobot.dynamics.dynamic_model import MODELS as BASE_MODELS
from kanerobot.dynamics.dynamic_model import STRUCTURE_MODELS, DynamicModel, NumericDynamics
from kanerobot.dynamics.free_flyer import (
    BASE_ACCELERATION,
    BASE_FORCE_NAMES,
    BASE_VELOCITY,
    QUATERNION,
    check_floating,
    check_masses,
)
from kanerobot.robot.joints import (
    base_pose,
    configuration_derivative,
    integrate,
    quaternion_to_rotation,
    rotation_to_quaternion,
)

__all__ = [
    "BASE_ACCELERATION",
    "BASE_FORCE_NAMES",
    "BASE_VELOCITY",
    "QUATERNION",
    "FloatingBaseDynamics",
    "FloatingBaseModel",
    "base_acceleration",
    "base_pose",
    "check_masses",
    "configuration_derivative",
    "direct_dynamics",
    "gravity",
    "gravity_forces",
    "h",
    "integrate",
    "inverse_dynamics",
    "ldl_solve",
    "mass_matrix",
    "nonlinear_effects",
    "quaternion_to_rotation",
    "rotation_to_quaternion",
]


# ---------------------------------------------------- generalized forces
#: ``[F_0; GAM] = A qdd + H`` (pinocchio's ``rnea``): Khalil's Newton-Euler,
#: whose root joint is the free flyer (outputs ``GAMFX0 .. GAMCZ0`` first).
inverse_dynamics = newton_euler.inverse_dynamics
#: ``H(q, qd)`` (pinocchio's ``nle``): Newton-Euler at zero acceleration.
nonlinear_effects = newton_euler.coriolis_gravity
#: ``Q(q)``: Newton-Euler at rest, the base wrench that holds the robot first (``QFX0 .. QCZ0``).
gravity_forces = newton_euler.gravity_torques
#: The same, by the names every engine module uses (:data:`kanerobot.dynamics.model.MODELS`).
h, gravity = nonlinear_effects, gravity_forces


# ------------------------------------------- base acceleration, direct dynamics
#: Free-floating inverse dynamics (OpenSYMORO eqs 31-39, ``F_0 = 0``): the
#: articulated-body passes of :mod:`~kanerobot.dynamics.direct` with every
#: joint's acceleration known (outputs ``DVX0 .. DWZ0``, then ``GAM<label>``).
base_acceleration = direct.base_acceleration
#: Base and joint accelerations for given joint torques: the articulated-body
#: passes with the free flyer's 6x6 system solved in the program.
direct_dynamics = direct.direct_dynamics
#: ``K x = y`` by ``K = L D L^T`` in the program (:func:`kanerobot.dynamics.direct.ldl_solve`).
ldl_solve = direct.ldl_solve


# ------------------------------------------------------------ mass matrix
#: The (6+n)x(6+n) inertia matrix ``A(q)`` of eq. 30, in the speeds of the
#: state: composite links, whose root joint is the free flyer (the base block
#: is composite link 0's spatial inertia, ``A11 .. A66``; zeros left out).
mass_matrix = composite.mass_matrix


# ------------------------------------------------------------------ models
#: Models a :class:`FloatingBaseModel` offers, with what they compute: every
#: model of a fixed base, on the free flyer's state, and the free-floating
#: inverse dynamics.
MODELS = {**BASE_MODELS, "base_acceleration": STRUCTURE_MODELS["base_acceleration"]}


class FloatingBaseModel(DynamicModel):
    """The dynamic models of a floating robot: a :class:`~kanerobot.dynamics.dynamic_model.DynamicModel`
    that refuses a robot without a floating base.

    Everything else is DynamicModel's, on the free flyer as root joint:
    :meth:`program` gives each model as a program (see :data:`MODELS`),
    :meth:`numeric` binds the parameters to numbers.

    Parameters
    ----------
    robot : Robot
        Floating (``is_floating = 1``) serial or tree robot; link 0 is the base.
    method : {"newton-euler", "kane"}, optional
        The engine.  ``"kane"``: the inverse dynamics, ``A``, ``H``, ``Q`` and
        ``C`` by Kane's equations summed over the tree
        (:class:`~kanerobot.dynamics.kane.KaneSystem`, the base's six speeds
        first; KanesMethod gives them too, ``source="kanes_method"``), and the base acceleration and
        direct dynamics solved numerically from ``A`` and ``H`` (see
        :meth:`has_program`); :attr:`kanes_method`, :attr:`bodies`,
        :attr:`loads`, :attr:`frames` give the mechanics objects.

    Raises
    ------
    KaneRobotError
        When the robot is not floating, has loops, flexible joints, or a
        base (link 0) or total mass that is a number <= 0; for an unknown
        ``method``.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> model = FloatingBaseModel(kr.load(kr.frames_path("satellite")))
    >>> model.nq, model.nv
    (10, 9)
    >>> model.parameters[8:14]  # the wrench FX3 .. CZ3 on link 3 is a state, given as wrench=
    ['MZ0', 'M0', 'D1', 'RL1', 'XX1', 'XY1']
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> fn = model.numeric(random_parameters(model.robot, np.random.default_rng(0)), backend="numpy")
    >>> q = [0, 0, 0, 0, 0, 0, 1, 0.1, 0.2, 0.3]
    >>> fn.mass_matrix(q).shape, fn.direct_dynamics(q, np.zeros(9), np.zeros(3)).shape
    ((9, 9), (9,))

    By Kane's method, the direct dynamics solved from A and H:

    >>> kane = FloatingBaseModel(model.robot, method="kane")
    >>> kane.has_program("direct_dynamics"), kane.kanes_method.mass_matrix.shape
    (False, (9, 9))
    """

    def __init__(self, robot, method="newton-euler"):
        check_floating(robot, "the floating-base dynamic model")  # a fixed base too is refused here
        super().__init__(robot, method)


#: The numeric functions of a floating base: those of every root joint (its state's
#: free-flyer part is the root joint's, :class:`~kanerobot.dynamics.dynamic_model.NumericDynamics`).
FloatingBaseDynamics = NumericDynamics
