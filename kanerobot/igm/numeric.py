"""Numeric inverse geometric model: damped least squares on the Jacobian.

:class:`ChainModel` evaluates a chain (base to terminal frame) with numpy:
the pose ``0T_n(q)`` and the geometric Jacobian (linear rows first, as in
:func:`kanerobot.kinematics.jacobian`).  :func:`damped_least_squares` drives
one start to the pose; :func:`numeric_inverse` runs many starts and keeps
every distinct converged solution: the fallback for robots no closed form
covers, and an independent check of the closed forms.
"""

import numpy
import sympy

from kanerobot.errors import ParameterError
from kanerobot.robot import joints


class ChainModel:
    """Numeric pose and Jacobian of the chain from the base to ``end``.

    Parameters
    ----------
    robot : Robot
    end : str
        Terminal frame label.
    values : dict str -> float
        Geometric parameters.

    Attributes
    ----------
    columns : list of int
        Index in ``robot.joint_labels`` of each joint of the chain.
    revolute : numpy.ndarray of bool, shape (len(columns),)

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> model = ChainModel(arm, "2", {"L1": 0.5})
    >>> model.pose([0.0, 0.0])[:3, 3].tolist()
    [0.5, 0.0, 0.0]
    """

    def __init__(self, robot, end, values):
        names = {str(k): float(v) for k, v in (values or {}).items()}
        labels = list(robot.joint_labels)
        self.robot = robot
        self.frames = []
        self.columns = []
        for label in robot.root_path(end):
            frame = robot.frame(label)
            A = sympy.Matrix(frame.transform())
            q = frame.q
            free = A.free_symbols - ({q} if q is not None else set())
            missing = sorted(str(s) for s in free if str(s) not in names)
            if missing:
                raise ParameterError(f"robot {robot.name}: no value for {', '.join(missing)}; give them in values")
            A = A.xreplace({s: sympy.Float(names[str(s)]) for s in free})
            column = labels.index(label) if frame.is_joint else None
            axis = numpy.array(frame.axis, dtype=float).reshape(3)
            self.frames.append((_frame_function(A, q, frame.joint, axis), column, frame.joint, axis))
            if column is not None:
                self.columns.append(column)
        self._pose = None
        path = [robot.frame(label).transform() for label in robot.root_path(end)]
        if not any(sympy.Matrix(A).atoms(sympy.Float) for A in path):
            # exact geometry (pi/2 twists ...): the symbolic product stays
            # small, and one compiled function is the fastest pose
            product = sympy.eye(4)
            for A in path:
                product = product * sympy.Matrix(A)
            product = product.xreplace({s: sympy.Float(names[str(s)]) for s in product.free_symbols if str(s) in names})
            all_q = [robot.frame(label).q for label in labels]
            self._pose = sympy.lambdify([all_q], product[:3, :].tolist(), "math", cse=True)
        self.revolute = numpy.array(
            [isinstance(robot.frame(labels[c]).joint, joints.Revolute) for c in self.columns], dtype=bool
        )

    def revolute_mask(self):
        """Boolean mask over ``robot.joint_labels``: True for revolute joints."""
        return numpy.array([isinstance(self.robot.frame(label).joint, joints.Revolute) for label in self.robot.joint_labels])

    def _walk(self, q):
        q = numpy.asarray(q, dtype=float)
        T = numpy.eye(4)
        axes = []
        for f, column, joint, axis in self.frames:
            T = T @ f(q[column] if column is not None else 0.0)
            if column is not None:
                axes.append((T[:3, 3].copy(), T[:3, :3] @ axis, joint))
        return T, axes

    def pose(self, q):
        """0T_n, shape (4, 4), for the full joint vector ``q`` (nj,)."""
        if self._pose is None:
            return self._walk(q)[0]
        T = numpy.eye(4)
        T[:3, :] = self._pose([float(x) for x in q])
        return T

    def jacobian(self, q):
        """Pose and geometric Jacobian, shape (6, len(columns)): rows
        ``[v; w]`` of the terminal origin in frame 0."""
        T, axes = self._walk(q)
        J = numpy.zeros((6, len(axes)))
        for k, (p, z, joint) in enumerate(axes):
            if isinstance(joint, joints.Revolute):
                J[:3, k] = numpy.cross(z, T[:3, 3] - p)
                J[3:, k] = z
            else:
                J[:3, k] = z
        return T, J


def _motion(joint, axis, q):
    """4x4 motion of ``joint`` (a joint model): rotation about or translation along ``axis``."""
    M = numpy.eye(4)
    if isinstance(joint, joints.Revolute):
        c, s = numpy.cos(q), numpy.sin(q)
        K = numpy.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        M[:3, :3] += s * K + (1 - c) * (K @ K)
    elif isinstance(joint, joints.Prismatic):
        M[:3, 3] = axis * q
    return M


