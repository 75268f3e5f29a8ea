"""What the paths of :mod:`kanerobot.dynamics.kane` share: the models' names, the checks, sympy vectors, real twins."""

import sympy
from sympy.physics.mechanics import dynamicsymbols
from sympy.physics.vector import Vector

from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE

#: Models a :class:`~kanerobot.dynamics.kane.KaneSystem` derives, by
#: :meth:`~kanerobot.dynamics.kane.KaneSystem.program` name (the names of
#: :data:`kanerobot.dynamics.model.MODELS`).
MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix")
#: Labels of the six speeds of a floating base (``u_VX0 .. u_WZ0``, the
#: program's ``VX0 .. WZ0``): the velocity of O_0 then the angular velocity of
#: link 0, both in frame 0 (pinocchio's free flyer).
BASE_SPEED_LABELS = ("VX0", "VY0", "VZ0", "WX0", "WY0", "WZ0")
#: Models of a floating robot.
FLOATING_MODELS = ("inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix")


def check_supported(robot):
    """Raise :class:`KaneRobotError` unless ``robot`` is a serial or tree robot
    with a fixed, moving (known motion) or floating base and rigid joints.

    Examples
    --------
    >>> import kanerobot as kr
    >>> check_supported(kr.load(kr.frames_path("planar2")))
    """
    if robot.loops:
        raise KaneRobotError(
            f"robot {robot.name} has closed loops (cut at joint {', '.join(robot.cut_joints)}): KaneSystem is for "
            f"serial and tree robots; kr.derive(robot, method='kane') projects the equivalent tree on the loops"
        )
    if robot.floating and BASE not in robot.links:
        raise KaneRobotError(f"robot {robot.name} has a floating base: it must carry link 0 (give its dynamic parameters)")
    if robot.wheeled:
        raise KaneRobotError(
            f"robot {robot.name} has a wheeled mobile base: KaneSystem is for its tree; kr.derive(robot, method='kane') "
            f"adds the wheel constraints (kanerobot.dynamics.wheeled)"
        )
    flexible = robot.flexible_joints
    if flexible:
        raise KaneRobotError(
            f"robot {robot.name} has flexible joints ({', '.join(flexible)}): KaneSystem is for rigid joints; "
            f"kr.derive(robot, method='kane') models the motors as extra coordinates (kanerobot.dynamics.flexible)"
        )


def check_masses(robot):
    """A link without mass has no first moments (its centre of mass would be nowhere)."""
    for j in robot.links:
        d = robot.dynamics[j]
        MS = [d["MX"], d["MY"], d["MZ"]]
        if sympy.sympify(d["M"]) == 0 and not is_zero(sympy.Matrix(MS)):
            raise KaneRobotError(f"link {j} of {robot.name} has M = 0 but first moments {MS}: give it a mass")


def speed_keys(frame):
    """The keys of the speeds of frame j's joint in the partial velocities: its label for one
    speed (as before joints had several), the joint model's speed names else (``WX2 ..``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.robot import joints
    >>> from kanerobot.robot.description import GeneralPlacement
    >>> speed_keys(kr.load(kr.frames_path("planar2")).frame("2"))
    ['2']
    >>> speed_keys(kr.Frame("2", "1", joints.Spherical(), 1, GeneralPlacement(R0=[[1, 0, 0], [0, 1, 0], [0, 0, 1]], P=[0, 0, 0], axis=[0, 0, 1])))
    ['WX2', 'WY2', 'WZ2']
    """
    joint = frame.joint
    return [frame.label] if joint.nv == 1 else list(joint.speed_names(frame.stem))


def moving_base(robot):
    """Whether ``robot.base`` has a known motion (``W0, WP0, V0, VP0`` not all zero)."""
    b = robot.base
    return any(sympy.sympify(v) != 0 for v in list(b.W0) + list(b.WP0) + list(b.V0) + list(b.VP0))


def is_zero(v):
    """Whether every component of ``v`` is zero."""
    return all(sympy.sympify(e) == 0 for e in v)


def vector(frame, components):
    """``sum_r components[r] * frame.<r>`` as a sympy Vector."""
    return components[0] * frame.x + components[1] * frame.y + components[2] * frame.z


def frame_vector(frame, components):
    """The Vector of ``frame`` with these components, made at once (as sympy's
    frames make their unit vectors) rather than by three products and two sums."""
    return Vector([(sympy.Matrix(components), frame)])


def kd_equations(q, u):
    """The kinematic differential equations ``q' - u`` of KanesMethod (joints of one speed)."""
    t = dynamicsymbols._t
    return [qk.diff(t) - uk for qk, uk in zip(q, u)]


def joint_kd_equations(robot, q, u):
    """The kinematic differential equations ``q' - f(q, u)`` of KanesMethod, joint by joint
    (each joint model's :meth:`~kanerobot.robot.joints.JointModel.configuration_rate`); a floating base's six
    pseudo-coordinates first, ``q' = u``.

    Parameters
    ----------
    robot : Robot
    q, u : sequence of sympy Function
        The dynamicsymbols of the configuration (``robot.q``, after a
        floating base's six) and of the speeds (``robot.qd``, likewise).

    Returns
    -------
    list of sympy.Expr
        ``len(q)`` equations, zero along the motion.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> joint_kd_equations(arm, dynamicsymbols("th1 th2"), dynamicsymbols("u1 u2"))
    [-u1(t) + Derivative(th1(t), t), -u2(t) + Derivative(th2(t), t)]
    """
    t = dynamicsymbols._t
    rates = list(u[: len(u) - len(robot.qd)])  # the floating base's
    k, m = len(rates), len(rates)
    for label in robot.joint_labels:
        joint = robot.frame(label).joint
        rates += joint.configuration_rate(list(q[k:k + joint.nq]), u[m:m + joint.nv])
        k, m = k + joint.nq, m + joint.nv
    return [qk.diff(t) - rate for qk, rate in zip(q, rates)]


class RealTwins:
    """Real twins of symbols: the mechanics objects are built on real symbols
    (sympy's vectors simplify conjugates otherwise), the programs on the robot's.

    Attributes
    ----------
    symbols : dict str -> sympy.Symbol
        The real twins, by name.
    plain : dict sympy.Symbol -> sympy.Symbol
        Each twin's plain symbol.

    Examples
    --------
    >>> import sympy
    >>> twins = RealTwins()
    >>> x = twins.real(sympy.Symbol("x") + 1)
    >>> x.free_symbols == {twins.symbols["x"]}, twins.symbols["x"].is_real
    (True, True)
    """

    def __init__(self):
        self.symbols, self.plain, self._twins = {}, {}, {}

    def real(self, expr):
        """``expr`` with every symbol replaced by its real twin."""
        if isinstance(expr, sympy.Symbol):
            twin = self._twins.get(expr)
            if twin is not None:
                return twin
        expr = sympy.sympify(expr)
        if expr.is_Number:
            return expr
        twins = self._twins
        for s in expr.free_symbols:
            if s not in twins and isinstance(s, sympy.Symbol) and not s.is_real and s != dynamicsymbols._t:
                twin = self.symbols.get(s.name)
                if twin is None:
                    twin = self.symbols[s.name] = sympy.Symbol(s.name, real=True)
                    self.plain[twin] = s
                twins[s] = twin
        return expr.xreplace(twins)
