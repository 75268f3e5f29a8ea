"""Redundant chains: more joints than the task has components.

A chain of n joints placing a frame at a pose (m = 6 components), or at m
rows of it (a position: 3), is redundant when n > m: the configurations
reaching a pose form an (n - m)-dimensional continuum (the self-motion),
not a finite set.  :func:`~kanerobot.igm.api.inverse_geometric`, which
lists every solution, refuses such a chain with :class:`RedundantChain`
(the degree of redundancy, and the way out); :func:`redundant_ik` returns
one configuration, chosen by a secondary objective (a preferred posture,
by default the middle of the joint limits: Liegeois' joint-limit
avoidance) minimised in the null space of the task Jacobian, as Robotics
Toolbox's ``ik_LM`` and pinocchio's CLIK tutorial do.  It iterates on the
numeric chain model of the numeric IGM (:class:`~kanerobot.igm.numeric.ChainModel`:
pose and geometric Jacobian).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy
from numpy.typing import ArrayLike

from kanerobot.errors import KaneRobotError
from kanerobot.geometry import check_count, terminal_frame
from kanerobot.igm import numeric as num
from kanerobot.kinematics import path_joints
from kanerobot.robot.description import Robot

__all__ = ["NoConvergence", "RedundantChain", "RedundantSolution", "chain_end", "redundancy", "redundant_ik", "refuse_redundant"]

#: The components of the pose error :func:`~kanerobot.igm.numeric.pose_error`: 0-2 position, 3-5 orientation.
POSE_ROWS = (0, 1, 2, 3, 4, 5)


class RedundantChain(KaneRobotError):
    """The chain to the frame has more joints than the task has components.

    Attributes
    ----------
    chain : tuple of str
        Labels of the joints moving the frame.
    joints, task, redundancy : int
        Their number, the task's components, and the degree of redundancy
        ``joints - task`` (the dimension of the continuum of solutions).
    """

    def __init__(self, robot_name: str, frame: str, chain: Sequence[str], task: int = 6) -> None:
        self.chain = tuple(chain)
        self.joints, self.task = len(self.chain), task
        self.redundancy = self.joints - task
        super().__init__(
            f"robot {robot_name}: {self.joints} joints ({', '.join(self.chain)}) move frame {frame}, for the {task} "
            f"components of a pose: the chain is redundant (degree of redundancy {self.redundancy}), the configurations "
            f"placing the frame at a pose form a {self.redundancy}-dimensional continuum, not a finite set to list; "
            f"solve a pose for one configuration with kr.redundant_ik(robot, T, values, end={frame!r}) "
            f"(damped least squares, a preferred posture and the joint limits in the null space)"
        )


class NoConvergence(KaneRobotError):
    """:func:`redundant_ik` did not reach the pose; ``residual`` and ``iterations`` say how far it got."""

    def __init__(self, message: str, residual: float, iterations: int) -> None:
        super().__init__(message)
        self.residual = residual
        self.iterations = iterations


@dataclass(frozen=True)
class RedundantSolution:
    """One configuration of a redundant chain reaching a pose (:func:`redundant_ik`).

    Attributes
    ----------
    q : numpy.ndarray, shape (nj,)
        Every joint, ``robot.joint_labels`` order (those off the chain as in ``q0``).
    residual : float
        Largest error left: :func:`~kanerobot.igm.numeric.pose_distance`
        for a full pose, the largest task row of the pose error otherwise.
    iterations : int
        Jacobian evaluations of the start that reached the pose (both phases).
    starts : int
        Starts tried: 1 when ``q0`` led to the pose.
    redundancy : int
        Joints of the chain less task components.
    posture_distance : float
        ``|S^-1 (q - q_p)|`` over the chain's joints (``S``: the joint ranges).
    stationary : bool
        True when the descent's step vanished (below 1e-10): ``q`` is a
        local minimum of that distance on the self-motion (always with
        ``gain=0``, which does not descend); False when ``max_iter``
        ended the descent (the pose is reached all the same).
    """

    q: numpy.ndarray
    residual: float
    iterations: int
    starts: int
    redundancy: int
    posture_distance: float
    stationary: bool


def redundancy(robot: Robot, end: str | None = None, rows: Sequence[int] | None = None) -> int:
    """Degree of redundancy of the chain to ``end`` for a task: joints less task components.

    Parameters
    ----------
    robot : Robot
    end : str, optional
        Default :func:`kanerobot.geometry.terminal_frame`.
    rows : sequence of int, optional
        Task rows of the pose error (0-2 position, 3-5 orientation); default all 6.

    Examples
    --------
    >>> import kanerobot as kr
    >>> redundancy(kr.load(kr.frames_path("arm7"))), redundancy(kr.load(kr.frames_path("rx90")))
    (1, 0)
    >>> redundancy(kr.load(kr.frames_path("planar2")), rows=[0])   # 2 joints for a coordinate
    1
    """
    end = chain_end(robot, end)
    return len(path_joints(robot, end)) - len(_task_rows(rows))


def refuse_redundant(robot: Robot, end: str | None = None) -> None:
    """Raise :class:`RedundantChain` when the chain to ``end`` has more than 6 joints
    (the inverse geometric model lists solutions: a redundant chain has a continuum)."""
    end = chain_end(robot, end)
    chain = path_joints(robot, end)
    if len(chain) > len(POSE_ROWS):
        raise RedundantChain(robot.name, end, chain, len(POSE_ROWS))


def chain_end(robot: Robot, end: str | None) -> str:
    """The label of frame ``end`` (checked), or the robot's terminal frame."""
    return terminal_frame(robot) if end is None else robot.frame(end).label