def _frame_function(A, q, joint, axis):
    """``q -> A(q)`` as ``A(0) @ motion(q)`` (exact for the joint models of
    :mod:`kanerobot.robot.joints`, checked here), else a lambdified matrix."""
    if q is None:
        fixed = numpy.array(A.evalf(), dtype=float)
        return lambda value: fixed
    A0 = numpy.array(A.xreplace({q: 0}).evalf(), dtype=float)
    probe = 0.37
    if numpy.allclose(A0 @ _motion(joint, axis, probe), numpy.array(A.xreplace({q: probe}).evalf(), dtype=float),
                      atol=1e-12):
        return lambda value: A0 @ _motion(joint, axis, value)
    f = sympy.lambdify([q], A, "numpy")
    return lambda value: numpy.array(f(value), dtype=float)


def pose_error(T, target):
    """6-vector [dp; dr]: position error and rotation error (axis * angle,
    small angle) from ``T`` to ``target``, in frame 0."""
    dp = target[:3, 3] - T[:3, 3]
    R = target[:3, :3] @ T[:3, :3].T
    dr = 0.5 * numpy.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return numpy.concatenate([dp, dr])


def pose_distance(T, target):
    """Largest absolute difference of the top three rows."""
    return float(numpy.max(numpy.abs(numpy.asarray(T)[:3, :] - numpy.asarray(target)[:3, :])))


def damped_least_squares(model, target, q0, damping=1e-3, tol=1e-12, max_iter=200):
    """Drive ``q0`` to the pose ``target`` by damped least squares.

    ``dq = J^T (J J^T + lambda^2 I)^-1 e`` with the damping dropped near the
    solution (a Gauss-Newton finish), for a fast and exact last digits.

    Returns
    -------
    (numpy.ndarray (nj,), float)
        The joint vector and its :func:`pose_distance` to ``target``.
    """
    q = numpy.array(q0, dtype=float)
    cols = model.columns
    history = []
    for _ in range(max_iter):
        T, J = model.jacobian(q)
        e = pose_error(T, target)
        err = float(numpy.max(numpy.abs(e)))
        if err < tol:
            break
        history.append(err)
        if len(history) > 30 and err > 0.9 * history[-30]:
            break  # stalled at a local minimum of the error: a start that leads nowhere
        lam2 = damping**2 if err > 1e-6 else 0.0
        dq = J.T @ numpy.linalg.solve(J @ J.T + (lam2 + 1e-14) * numpy.eye(6), e)
        step = numpy.max(numpy.abs(dq))
        if step > 0.5:  # stay in the region where the linearisation holds
            dq *= 0.5 / step
        q[cols] += dq
    return q, pose_distance(model.pose(q), target)


def numeric_inverse(model, target, starts=64, rng=None, tol=1e-10, bounds=3.0):
    """All distinct solutions that damped least squares finds from random starts.

    Parameters
    ----------
    model : ChainModel
    target : array (4, 4)
    starts : int
        Number of random starts (angles uniform in [-pi, pi], lengths in
        [-bounds, bounds]).
    rng : numpy.random.Generator, optional
    tol : float
        Largest accepted :func:`pose_distance`.

    Returns
    -------
    list of numpy.ndarray (nj,)
        Distinct solutions, angles wrapped to (-pi, pi].

    Examples
    --------
    >>> import numpy, kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> model = ChainModel(arm, "2", {"L1": 1.0})
    >>> sols = numeric_inverse(model, model.pose([0.3, 0.5]), starts=8, rng=numpy.random.default_rng(0))
    >>> [s.round(6).tolist() for s in sols]
    [[0.3, 0.5]]
    """
    rng = numpy.random.default_rng() if rng is None else rng
    n = len(model.robot.joint_labels)
    found = []
    for _ in range(starts):
        q0 = numpy.zeros(n)
        k = len(model.columns)
        q0[model.columns] = numpy.where(model.revolute, rng.uniform(-numpy.pi, numpy.pi, k),
                                        rng.uniform(-bounds, bounds, k))
        q, err = damped_least_squares(model, target, q0)
        if err <= tol:
            found.append(q)
    return unique_solutions(found, model.revolute_mask())


def wrap(q, revolute):
    """Angles of ``q`` wrapped to (-pi, pi]; lengths unchanged."""
    q = numpy.array(q, dtype=float)
    w = numpy.mod(q[revolute] + numpy.pi, 2 * numpy.pi) - numpy.pi
    w[w <= -numpy.pi + 1e-15] = numpy.pi
    q[revolute] = w
    return q


def unique_solutions(solutions, revolute, tol=1e-7):
    """Wrap and drop repetitions (angles compared modulo 2 pi)."""
    out: list[numpy.ndarray] = []
    for q in solutions:
        q = wrap(q, revolute)
        if all(joint_distance(q, p, revolute) > tol for p in out):
            out.append(q)
    return out


def joint_distance(a, b, revolute):
    """Largest difference between joint vectors ``a`` and ``b``, revolute ones
    (where the boolean mask ``revolute`` is set) taken modulo 2 pi."""
    d = numpy.abs(a - b)
    d[revolute] = numpy.minimum(d[revolute], 2 * numpy.pi - d[revolute])
    return float(numpy.max(d)) if len(d) else 0.0
