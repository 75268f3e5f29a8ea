"""Geometric models: transforms between frames, the direct geometric model,
the geometric constraint equations of closed loops and their numeric solution
(SYMORO+ section 3).

Every transform is built from the joint models of
:mod:`kanerobot.robot.joints` through :meth:`Frame.transform`, so this module
never looks at sigma.  Notation (SYMORO+ eq. 1-a)::

    iT_j = [ iA_j  iP_j ]     iA_j: 3x3 orientation of frame j in frame i
           [ 0 0 0   1  ]     iP_j: 3x1 position of the origin of j in frame i

and, for a frame j on its antecedent a(j), ``a(j)T_j(q_j)`` from the frame's
placement.  Labels are strings; ``'0'`` is the base.
"""

import numpy
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot import joints
from kanerobot.robot.names import BASE

__all__ = [
    "transform",
    "rotation",
    "position",
    "inverse_transform",
    "direct_geometric_model",
    "fast_geometric_model",
    "loop_constraints",
    "loop_constraint_matrices",
    "solve_loops",
    "loop_solver",
    "numeric_transform",
    "numeric_function",
    "terminal_frame",
]


# ----------------------------------------------------------------- symbolic
def inverse_transform(T):
    """Inverse of a 4x4 homogeneous transform without a matrix inversion.

    Parameters
    ----------
    T : sympy.Matrix, shape (4, 4)
        ``[R P; 0 1]`` with R a rotation.

    Returns
    -------
    sympy.Matrix, shape (4, 4)
        ``[R^T, -R^T P; 0 1]``.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.joints import homogeneous, rot_z
    >>> t = sympy.Symbol("t")
    >>> T = homogeneous(rot_z(t), [1, 2, 3])
    >>> sympy.simplify(inverse_transform(T) * T) == sympy.eye(4)
    True
    """
    T = sympy.Matrix(T)
    R, P = T[:3, :3], T[:3, 3]
    out = sympy.eye(4)
    out[:3, :3] = R.T
    out[:3, 3] = -R.T * P
    return out


def transform(robot, i, j, simplify=False, cache=None):
    """Transform iT_j between any two frames of the tree.

    The path goes from frame ``i`` up to the common ancestor of ``i`` and
    ``j`` (multiplying by the inverses ``(a(k)T_k)^-1`` of the frames climbed)
    and then down to ``j``::

        iT_j = (a(i)T_i)^-1 ... (a(c)T_c)^-1 * c'T_.. ... a(j)T_j

    Parameters
    ----------
    robot : Robot
    i, j : str or int
        Frame labels; ``'0'`` is the base.
    simplify : bool, optional
        Apply :func:`sympy.trigsimp` to each entry (slow for long chains).
    cache : dict, optional
        A dict that the caller keeps for many calls on one robot (the
        columns of a Jacobian): every partial product ``iT_k`` of the path is
        stored in it and reused by the next calls, which return the same
        expressions as without it.

    Returns
    -------
    sympy.Matrix, shape (4, 4)
        Function of the joint variables on the path and of the geometric
        parameters.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> transform(arm, "0", "2", simplify=True)[:2, 3].T
    Matrix([[L1*cos(th1), L1*sin(th1)]])
    >>> transform(arm, "2", "1", simplify=True)[:2, 3].T
    Matrix([[-L1*cos(th2), L1*sin(th2)]])
    """
    T = _path_product(robot, str(i), str(j), {} if cache is None else cache)
    return T.applyfunc(sympy.trigsimp) if simplify else T.copy()


def _path_product(robot, i, j, cache):
    """iT_j, the product of :func:`transform` taken left to right; ``cache``
    keeps each partial product iT_k under ``(i, k)`` and each frame's a(k)T_k
    under ``k``."""
    if (i, j) not in cache:
        up, down = robot.path(i, j)
        if down:  # iT_j = iT_a(j) a(j)T_j
            k = down[-1]
            T = _path_product(robot, i, robot.antecedent(k), cache) * _frame_transform(robot, k, cache)
        elif up:  # iT_j = iT_k (jT_k)^-1, k the last frame climbed (a(k) = j)
            k = up[-1]
            T = _path_product(robot, i, k, cache) * inverse_transform(_frame_transform(robot, k, cache))
        else:
            T = sympy.eye(4)
        cache[(i, j)] = T
    return cache[(i, j)]