def redundant_ik(
    robot: Robot,
    T: ArrayLike,
    values: Mapping[str, float] | None = None,
    q0: ArrayLike | None = None,
    *,
    end: str | None = None,
    rows: Sequence[int] | None = None,
    posture: ArrayLike | None = None,
    gain: float = 1.0,
    limits: bool = True,
    damping: float = 1e-3,
    tol: float = 1e-10,
    max_iter: int = 500,
    restarts: int = 50,
    rng: numpy.random.Generator | None = None,
) -> RedundantSolution:
    """One configuration placing frame ``end`` at the pose ``T``, near a preferred posture.

    Damped least squares to the pose, then a descent towards the posture in
    the null space of the task Jacobian.  In the joint coordinates scaled
    by the joint ranges, ``x = S^-1 q`` with ``S = diag(upper - lower)``
    (``2 pi`` for a revolute joint without limits, 1 m for a prismatic
    one), ``J_x = J S`` (m, n) the task rows of the geometric Jacobian and
    ``e`` (m,) those of the pose error ``[dp; dr]``, a step is::

        reach:    dx = J_x^T (J_x J_x^T + lambda^2 I)^-1 e       until |e| < 1e-12
        descend:  dx = alpha (I - J_x^+ J_x) S^-1 (q_p - q)      then reach again (|e| < 1e-15)
                  q <- q + S dx                                  (n,)

    The descent step is minus the gradient of ``h = |S^-1 (q - q_p)|^2 / 2``
    projected into the null space of ``J_x`` (Liegeois' gradient
    projection), so that the descent ends, when that projection is below
    1e-10, at a local minimum of ``h`` on the self-motion: joint-limit
    avoidance when ``q_p`` is the middle of the limits.  Wampler's damping
    ``lambda`` is dropped once ``|e| < 1e-6`` (a Gauss-Newton finish).
    ``alpha`` is ``gain`` at first, then Barzilai and Borwein's secant step
    length, halved for a step that does not bring ``q_p`` nearer.  Steps are
    cut to 0.5 (reach) and 0.2 (descent) per joint, and a joint a step
    would take past a limit is held for that step (its column left out of
    ``J_x``).  The method is local: when ``q0`` does not lead to the pose
    (the error stalls, no 10 % progress in 30 steps, or ``max_iter``
    steps), random starts follow (uniform within the limits, angles
    without limits in (-pi, pi], other joints within 1 of the posture), at
    most ``restarts`` of them.

    Parameters
    ----------
    robot : Robot
    T : array_like, shape (4, 4)
        The pose of frame ``end`` in frame 0 (only its ``rows`` count).
    values : dict str -> float, optional
        Geometric parameters; default ``robot.values`` (a URDF's lengths).
    q0 : array_like, shape (nj,), optional
        First start, ``robot.joint_labels`` order; default the posture.
    end : str, optional
        Default :func:`kanerobot.geometry.terminal_frame`.
    rows : sequence of int, optional
        Task rows of the pose error: 0-2 position, 3-5 orientation (the
        skew part of the rotation error, ``sin(angle) axis``); default all 6.
    posture : array_like, shape (nj,), optional
        Preferred configuration ``q_p``; default the middle of the joint
        limits (``robot.limits``, a URDF's ``<limit>``), ``q0`` for joints without.
    gain : float
        First step length ``alpha`` of the descent; 0: no descent (plain
        damped least squares, the pose reached from ``q0``).
    limits : bool
        Use ``robot.limits``: iterates stay within them, and they set ``S``
        and the default posture.
    damping : float
        ``lambda``.
    tol : float
        Largest residual accepted (:attr:`RedundantSolution.residual`).
    max_iter : int
        Jacobian evaluations of each phase of a start, at most.
    restarts : int
        Random starts after ``q0``, at most.
    rng : numpy.random.Generator, optional
        Their generator (default ``numpy.random.default_rng(0)``).

    Returns
    -------
    RedundantSolution
        ``q`` (nj,), ``residual``, ``iterations``, ``starts``, ``redundancy``,
        ``posture_distance``, ``stationary``.

    Raises
    ------
    NoConvergence
        When no start reaches the residual ``tol`` (a pose out of reach):
        the smallest residual and the iterations spent.

    Examples
    --------
    A planar 3R arm (unit links, tool frame 4) placing its tool at a point,
    a 2-row task (x, y): redundancy 1; the solution nearest the straight arm
    ``q_p = 0`` (no limits: ``S = 2 pi I``):

    >>> import numpy, sympy, kanerobot as kr
    >>> th = sympy.symbols("th1:4")
    >>> arm = kr.Robot.create("planar3", [
    ...     kr.Frame("1", "0", 0, 1, kr.KKPlacement(theta=th[0])),
    ...     kr.Frame("2", "1", 0, 1, kr.KKPlacement(d=1, theta=th[1])),
    ...     kr.Frame("3", "2", 0, 1, kr.KKPlacement(d=1, theta=th[2])),
    ...     kr.Frame("4", "3", 2, 0, kr.KKPlacement(d=1))])
    >>> T = numpy.eye(4)
    >>> T[:2, 3] = [1.5, 1.0]
    >>> sol = redundant_ik(arm, T, {}, q0=[0.0, 0.5, 0.5], rows=[0, 1], posture=[0.0, 0.0, 0.0])
    >>> sol.redundancy, sol.residual < 1e-12, sol.stationary, sol.starts
    (1, True, True, 1)
    >>> kr.geometry.numeric_transform(arm, "0", "4", {})(sol.q)[:2, 3].round(12).tolist()
    [1.5, 1.0]
    >>> sol.q.round(4).tolist()   # a scan of the self-motion finds the same smallest |q|
    [-0.4599, 0.9625, 1.3442]
    """
    target = numpy.asarray(T, dtype=float)
    if target.shape != (4, 4):
        raise KaneRobotError(f"the pose T must be a 4x4 matrix, got shape {target.shape}")
    end = chain_end(robot, end)
    task = _task_rows(rows)
    model = _chain_model(robot, end, robot.values if values is None else values)
    chain = _Chain(robot, model, limits)
    q0 = chain.start(q0, posture)
    posture = chain.posture(posture, q0)
    rng = numpy.random.default_rng(0) if rng is None else rng
    best, spent = numpy.inf, 0
    for start in range(restarts + 1):
        run = _Iterations(model, chain, target, task, damping, max_iter)
        q, err = run.reach(q0 if start == 0 else chain.random(posture, rng), max_iter)
        q, stationary = run.descend(q, posture, gain) if gain > 0 and err < 1e-12 else (q, gain == 0)
        spent += run.jacobians
        e, _ = run.error(q)
        residual = num.pose_distance(model.pose(q), target) if len(task) == 6 else float(numpy.max(numpy.abs(e)))
        if residual <= tol:
            q = num.wrap(q, chain.wrapped)
            redundant = len(model.columns) - len(task)
            return RedundantSolution(q, residual, run.jacobians, start + 1, redundant, chain.distance(q, posture), stationary)
        best = min(best, residual)
    raise NoConvergence(
        f"redundant_ik: frame {end} of {robot.name} does not reach the pose: smallest residual {best:.3g} (tol {tol:g}) "
        f"after {spent} iterations from {restarts + 1} starts (q0 and {restarts} random ones): the pose is out of reach"
        + (" or of the joint limits (limits=False ignores them)" if chain.limited.any() else ""),
        best,
        spent,
    )


