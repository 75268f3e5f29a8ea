"""Closed loops: the passive joints from the geometric constraint equations.

Each loop (k, k+B) closes when ``k+B T_k = I4`` (SYMORO+ eq. 2).  Written as
a chain ``M_1 ... M_m = I`` along the loop (inverse transforms while climbing
from the closing frame to the common ancestor, then down to the cut frame),
it is solved by Paul's method like an inverse geometric model
(:func:`kanerobot.igm.paul.solve_chain`): every assembly mode, in closed
form.  :func:`all_loop_closures` gives them for given active joints; when no
closed form is found it falls back on the numeric
:func:`kanerobot.geometry.loop_solver` from several guesses.
"""

import numpy
import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.geometry import loop_constraints, loop_solver, numeric_function
from kanerobot.igm import numeric as num
from kanerobot.igm.paul import NoClosedForm, chain_equations, solve_chain
from kanerobot.igm.program import SolutionProgram
from kanerobot.robot import joints


def loop_chain(robot, cut, closing):
    """The factors ``M_1 ... M_m`` of the loop (cut, closing): ``prod = I4``."""
    from kanerobot.geometry import inverse_transform

    up, down = robot.path(closing, cut)
    factors = [inverse_transform(sympy.Matrix(robot.frame(k).transform())) for k in up]
    factors += [sympy.Matrix(robot.frame(k).transform()) for k in down]
    return factors, tuple(up) + tuple(down)


def loop_steps(robot, known):
    """Steps solving, loop after loop, the loop joints not in ``known``.

    Parameters
    ----------
    robot : Robot
    known : iterable of sympy.Symbol
        Joint variables already known (the active ones, or the direct chain's).

    Returns
    -------
    list of Step

    Raises
    ------
    NoClosedForm
        When a loop's equations have no standard type.
    """
    known = set(known)
    all_joints = {robot.frame(label).q for label in robot.joint_labels}
    # the equations of every loop in one pool: a loop with too many unknowns
    # may become solvable once another loop has given its shared joints
    equations, unknowns, prismatic = [], [], set()
    for cut, closing in robot.loops:
        factors, labels = loop_chain(robot, cut, closing)
        frames = [robot.frame(label) for label in labels]
        for f in frames:
            if f.is_joint and f.q not in known and f.q not in unknowns:
                unknowns.append(f.q)
        prismatic |= {f.q for f in frames if isinstance(f.joint, joints.Prismatic)}
        equations += chain_equations(factors, sympy.eye(4), all_joints, points=False)
    return solve_chain(equations, unknowns, prismatic) if unknowns else []


_PROGRAMS: dict[tuple, SolutionProgram] = {}


def all_loop_closures(robot, values, q_active, tol=1e-10, guesses=16, rng=None):
    """Every assembly mode of the loops for the given active joints.

    Parameters
    ----------
    robot : Robot
        A closed-loop robot.
    values : dict str -> float
        Geometric parameters.
    q_active : sequence or dict
        Active joint values (``robot.active_joints`` order for a sequence).
    tol : float
        Largest accepted residual of the loop equations.
    guesses : int
        Random guesses of the numeric fallback (used only when no closed form
        exists).

    Returns
    -------
    list of numpy.ndarray (nj,)
        Distinct closed configurations, angles in (-pi, pi]; empty when the
        loops cannot close.

    Examples
    --------
    >>> import kanerobot as kr
    >>> fourbar = kr.load(kr.frames_path("fourbar"))   # unit links: a rhombus, or folded
    >>> sorted(q.round(6).tolist() for q in all_loop_closures(fourbar, {}, [1.5]))
    [[1.5, -1.5, 1.5, -1.5], [1.5, 3.141593, 3.141593, 1.5]]
    """
    labels = robot.joint_labels
    given = dict(q_active) if isinstance(q_active, dict) else dict(zip(robot.active_joints, q_active))
    given = {str(k): float(v) for k, v in given.items()}
    if len(given) != len(robot.active_joints) and not isinstance(q_active, dict):
        raise KaneRobotError(f"q_active needs {len(robot.active_joints)} values ({', '.join(robot.active_joints)})")
    q0 = numpy.zeros(len(labels))
    for label, v in given.items():
        q0[labels.index(label)] = v
    revolute = numpy.array([isinstance(robot.frame(label).joint, joints.Revolute) for label in labels])
    closure = numeric_function(robot, sympy.Matrix(loop_constraints(robot)), values)
    key = (robot, tuple(sorted(given)))
    try:
        if key not in _PROGRAMS:
            steps = loop_steps(robot, known=[robot.frame(label).q for label in given])
            _PROGRAMS[key] = SolutionProgram(robot, steps, "paul")
        branches = _PROGRAMS[key].compile(values)(numpy.eye(4), start=[(q0, ())])
        found = [q for q, _ in branches if numpy.all(numpy.isfinite(q)) and numpy.max(numpy.abs(closure(q))) <= tol]
    except NoClosedForm:
        rng = numpy.random.default_rng(0) if rng is None else rng
        solve = loop_solver(robot, values, known=[k for k in given if k not in robot.active_joints])
        found = []
        for _ in range(guesses):
            try:
                found.append(solve(given, guess=rng.uniform(-numpy.pi, numpy.pi, len(solve.unknown)), tol=tol))
            except KaneRobotError:
                continue
    return num.unique_solutions(found, revolute)