def _frame_transform(robot, k, cache):
    """a(k)T_k of frame k, kept in ``cache`` under ``k``."""
    if k not in cache:
        cache[k] = sympy.Matrix(robot.frame(k).transform())
    return cache[k]


def rotation(robot, i, j, cache=None):
    """Orientation iA_j of frame j in frame i: the top-left 3x3 block of
    iT_j = ``transform(robot, i, j, cache=cache)``.

    Returns
    -------
    sympy.Matrix, shape (3, 3)
        Its columns are the unit vectors x_j, y_j, z_j in frame i.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1 = sympy.Symbol("th1")
    >>> arm = Robot.create("one", [Frame("1", "0", 0, 1, KKPlacement(alpha=sympy.pi/2, theta=th1))])
    >>> rotation(arm, "0", "1")
    Matrix([
    [cos(th1), -sin(th1),  0],
    [       0,         0, -1],
    [sin(th1),  cos(th1),  0]])
    """
    return transform(robot, i, j, cache=cache)[:3, :3]


def position(robot, i, j, cache=None):
    """Position iP_j of the origin of frame j in frame i: the last column of
    iT_j = ``transform(robot, i, j, cache=cache)``.

    Returns
    -------
    sympy.Matrix, shape (3, 1)

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1, L = sympy.symbols("th1 L")
    >>> arm = Robot.create("one", [Frame("1", "0", 0, 1, KKPlacement(d=L, theta=th1)),
    ...                            Frame("2", "1", 2, 0, KKPlacement(d=L))])
    >>> position(arm, "0", "2").T
    Matrix([[L*cos(th1) + L, L*sin(th1), 0]])
    """
    return transform(robot, i, j, cache=cache)[:3, 3]


def terminal_frame(robot):
    """The end frame of a robot: the only leaf that neither cuts nor closes a loop.

    Returns
    -------
    str
        Its label.

    Raises
    ------
    KaneRobotError
        When the tree has several such leaves (a tree robot), or none (a
        closed loop without a tool, such as ``frames/fourbar.toml``): name
        the frame.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> terminal_frame(arm)
    '2'
    """
    loop_frames = {label for pair in robot.loops for label in pair}
    leaves = [
        f.label for f in robot.frames if not robot.children(f.label) and f.label not in loop_frames
    ]
    if len(leaves) == 1:
        return leaves[0]
    which = f"several end frames ({', '.join(leaves)})" if leaves else "no end frame outside its loops"
    raise KaneRobotError(f"robot {robot.name} has {which}: say which one (end=... in Python, --frame on the command line)")


def direct_geometric_model(robot, end=None, world=False, simplify=False):
    """Direct geometric model 0T_end (SYMORO+ section 3.1).

    Parameters
    ----------
    robot : Robot
    end : str, optional
        The terminal frame; default: :func:`terminal_frame` (the last frame of
        a serial robot, the end of the direct path of a closed-loop robot).
    world : bool, optional
        Prepend the base placement ``Z`` (SYMORO's fT0): ``fT_end = Z 0T_end``.
    simplify : bool, optional
        trigsimp each entry.

    Returns
    -------
    sympy.Matrix, shape (4, 4)

    Notes
    -----
    For a closed-loop robot the result depends on the passive joints of the
    direct path too; :func:`solve_loops` gives them from the active ones.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement, Base
    >>> th1 = sympy.Symbol("th1")
    >>> arm = Robot.create("one", [Frame("1", "0", 0, 1, KKPlacement(d=2, theta=th1))],
    ...                    base=Base.from_values(Z=[1, 0, 0, 5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]))
    >>> direct_geometric_model(arm)[:3, 3].T
    Matrix([[2, 0, 0]])
    >>> direct_geometric_model(arm, world=True)[:3, 3].T
    Matrix([[7, 0, 0]])
    """
    end = terminal_frame(robot) if end is None else str(end)
    T = transform(robot, BASE, end, simplify=simplify)
    if world:
        T = sympy.Matrix(robot.base.Z) * T
    return T


