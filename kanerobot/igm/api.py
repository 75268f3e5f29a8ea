"""``inverse_geometric``: every configuration of a robot for a pose.

The closed form (Paul's method, with Pieper's decoupling when the chain has
three prismatic joints or a spherical joint, at an end or in the middle) is derived once per
robot and method (:func:`derive_igm`, cached), its steps evaluated for the
geometric values into every branch, and each candidate checked (and its last
digits polished by Gauss-Newton) with the direct geometric model before it is
returned, so that a spurious branch never leaks.  Closed-loop robots: the
direct chain gives the joints of the path to the terminal frame, then the
loop equations the other joints of each loop, analytically as well
(:mod:`kanerobot.igm.loops`).
"""

from collections.abc import Callable, Mapping

import numpy
import sympy
from numpy.typing import ArrayLike

from kanerobot.errors import KaneRobotError
from kanerobot.geometry import loop_constraints, numeric_function
from kanerobot.igm import numeric as num
from kanerobot.igm.loops import loop_steps
from kanerobot.igm.paul import NoClosedForm, chain_equations, consistent_samples, pose_matrix, solve_chain
from kanerobot.igm.pieper import centres, decoupled_structure
from kanerobot.igm.program import SolutionProgram
from kanerobot.igm.redundant import chain_end, refuse_redundant
from kanerobot.igm.solutions import Solutions
from kanerobot.robot import joints
from kanerobot.robot.description import Robot

METHODS = ("auto", "paul", "pieper", "general", "numeric")

_CACHE: "dict[tuple, InverseGeometricModel | NoClosedForm]" = {}


class InverseGeometricModel:
    """The closed-form inverse geometric model of a robot (symbolic).

    Parameters
    ----------
    robot : Robot
    method : {'auto', 'paul', 'pieper'}
        ``'paul'``: the matrix equations only; ``'pieper'``: also the
        position equations of a spherical joint's centre (raises when the
        chain has no such structure); ``'auto'``: Pieper's when it applies.
    end : str, optional
        The frame whose pose is given, default
        :func:`kanerobot.geometry.terminal_frame` (needed for a tree robot).

    Attributes
    ----------
    program : SolutionProgram
        The steps for the joints of the direct chain; ``loop_program`` those
        of the loops (None for an open chain).  ``print(program)`` lists the
        equation types, branches and singular cases.

    Raises
    ------
    NoClosedForm
        When no standard equation type is left for some joints.
    RedundantChain
        When more than 6 joints move the frame (:mod:`kanerobot.igm.redundant`).

    Examples
    --------
    >>> import kanerobot as kr
    >>> igm = derive_igm(kr.load(kr.frames_path("planar2")))
    >>> [step.kind for step in igm.program.steps]
    ['type3', 'type3']
    """

    def __init__(self, robot, method="auto", end=None):
        if method not in ("auto", "paul", "pieper"):
            raise KaneRobotError(f"closed-form method {method!r}: use 'auto', 'paul' or 'pieper'")
        self.robot = robot
        self.end = chain_end(robot, end)
        refuse_redundant(robot, self.end)
        # with joint offsets the steps solve the KK angles theta = q + offset;
        # the solver subtracts the offsets from its results
        robot = robot.without_offsets()
        self._angles_robot = robot
        chain = robot.root_path(self.end)
        self.structure = decoupled_structure(robot, chain)
        if method == "pieper" and self.structure is None:
            raise KaneRobotError(
                f"Pieper's method needs 6 joints with three prismatic or a spherical joint; "
                f"robot {robot.name} has neither: use method='paul', 'general' or 'numeric'"
            )
        self.method = "pieper" if self.structure and method != "paul" else "paul"
        frames = [robot.frame(label) for label in chain]
        factors = [sympy.Matrix(f.transform()) for f in frames]
        unknowns = [f.q for f in frames if f.is_joint]
        prismatic = {f.q for f in frames if isinstance(f.joint, joints.Prismatic)}
        all_joints = {robot.frame(label).q for label in robot.joint_labels}
        # the fixed-point equations help any chain (a point of the terminal
        # frame on a joint axis, UR-like arms): only 'paul' goes without them
        # a spherical joint in the middle: the position equations of its centre
        middle = centres(robot, chain) if self.method == "pieper" else []
        equations = chain_equations(factors, pose_matrix(), all_joints, points=method != "paul", centres=middle)
        samples = consistent_samples(factors, pose_matrix()[:3, :])
        self.program = SolutionProgram(robot, solve_chain(equations, unknowns, prismatic, samples=samples), self.method)
        steps = loop_steps(robot, known=unknowns)
        self.loop_program = SolutionProgram(robot, steps, "paul") if steps else None

    def __str__(self):
        text = str(self.program)
        if self.loop_program is not None:
            text += "\n\nthen the loops:\n" + "\n".join(str(self.loop_program).splitlines()[3:])
        if self.robot.has_offsets:
            shifts = ", ".join(
                f"{f.q} = {f.joint_expression} - ({f.offset})" for f in self.robot.frames if f.is_joint and f.offset != 0
            )
            text += f"\n\nthe steps solve the KK angles; with the joint offsets: {shifts}"
        return text

    def solver(self, values, tol=1e-10):
        """Compile for the geometric ``values``: ``f(T) -> Solutions``.

        Examples
        --------
        >>> import kanerobot as kr
        >>> arm = kr.load(kr.frames_path("planar2"))
        >>> solve = derive_igm(arm).solver({"L1": 1.0})
        >>> T = num.ChainModel(arm, "2", {"L1": 1.0}).pose([0.4, 1.0])
        >>> [q.round(9).tolist() for q in solve(T)]
        [[0.4, 1.0]]
        """
        chain = self.program.compile(values)
        loops = self.loop_program.compile(values) if self.loop_program is not None else None
        angles_robot = self._angles_robot
        model = num.ChainModel(angles_robot, self.end, values)
        revolute = model.revolute_mask()
        offsets = numpy.array(self.robot.offset_values(values))
        closure = None
        if angles_robot.loops:
            closure = numeric_function(angles_robot, sympy.Matrix(loop_constraints(angles_robot)), values)

        def solve(T):
            T = numpy.asarray(T, dtype=float)
            kept: list[numpy.ndarray] = []
            families = []
            branches = chain(T)
            checked = []
            for q, free in branches:
                if not numpy.all(numpy.isfinite(q)):
                    continue
                err = num.pose_distance(model.pose(q), T)
                if 1e-12 < err < 1e-5:  # polish the last digits, not a wrong branch
                    q = _polish(model, T, q)
                    err = num.pose_distance(model.pose(q), T)
                if err <= tol:
                    checked.append((q, free))
            if loops is not None:
                assert closure is not None  # the robot's loops give both
                checked = [(q, free) for q, free in loops(T, start=checked)
                           if numpy.all(numpy.isfinite(q)) and numpy.max(numpy.abs(closure(q))) <= tol]
            for q, free in checked:
                q = num.wrap(q - offsets, revolute)
                if all(num.joint_distance(q, p, revolute) > 1e-7 for p in kept):
                    kept.append(q)
                    families.append(tuple(free))
            return Solutions(kept, families, self.method)

        return solve