_MODELS: dict[tuple, num.ChainModel] = {}


def _chain_model(robot, end, values):
    """:class:`~kanerobot.igm.numeric.ChainModel`, kept for the next pose: building
    one compiles the chain's pose (0.2 s for arm7), ten times a solution's iterations."""
    key = (robot, end, tuple(sorted((str(k), float(v)) for k, v in (values or {}).items())))
    if key not in _MODELS:
        if len(_MODELS) > 16:
            _MODELS.clear()
        _MODELS[key] = num.ChainModel(robot, end, values)
    return _MODELS[key]


class _Iterations:
    """The two phases of :func:`redundant_ik` from one start; ``jacobians`` counts the work."""

    def __init__(self, model, chain, target, task, damping, budget):
        self.model, self.chain, self.target, self.task = model, chain, target, task
        self.damping, self.budget, self.jacobians = damping, budget, 0

    def error(self, q):
        """The task rows of the pose error, and the Jacobian's."""
        self.jacobians += 1
        pose, J = self.model.jacobian(q)
        return num.pose_error(pose, self.target)[self.task], J[self.task]

    def reach(self, q, budget, goal=1e-12):
        """Damped least squares to the pose (no posture), until the task error is
        below ``goal``: ``(q, largest task error)``."""
        q, history, zero = q.copy(), [], numpy.zeros(len(self.chain.columns))
        for _ in range(budget):
            e, J = self.error(q)
            err = float(numpy.max(numpy.abs(e)))
            history.append(err)
            stalled = err > 1e-6 and len(history) > 30 and err > 0.9 * history[-31]
            if err < goal or stalled:  # met, or a local minimum of the error: a start that leads nowhere
                return q, err
            self.move(q, self.chain.held_step(q, J, e, zero, self.damping**2 if err > 1e-6 else 0.0))
        e, _ = self.error(q)
        return q, float(numpy.max(numpy.abs(e)))

    def descend(self, q, posture, gain):
        """Towards the posture along the self-motion: ``(q, stationary)``.

        A step is ``alpha`` times the null-space term (cut to 0.2 per joint),
        then a Gauss-Newton return to the pose.  It is taken when it brings
        the posture nearer and, close to the end (a null-space term below
        1e-8, where the distance changes by its rounding), when the next
        null-space term is smaller; otherwise ``alpha`` is halved.  After a
        step taken, ``alpha`` is Barzilai and Borwein's secant estimate (the
        self-motion is curved: the unit step of a flat one may overshoot, or
        crawl); ``gain`` is the first."""
        chain, limit, alpha = self.chain, self.jacobians + self.budget, gain
        null = self.null_step(q, posture)
        while self.jacobians < limit and alpha > 1e-12:
            size = numpy.max(numpy.abs(null), initial=0.0)
            if size < 1e-10:
                return q, True
            moved = q.copy()
            self.move(moved, alpha * null * min(1.0, 0.2 / (alpha * size)))
            # back to the pose to the last digits: the drift a step leaves
            # would otherwise pile up, step after step
            moved, err = self.reach(moved, 10, goal=1e-15)
            after = self.null_step(moved, posture)
            nearer = chain.distance(moved, posture) <= chain.distance(q, posture) * (1 + 1e-15)
            smaller = numpy.linalg.norm(after / chain.scale) < numpy.linalg.norm(null / chain.scale)
            if err < 1e-12 and nearer and (size > 1e-8 or smaller):
                alpha = _secant(chain.difference(moved, q) / chain.scale, (null - after) / chain.scale, alpha)
                q, null = moved, after
            else:
                alpha /= 2
        return q, False

    def null_step(self, q, posture):
        """The null-space term at ``q`` (joints at a limit it would cross held)."""
        e, J = self.error(q)
        return self.chain.held_step(q, J, numpy.zeros_like(e), self.chain.difference(posture, q) / self.chain.scale, 0.0)

    def move(self, q, dq):
        cols = self.model.columns
        q[cols] = numpy.clip(q[cols] + dq, self.chain.lower, self.chain.upper)