def fast_geometric_model(robot, i=BASE, j=None, trig=True):
    """Fast geometric model: iT_j as a program of intermediate variables
    (SYMORO+ section 3.2).

    The transforms of the path from ``i`` to ``j`` (see :func:`transform`)
    are multiplied one at a time; ``C1 = cos(th1)``, ``S1 = sin(th1)`` are
    named once, each partial product ``iT_k`` is named entry by entry
    (``T0T2_11`` ...; zeros and ones stay numbers), and the 12 entries of
    the top three rows of iT_j are the outputs ``T{i}T{j}_11 ... _34``.

    Parameters
    ----------
    robot : Robot
    i : str, optional
        Start frame, default the base.
    j : str, optional
        End frame, default :func:`terminal_frame`.
    trig : bool, optional
        Apply the program's trigonometric rules (``C23 = C2*C3 - S2*S3``).

    Returns
    -------
    kanerobot.symbolic.program.Program
        Pruned to what the outputs need.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = fast_geometric_model(arm, "0", "2")
    >>> print(program)
    C1 = cos(th1)
    S1 = sin(th1)
    C2 = cos(th2)
    S2 = sin(th2)
    C12 = C1*C2 - S1*S2
    S12 = C1*S2 + C2*S1
    T0T2_11 = C12
    T0T2_12 = -S12
    T0T2_13 = 0
    T0T2_14 = C1*L1
    T0T2_21 = S12
    T0T2_22 = C12
    T0T2_23 = 0
    T0T2_24 = L1*S1
    T0T2_31 = 0
    T0T2_32 = 0
    T0T2_33 = 1
    T0T2_34 = 0
    """
    from kanerobot.symbolic.program import Program

    i = str(i)
    j = terminal_frame(robot) if j is None else str(j)
    up, down = robot.path(i, j)
    steps = [(label, True) for label in up] + [(label, False) for label in down]
    inputs = list(robot.q) + sorted(
        (sympy.Symbol(name) for name in robot.geometric_parameters), key=str
    )
    program = Program(inputs=[s for s in inputs if isinstance(s, sympy.Symbol)], trig=trig)
    stem = {**robot.stems, BASE: BASE}  # names made of the labels' stems: a URDF label may hold '-' or '.'
    T = sympy.eye(4)
    for n, (label, climbing) in enumerate(steps):
        A = sympy.Matrix(robot.frame(label).transform())
        if climbing:
            A = inverse_transform(A)
        reached = robot.antecedent(label) if climbing else label
        T = sympy.Matrix(T * program.replace_sin_cos(A))
        if n < len(steps) - 1:
            T[:3, :] = program.assign_matrix(lambda r, c, reached=reached: f"T{stem[i]}T{stem[reached]}_{r}{c}", T[:3, :])
    program.set_output_matrix(lambda r, c: f"T{stem[i]}T{stem[j]}_{r}{c}", T[:3, :])
    program.prune()
    return program


def loop_constraint_matrices(robot):
    """Loop closure matrices ``k+B T_k`` for each loop, in the order of ``robot.loops``.

    A loop (k, k+B) is closed when ``k+B T_k = I4`` (SYMORO+ eq. 2): the
    product of the transforms around the loop, from the closing frame k+B
    down to its common ancestor with k, and from there up to k.

    Returns
    -------
    list of sympy.Matrix, shape (4, 4) each

    Examples
    --------
    >>> import sympy
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> [T] = loop_constraint_matrices(fourbar)   # 5T_4 = 5T_2 2T_1 (0T_1)^-1 0T_3 3T_4
    >>> square = dict(zip(fourbar.q, [sympy.pi/2, -sympy.pi/2, sympy.pi/2, -sympy.pi/2]))
    >>> T.subs(square)
    Matrix([
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1]])
    """
    return [transform(robot, closing, cut) for cut, closing in robot.loops]