def _polish(model, T, q, iterations=3):
    """A few Gauss-Newton steps on the chain joints when ``q`` is close
    (the closed form loses digits near the border of an acos)."""
    for _ in range(iterations):
        pose, J = model.jacobian(q)
        e = num.pose_error(pose, T)
        err = float(numpy.max(numpy.abs(e)))
        if err < 1e-14 or err > 1e-5:
            break
        q = q.copy()
        q[model.columns] += numpy.linalg.lstsq(J, e, rcond=None)[0]
    return q


def derive_igm(robot, method="auto", end=None):
    """The :class:`InverseGeometricModel` of ``robot`` (to frame ``end``),
    derived once and cached."""
    end = chain_end(robot, end)
    key = (robot, method, end)
    if key not in _CACHE:
        try:
            _CACHE[key] = InverseGeometricModel(robot, method, end)
        except NoClosedForm as error:
            # remembered too: 'auto' tries Paul's method on every call for a
            # decoupled 6R robot whose position equations have no closed form
            _CACHE[key] = error
    found = _CACHE[key]
    if isinstance(found, NoClosedForm):
        raise NoClosedForm(str(found))
    return found


def inverse_geometric(
    robot: Robot,
    T: ArrayLike,
    values: Mapping[str, float],
    method: str = "auto",
    tol: float = 1e-10,
    starts: int = 200,
    rng: numpy.random.Generator | None = None,
    end: str | None = None,
) -> Solutions:
    """Every joint configuration placing the terminal frame at the pose ``T``.

    Parameters
    ----------
    robot : Robot
    T : array_like, shape (4, 4)
        Pose of the terminal frame (:func:`kanerobot.geometry.terminal_frame`) in frame 0.
    values : dict str -> float
        Geometric parameters.
    method : {'auto', 'paul', 'pieper', 'general', 'numeric'}
        ``'auto'``: for a 6R chain without a spherical joint, the
        general 6R method, unless its elimination is degenerate (a special
        geometry, e.g. parallel axes); otherwise the closed form of Paul's
        method (with Pieper's decoupling), and the numeric method when there
        is none.  ``'numeric'``: damped least squares from
        ``starts`` random starts (may miss solutions).
    tol : float
        Largest accepted difference of the pose entries.
    starts : int
        Random starts of the numeric method.
    rng : numpy.random.Generator, optional
        Their generator (default ``numpy.random.default_rng(0)``).
    end : str, optional
        The frame placed at T (a tree robot has several ends); default
        :func:`kanerobot.geometry.terminal_frame`.

    Returns
    -------
    Solutions
        A list of numpy arrays (nj,) in ``robot.joint_labels`` order, angles
        in (-pi, pi], each solution once; empty (with ``message``) when the
        pose is out of reach; ``families`` names the free joints of singular
        solutions.

    Raises
    ------
    RedundantChain
        When more than 6 joints move the frame: the solutions form a
        continuum, not a set to list (the message gives the degree of
        redundancy); :func:`~kanerobot.igm.redundant.redundant_ik` returns
        one of them.

    Examples
    --------
    >>> import numpy, kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> T = kr.geometry.numeric_transform(arm, "0", "2", {"L1": 1.0})([0.3, 0.5])
    >>> [q.round(9).tolist() for q in inverse_geometric(arm, T, {"L1": 1.0})]
    [[0.3, 0.5]]
    >>> T[0, 3] = 5.0
    >>> inverse_geometric(arm, T, {"L1": 1.0}).message
    'no solution: the pose is out of reach'
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown IGM method {method!r}; use one of {', '.join(METHODS)}")
    T = numpy.asarray(T, dtype=float)
    if T.shape != (4, 4):
        raise KaneRobotError(f"the pose T must be a 4x4 matrix, got shape {T.shape}")
    end = chain_end(robot, end)
    refuse_redundant(robot, end)  # a continuum of solutions: no set to list
    if method == "auto" and _is_6r(robot, end) and not _decoupled(robot, end):
        # general geometry: Paul's search would end without a closed form,
        # slowly; special geometry (UR-like parallel axes) makes the
        # elimination degenerate, and then Paul's method is the one
        sols = _general_6r(robot, T, values, tol, end)
        if not sols.degenerate:
            return sols
    if method in ("auto", "paul", "pieper"):
        try:
            return _compiled(robot, method, values, tol, end)(T)
        except NoClosedForm:
            if method != "auto":
                raise
            method = "general" if _is_6r(robot, end) else "numeric"
    if method == "general":
        sols = _general_6r(robot, T, values, tol, end)
        if sols.degenerate:
            structure = _decoupled_name(robot, end)
            why = (
                f"the general 6R method does not apply to the geometry of {robot.name}"
                + (f" ({structure})" if structure else " (special geometry: parallel or intersecting axes)")
                + ": its elimination is degenerate, so solutions are missing"
            )
            if not sols:
                raise KaneRobotError(f"{why}; use method='auto' (Paul's or Pieper's closed form) or 'numeric'")
            sols.message = f"{len(sols)} solution(s), perhaps not all: {why}; method='auto' finds them all"
        return sols
    model = num.ChainModel(robot, end, values)
    rng = numpy.random.default_rng(0) if rng is None else rng
    sols = num.numeric_inverse(model, T, starts=starts, rng=rng, tol=tol)
    return Solutions(sols, [()] * len(sols), "numeric")


_SOLVERS: dict[tuple, Callable] = {}


def _general_6r(robot, T, values, tol, end):
    """:func:`~kanerobot.igm.general6r.general_6r_inverse`, imported on first use:
    general6r loads scipy.linalg (about 0.14 s), which ``import kanerobot``
    would otherwise pay for every robot (no import cycle: general6r imports
    nothing of this module)."""
    from kanerobot.igm.general6r import general_6r_inverse

    return general_6r_inverse(robot, T, values, tol=tol, end=end)


def _compiled(robot, method, values, tol, end):
    key = (robot, method, tuple(sorted((str(k), float(v)) for k, v in (values or {}).items())), tol, end)
    if key not in _SOLVERS:
        if len(_SOLVERS) > 64:
            _SOLVERS.clear()
        _SOLVERS[key] = derive_igm(robot, method, end).solver(values, tol)
    return _SOLVERS[key]


def _decoupled(robot, end):
    return _decoupled_name(robot, end) is not None


def _decoupled_name(robot, end):
    # joint offsets turn a joint about or shift it along its own axis: the
    # structure (concurrent axes, prismatic joints) is the robot's without them
    return decoupled_structure(robot.without_offsets(), robot.root_path(end))


def _is_6r(robot, end):
    """Whether the general 6R method applies: six revolute Khalil-Kleinfinger
    frames from the base to ``end`` and nothing else (General6R's own
    condition; a general-frame 6R arm goes to Paul's method or the numeric one)."""
    chain = [robot.frame(label) for label in robot.root_path(end)]
    return len(chain) == 6 and all(isinstance(f.joint, joints.Revolute) and f.is_kk for f in chain)