def _secant(step, change, alpha):
    """Barzilai-Borwein step length ``s.s / s.y`` of a step ``s`` that changed minus
    the gradient by ``-y``; twice ``alpha`` where the curvature is not positive."""
    curvature = float(step @ change)
    if curvature <= 0:
        return 2 * alpha
    return min(float(step @ step) / curvature, 1e3)


def _null_space_step(J, e, z, S, free, lam2):
    """The formula of :func:`redundant_ik` in joint units, the joints not ``free``
    held (their columns left out, their steps 0): the damped task step plus
    the projection of ``z`` into the null space of the task Jacobian."""
    U, s, Vt = numpy.linalg.svd(J[:, free] * S[free], full_matrices=False)
    rank = s > 1e-10 * numpy.max(s, initial=1e-300)
    V = Vt[rank].T
    dq = numpy.zeros(len(S))
    dq[free] = S[free] * (V @ (s[rank] / (s[rank] ** 2 + lam2) * (U[:, rank].T @ e)) + z[free] - V @ (V.T @ z[free]))
    return dq


class _Chain:
    """The joints of the chain: their limits (``lower``, ``upper``, +-inf without),
    ranges ``scale``, the angles without limits (``angle``; ``wrapped`` over every joint)."""

    def __init__(self, robot, model, limits):
        self.robot, self.columns = robot, model.columns
        given = [robot.limits.get(robot.joint_labels[c]) if limits else None for c in model.columns]
        self.lower = numpy.array([-numpy.inf if g is None or g.lower is None else g.lower for g in given])
        self.upper = numpy.array([numpy.inf if g is None or g.upper is None else g.upper for g in given])
        self.limited = numpy.isfinite(self.lower) & numpy.isfinite(self.upper)
        self.middle = numpy.zeros(len(self.columns))
        self.middle[self.limited] = (self.lower[self.limited] + self.upper[self.limited]) / 2
        self.scale = numpy.where(self.limited, self.upper - self.lower, numpy.where(model.revolute, 2 * numpy.pi, 1.0))
        self.scale[self.scale <= 0] = 1.0  # a joint locked by its limits: lower == upper
        # angles without limits are compared and returned modulo 2 pi
        self.angle = model.revolute & ~numpy.isfinite(self.lower) & ~numpy.isfinite(self.upper)
        self.wrapped = numpy.zeros(robot.nj, dtype=bool)
        self.wrapped[self.columns] = self.angle

    def start(self, q0, posture):
        """``q0`` checked, else the posture, else the middle of the limits (0 without)."""
        if q0 is None and posture is not None:
            return self._vector(posture, "posture")
        if q0 is None:
            q = numpy.zeros(self.robot.nj)
            q[self.columns] = self.middle
            return q
        return self._vector(q0, "q0")

    def posture(self, posture, q0):
        """The preferred posture: given, else the middle of the limits, ``q0`` without."""
        if posture is not None:
            return self._vector(posture, "posture")
        q = q0.copy()
        q[self.columns] = numpy.where(self.limited, self.middle, q0[self.columns])
        return q

    def random(self, posture, rng):
        """A random start: uniform within the limits, angles without in (-pi, pi], other joints within 1 of the posture."""
        near = posture[self.columns]
        low = numpy.where(self.angle, -numpy.pi, numpy.maximum(self.lower, near - 1.0))
        high = numpy.where(self.angle, numpy.pi, numpy.minimum(self.upper, near + 1.0))
        low[self.limited], high[self.limited] = self.lower[self.limited], self.upper[self.limited]
        q = posture.copy()
        q[self.columns] = rng.uniform(low, high)
        return q

    def held_step(self, q, J, e, z, lam2):
        """:func:`_null_space_step`, cut to 0.5 per joint (where the linearisation
        holds); the joints it would take past a limit held, until none is."""
        q = q[self.columns]
        free = numpy.ones(len(q), dtype=bool)
        while True:
            dq = _null_space_step(J, e, z, self.scale, free, lam2)
            largest = numpy.max(numpy.abs(dq), initial=0.0)
            if largest > 0.5:
                dq *= 0.5 / largest
            past = free & ((q + dq < self.lower) | (q + dq > self.upper))
            if not past.any():
                return dq
            free &= ~past

    def difference(self, a, b):
        """``a - b`` on the chain's joints, angles without limits taken in (-pi, pi]."""
        d = a[self.columns] - b[self.columns]
        d[self.angle] = numpy.mod(d[self.angle] + numpy.pi, 2 * numpy.pi) - numpy.pi
        return d

    def distance(self, q, posture):
        return float(numpy.linalg.norm(self.difference(q, posture) / self.scale))

    def _vector(self, given, what):
        q = numpy.asarray(given, dtype=float).reshape(-1)
        check_count(q, self.robot.joint_labels, what)
        if not numpy.all(numpy.isfinite(q)):
            raise KaneRobotError(f"{what} has a value that is not a finite number: {q.tolist()}")
        return q


def _task_rows(rows):
    """The task rows, checked: distinct integers in 0..5."""
    if rows is None:
        return list(POSE_ROWS)
    task = list(rows)
    if not task or len(set(task)) != len(task) or not all(isinstance(r, (int, numpy.integer)) and r in POSE_ROWS for r in task):
        raise KaneRobotError(f"rows={list(rows)!r}: give distinct task rows of the pose error among 0-2 (position) and 3-5 (orientation)")
    return task