def loop_constraints(robot):
    """Geometric constraint equations of the loops (SYMORO+ eq. 2).

    For each loop (k, k+B) of ``robot.loops``, the 12 entries of the top three
    rows of ``k+B T_k - I4`` (row by row: ``s_x n_x a_x P_x  s_y ...``), so
    that the list is ``12 B`` expressions whose common zero set is the set of
    configurations where every loop is closed (``0T_k = 0T_{k+B}``).  Only the
    joints of the loop appear (the transform goes through the loop's root, not
    through the base).

    Returns
    -------
    list of sympy.Expr, length 12 B

    Examples
    --------
    >>> import sympy
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> eqs = loop_constraints(fourbar)
    >>> square = dict(zip(fourbar.q, [sympy.pi/2, -sympy.pi/2, sympy.pi/2, -sympy.pi/2]))
    >>> len(eqs), [e.subs(square) for e in eqs] == [0] * 12
    (12, True)
    """
    out: list[sympy.Expr] = []
    for T in loop_constraint_matrices(robot):
        D = T - sympy.eye(4)
        out.extend(D[r, c] for r in range(3) for c in range(4))
    return out


# ------------------------------------------------------------------ numeric
def _symbols_of(exprs):
    out = set()
    for e in exprs:
        out |= sympy.sympify(e).free_symbols
    return out


def _bind(robot, exprs, values, variables):
    """The substitution ``{symbol: Float}`` that gives ``values`` (name ->
    number) to the free symbols of ``exprs``: every one that is not in
    ``variables`` must have a value, and no variable may be given one."""
    names = {str(k): v for k, v in (values or {}).items()}
    variable_names = {str(s) for s in variables}
    clash = sorted(set(names) & variable_names)
    if clash:
        raise ParameterError(
            f"{', '.join(clash)} are variables of the model (joint positions, velocities or "
            f"accelerations) and cannot be given in values"
        )
    needed = {s for s in _symbols_of(exprs) if str(s) not in variable_names}
    missing = sorted(str(s) for s in needed if str(s) not in names)
    if missing:
        raise ParameterError(
            f"robot {robot.name}: no value for {', '.join(missing)}; give them in values "
            f"(a dict name -> number)"
        )
    mapping = {}
    for s in needed:
        try:
            mapping[s] = sympy.Float(float(names[str(s)]))
        except (TypeError, ValueError):
            raise ParameterError(f"value of {s} is {names[str(s)]!r}, not a number") from None
    return mapping


def check_count(values, labels, what, kind="joints"):
    """A KaneRobotError unless ``values`` has one entry per label of ``labels``."""
    if len(values) != len(labels):
        raise KaneRobotError(f"{what} needs {len(labels)} values ({kind} {', '.join(labels)}), got {len(values)}")


def _variables(robot, which):
    table = {"q": robot.q, "qd": robot.qd, "qdd": robot.qdd}
    out = []
    for name in which:
        if name not in table:
            raise KaneRobotError(f"unknown variable set {name!r}; use 'q', 'qd' or 'qdd'")
        out.append(list(table[name]))
    return out


def numeric_function(robot, expr, values, variables=("q",)):
    """Compile a symbolic matrix into a numpy function of the joint vectors.

    Parameters
    ----------
    robot : Robot
    expr : sympy.Matrix or sequence of sympy.Expr
    values : dict str -> float
        Values of every other symbol in ``expr`` (geometric lengths, base
        velocities ...).  Names not used by ``expr`` are ignored.
    variables : tuple of str, optional
        Positional arguments of the function, each a vector in
        ``robot.joint_labels`` order: ``'q'`` (positions), ``'qd'`` (QP),
        ``'qdd'`` (QDP).

    Returns
    -------
    callable
        ``f(q[, qd[, qdd]]) -> numpy.ndarray`` of the shape of ``expr``
        (a 1-d array for a list).

    Raises
    ------
    ParameterError
        Listing the symbols without a value.

    Examples
    --------
    >>> import sympy
    >>> from kanerobot.robot.description import Robot, Frame, KKPlacement
    >>> th1, L = sympy.symbols("th1 L")
    >>> arm = Robot.create("one", [Frame("1", "0", 0, 1, KKPlacement(d=L, theta=th1))])
    >>> f = numeric_function(arm, sympy.Matrix([L * sympy.cos(th1)]), {"L": 2.0})
    >>> f([0.0])
    array([[2.]])
    >>> numeric_function(arm, sympy.Matrix([L]), {})
    Traceback (most recent call last):
    ...
    kanerobot.errors.ParameterError: robot one: no value for L; give them in values (a dict name -> number)
    """
    groups = _variables(robot, variables)
    items = [sympy.sympify(e) for e in expr]  # a matrix row by row
    shape = expr.shape if isinstance(expr, sympy.MatrixBase) else (len(items),)
    mapping = _bind(robot, items, values, [s for g in groups for s in g])
    # dummy names keep lambdify independent of how the user named joints
    dummies = [[sympy.Dummy(f"x{k}_{n}") for n in range(len(g))] for k, g in enumerate(groups)]
    mapping.update({s: d for g, dg in zip(groups, dummies) for s, d in zip(g, dg) if isinstance(s, sympy.Symbol)})
    compiled = sympy.lambdify(dummies, [e.xreplace(mapping) for e in items], modules="numpy", cse=True)

    def function(*args):
        if len(args) != len(groups):
            raise KaneRobotError(f"expected {len(groups)} vector(s) ({', '.join(variables)}), got {len(args)}")
        vectors = [numpy.asarray(a, dtype=float).reshape(-1) for a in args]
        for name, v, group in zip(variables, vectors, groups):
            # one value per coordinate (a ball joint's four), named by joint where each has one
            if len(group) == len(robot.joint_labels):
                check_count(v, robot.joint_labels, name)
            else:
                check_count(v, [str(x) for x in group], name, "coordinates")
        return numpy.array(compiled(*vectors), dtype=float).reshape(shape)

    return function


def numeric_transform(robot, i, j, values):
    """Numeric iT_j: a function of the joint vector q.

    Parameters
    ----------
    robot : Robot
    i, j : str
        Frame labels (``'0'`` the base).
    values : dict str -> float
        Values of the geometric symbols used by iT_j.

    Returns
    -------
    callable
        ``f(q) -> numpy.ndarray`` of shape (4, 4); ``q`` has one value per
        joint of ``robot.joint_labels`` (all of them, even those off the path).

    Raises
    ------
    ParameterError
        When a geometric symbol of iT_j has no value (the message lists them).

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> T = numeric_transform(arm, "0", "2", {"L1": 0.5})
    >>> T([0.0, 0.0])[:3, 3]
    array([0.5, 0. , 0. ])
    """
    return numeric_function(robot, transform(robot, i, j), values, ("q",))


def _joint_vector(robot, given, labels, what):
    """A dict label -> value from a dict or a sequence in ``labels`` order."""
    if isinstance(given, dict):
        out = {str(k): float(v) for k, v in given.items()}
        unknown = sorted(set(out) - set(robot.joint_labels))
        if unknown:
            raise KaneRobotError(f"{what}: {', '.join(unknown)} are not joints of {robot.name}")
        return out
    given = numpy.asarray(given, dtype=float).reshape(-1)
    check_count(given, labels, what)
    return dict(zip(labels, given.tolist()))


def loop_solver(robot, values, known=()):
    """Compile the loop closure of ``robot`` once, for repeated :func:`solve_loops`.

    Parameters
    ----------
    robot : Robot
    values : dict str -> float
        Geometric parameters.
    known : sequence of str, optional
        Passive joints that are in no loop and will be given with the active
        ones.

    Returns
    -------
    callable
        ``solve(q_active, guess=None, tol=1e-10, max_nfev=2000) -> numpy.ndarray (nc,)``
        (every coordinate of ``robot.q``: a ball joint cutting a loop is turned to close it),
        with the arguments and result of :func:`solve_loops` (``max_nfev``:
        the most residual evaluations allowed); its attribute ``unknown``
        lists the joints solved for (the order of ``guess``).

    Examples
    --------
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> solve = loop_solver(fourbar, {})
    >>> solve.unknown
    ('2', '3', '4')
    >>> [solve([a], guess=[-a, a, -a]).round(8).tolist() for a in (1.0, 1.2)]
    [[1.0, -1.0, 1.0, -1.0], [1.2, -1.2, 1.2, -1.2]]
    """
    from scipy.optimize import least_squares

    if not robot.loops:
        raise KaneRobotError(f"robot {robot.name} has no loops to solve")
    given_labels = set(robot.active_joints) | {str(k) for k in known}
    balls = _ball_cuts(robot)
    equations = _closure_equations(robot, balls)
    in_loops = _symbols_of(equations)
    unknown = [
        label for label in robot.joint_labels
        if label not in given_labels and robot.frame(label).q in in_loops
    ]
    free = [label for label in robot.joint_labels if label not in given_labels and label not in unknown and label not in balls]
    if free:
        raise KaneRobotError(
            f"joint(s) {', '.join(free)} are passive but in no loop: give their values in q_active (a dict)"
        )
    if not unknown:
        raise KaneRobotError("every joint of the loops has a value: nothing to solve")
    E = sympy.Matrix(equations)
    residual = numeric_function(robot, E, values, ("q",))
    jacobian = numeric_function(robot, E.jacobian([robot.frame(label).q for label in unknown]), values, ("q",))
    index = coordinate_starts(robot)
    cols = [index[label] for label in unknown]
    turns = _ball_turns(robot, balls, values)
    revolute = numpy.array([isinstance(robot.frame(label).joint, joints.Revolute) for label in unknown])
    method = "lm" if len(equations) >= len(unknown) else "trf"

    def solve(q_active, guess=None, tol=1e-10, max_nfev=2000):
        given = _joint_vector(robot, q_active, robot.active_joints, "q_active")
        missing = [label for label in sorted(given_labels, key=index.__getitem__) if label not in given]
        if missing:
            raise KaneRobotError(f"q_active has no value for joint(s) {', '.join(missing)}")
        q = numpy.zeros(len(robot.q))
        for label, v in given.items():
            q[index[label]] = v
        for label in balls:
            q[index[label] + 3] = 1.0  # the identity (x y z w): the closure's positions do not depend on it
        if guess is None:
            x0 = numpy.zeros(len(unknown))
        elif isinstance(guess, dict):
            g = {str(k): float(v) for k, v in guess.items()}
            x0 = numpy.array([g.get(label, 0.0) for label in unknown])
        else:
            x0 = numpy.asarray(guess, dtype=float).reshape(-1)
            check_count(x0, unknown, "guess", "passive joints")

        def full(x):
            out = q.copy()
            out[cols] = x
            return out

        def fun(x):
            return residual(full(x)).reshape(-1)

        result = least_squares(
            fun, x0, jac=lambda x: jacobian(full(x)), method=method,
            xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=max_nfev,
        )
        worst = float(numpy.max(numpy.abs(fun(result.x))))
        if not numpy.isfinite(worst) or worst > tol:
            raise KaneRobotError(
                f"the loops of {robot.name} do not close: largest residual {worst:.3g} > {tol:g} after "
                f"{result.nfev} evaluations ({result.message.rstrip('.')}); the active joints may be out of "
                f"reach of the loops, or try another guess for {', '.join(unknown)}"
            )
        x = result.x.copy()
        # revolute joints: the turn nearest to the guess
        x[revolute] = x0[revolute] + numpy.mod(x[revolute] - x0[revolute] + numpy.pi, 2 * numpy.pi) - numpy.pi
        out = full(x)
        for label, turn in turns.items():
            out[index[label]:index[label] + 4] = joints.rotation_to_quaternion(turn(out).T)
        return out

    solve.__dict__["unknown"] = tuple(unknown)  # the solver's attribute (a function's own, which mypy does not type)
    return solve


def coordinate_starts(robot):
    """``{label: index in robot.q of the joint's first coordinate}``."""
    out, start = {}, 0
    for label in robot.joint_labels:
        out[label] = start
        start += robot.frame(label).joint.nq
    return out


def _ball_cuts(robot):
    """The ball joints that cut loops; refuses any other joint of several coordinates (the solver's unknowns are one each)."""
    balls = {cut for cut, _ in robot.loops if isinstance(robot.frame(cut).joint, joints.Spherical)}
    several = [label for label in robot.joint_labels if robot.frame(label).joint.nq != 1 and label not in balls]
    if several:
        raise KaneRobotError(
            f"{robot.name}: the loop solver takes joints of one coordinate (and ball joints cutting a loop), not joint(s) "
            f"{', '.join(several)}: give every function a closed configuration q"
        )
    return balls


def _closure_equations(robot, balls):
    """:func:`loop_constraints`, but only the 3 position entries of a loop cut at a ball joint (which turns freely:
    its rotation is found afterwards, :func:`_ball_turns`)."""
    out: list[sympy.Expr] = []
    for (cut, _), T in zip(robot.loops, loop_constraint_matrices(robot)):
        D = T - sympy.eye(4)
        columns = (3,) if cut in balls else range(4)
        out.extend(D[r, c] for r in range(3) for c in columns)
    return out


def _ball_turns(robot, balls, values):
    """``{cut: f(q) -> R}``, R the rotation of the loop's ``k+B T_k`` with the ball at its identity: the loop closes
    when the ball turns by ``R^T`` (``k+B T_k = T_identity M(ball)``)."""
    out = {}
    for (cut, _), T in zip(robot.loops, loop_constraint_matrices(robot)):
        if cut in balls:
            identity = dict(zip(robot.frame(cut).coordinates, (0, 0, 0, 1)))
            out[cut] = numeric_function(robot, T[:3, :3].subs(identity), values, ("q",))
    return out


def solve_loops(robot, values, q_active, guess=None, tol=1e-10):
    """Solve the geometric constraint equations of the loops numerically.

    Given the geometric parameters and the active joints, find the passive
    joints (cut joints included) that close every loop, by
    :func:`scipy.optimize.least_squares` (Levenberg-Marquardt with the exact
    Jacobian) on the residuals of :func:`loop_constraints`.  For many
    solutions with the same ``values`` compile once with :func:`loop_solver`.

    Parameters
    ----------
    robot : Robot
        A closed-loop robot.
    values : dict str -> float
        Geometric parameters.
    q_active : dict label -> float, or sequence
        Active joint values; a sequence follows ``robot.active_joints``.  A
        dict may also fix passive joints that appear in no loop.
    guess : dict label -> float, or sequence, optional
        Starting point for the unknown passive joints (sequence in the order of
        the passive joints that appear in the loops); default 0.  A loop has
        several assembly modes: the solution found is the one the guess leads
        to, and revolute joints are returned within half a turn of the guess.
    tol : float, optional
        Largest accepted absolute residual.

    Returns
    -------
    numpy.ndarray, shape (nj,)
        All joint values in ``robot.joint_labels`` order.

    Raises
    ------
    KaneRobotError
        When the solver does not close the loops within ``tol`` (the active
        values are out of the loops' workspace, or the guess is too far).

    Examples
    --------
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links, cut at joint 4
    >>> q = solve_loops(fourbar, {}, [1.5], guess=[-1.5, 1.5, -1.5])
    >>> q.round(8).tolist()   # the parallelogram: th2 = -th1, th3 = th1, th4 = -th1
    [1.5, -1.5, 1.5, -1.5]
    >>> solve_loops(fourbar, {}, [1.5], guess=[-1.5, 1.5, -1.5, 0])
    Traceback (most recent call last):
    ...
    kanerobot.errors.KaneRobotError: guess needs 3 values (passive joints 2, 3, 4), got 4
    """
    known = [str(k) for k in q_active if str(k) not in robot.active_joints] if isinstance(q_active, dict) else ()
    return loop_solver(robot, values, known)(q_active, guess=guess, tol=tol)
