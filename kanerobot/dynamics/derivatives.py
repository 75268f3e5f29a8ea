"""Analytic derivatives of the inverse and direct dynamic models, as programs.

Two models join those of :data:`~kanerobot.dynamics.dynamic_model.MODELS`
(:data:`DERIVATIVE_MODELS`), for serial, tree and floating robots:

``inverse_dynamics_derivatives``
    ``[dtau/dq, dtau/dqd]``, an ``(nv, 2 nv)`` matrix, at ``(q, qd, qdd)``.
``direct_dynamics_derivatives``
    ``[dqdd/dq, dqdd/dqd, dqdd/dtau]``, an ``(nv, 2 nv + n)`` matrix, at
    ``(q, qd, tau)`` (``n`` joint torques, one per joint speed:
    :func:`joint_torques`; a floating base is not actuated).

Both are :class:`~kanerobot.symbolic.Program` s made from the model's own
programs by the forward mode of :mod:`kanerobot.symbolic.derivative`, so
they are counted, compiled to C and exported like every model
(``model.program(name)``, ``model.op_count(name)``, ``model.compiled(name)``).

**Tangent space** (pinocchio's convention).  A column ``dq_k`` is the
derivative along ``q (+) dv`` with ``dv = e_k`` of the velocity space (each
joint model's ``integrate``), one column per speed: the chain rule through
the joint model's :meth:`~kanerobot.robot.joints.JointModel.tangent`
(``dq/dv`` at ``v = 0``; :func:`tangent_directions`).  For a joint of one
speed, the partial derivative with respect to its variable; for a
quaternion (a spherical joint, a free flyer's orientation), ``dQ = 1/2 Q *
(e_k, 0)``, a rotation about axis k of the joint's frame; for a planar
joint, a translation along the axes of its frame; for a free flyer, the
base moved by ``wT_0 exp([dv_lin; dw])`` in frame 0 (pinocchio's ``q *
exp(v)``).  The dynamics of a floating robot, written in frame 0, does not
depend on where the base is, so its three translation columns are zero;
its rotations turn gravity in frame 0.  The velocity columns are the
derivatives with respect to the speeds (base ``v, w`` in frame 0, then the
joints') as in pinocchio.

**Coulomb friction** ``FS_j sign(qd_j)`` is not differentiable at ``qd_j =
0``; its derivative is taken as 0 (its value everywhere else).

The constructions of the two programs and their cost (forward mode
limited to the lines that depend on each direction, the three
constructions of the direct model's derivatives and how the cheapest is
taken) are in ``docs/theory/derivatives.md``.
"""

import sympy

from kanerobot.dynamics.common import link_parameter
from kanerobot.dynamics.free_flyer import BASE_VELOCITY
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError
from kanerobot.robot.description import BASE
from kanerobot.symbolic.derivative import ForwardMode
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import Program

__all__ = [
    "CONSTRUCTIONS",
    "DERIVATIVE_MODELS",
    "IDM_CONSTRUCTIONS",
    "SOLVED_DERIVATIVES",
    "configuration_directions",
    "derivative_program",
    "direct_dynamics_derivatives",
    "inverse_dynamics_derivatives",
    "joint_torques",
    "output_grid",
    "split",
    "tangent_directions",
    "torque_directions",
    "velocity_directions",
]

#: The derivative models, with what they compute.
DERIVATIVE_MODELS = {
    "inverse_dynamics_derivatives": "[dtau/dq, dtau/dqd](q, qd, qdd), (nv, 2 nv), dq in the tangent space",
    "direct_dynamics_derivatives": "[dqdd/dq, dqdd/dqd, dqdd/dtau](q, qd, tau), (nv, 2 nv + n), dq in the tangent space",
}
#: Derivative models computed numerically where the engine has no direct-dynamics program.
SOLVED_DERIVATIVES = {"direct_dynamics": "direct_dynamics_derivatives"}


def _floating(model):
    return bool(model.robot.floating)


def tangent_directions(robot):
    """``[(label, seeds)]``: the configuration directions ``q (+) e_k`` of the tangent space, one per speed.

    The root joint's (:func:`~kanerobot.dynamics.root.root_joint_model`: a
    free flyer's six), then each joint's, all through the joint model's
    :meth:`~kanerobot.robot.joints.JointModel.tangent`: column k seeds each
    configuration symbol with its motion along speed k (``{q_j: 1}`` for a
    joint of one speed, ``1/2 Q * (e_k, 0)`` for a quaternion).  A joint with
    one configuration value per speed is labelled after its symbols (a
    value customised to a number, ``q<k>``, has no seed); the others after
    :meth:`~kanerobot.robot.joints.JointModel.tangent_names`.

    Examples
    --------
    >>> import kanerobot as kr
    >>> [(label, seeds) for label, seeds in tangent_directions(kr.load(kr.frames_path("planar2")))]
    [('th1', {th1: 1}), ('th2', {th2: 1})]
    """
    stem = robot.stems
    root = root_joint_model(robot)
    parts = [(root, stem[BASE], [sympy.Symbol(name) for name in root.configuration_names(stem[BASE])])]
    q, start = list(robot.q), 0
    for label in robot.joint_labels:
        joint = robot.frame(label).joint
        parts.append((joint, stem[label], q[start:start + joint.nq]))
        start += joint.nq
    directions, k = [], 0
    for joint, joint_stem, symbols in parts:
        if joint.nq == joint.nv:
            labels = [str(s) if isinstance(s, sympy.Symbol) else f"q{k + i + 1}" for i, s in enumerate(symbols)]
            k += joint.nq
        else:
            labels = joint.tangent_names(joint_stem)
        G = joint.tangent(symbols)
        for col, label in enumerate(labels):
            seeds = {s: G[row, col] for row, s in enumerate(symbols) if isinstance(s, sympy.Symbol) and G[row, col] != 0}
            directions.append((label, seeds))
    return directions


def configuration_directions(model):
    """``[(label, seeds)]``: the nv configuration directions of the tangent space (:func:`tangent_directions`).

    A free flyer's three translations (no seed in the programs: the
    dynamics in frame 0 does not depend on them) and three rotations (the
    quaternion's motion), then each joint's (none for a joint customised
    to a number).
    """
    return tangent_directions(model.robot)


def velocity_directions(model):
    """``[(label, seeds)]``: the nv velocity directions (base ``v, w``, then the joint rates)."""
    symbols = (list(BASE_VELOCITY) if _floating(model) else []) + list(model.qd)
    return [(str(s), {s: 1}) if isinstance(s, sympy.Symbol) else (f"qd{k + 1}", {}) for k, s in enumerate(symbols)]


def joint_torques(model):
    """The generalized forces of the joints, one per speed: a one-speed joint's ``GAM`` parameter
    (possibly customised to a number), ``GAM<force name>`` for the others (``GAMCX2``)."""
    return list(model.tau)


def torque_directions(model):
    """``[(label, seeds)]``: one direction per joint torque (:func:`joint_torques`)."""
    return [(str(s), {s: 1}) if isinstance(s, sympy.Symbol) else (f"tau{k + 1}", {}) for k, s in enumerate(joint_torques(model))]


def _state_directions(model):
    """The configuration then the velocity directions, one of each per speed (else a clear error:
    a closed loop's configuration holds its passive joints, which its speeds do not)."""
    configuration, velocity = configuration_directions(model), velocity_directions(model)
    if len(configuration) != len(velocity):
        raise KaneRobotError(
            f"{model.robot.name}: {len(configuration)} configuration directions for {len(velocity)} speeds; "
            f"the derivative models take a serial, tree or floating robot"
        )
    return configuration, velocity


def _differentiated(program, directions):
    """``(fm, rows)``: ``fm`` a :class:`ForwardMode` of ``program`` with
    ``directions`` declared (keys 0, 1, ...), ``rows`` the output names."""
    fm = ForwardMode(program)
    for key, (label, seeds) in enumerate(directions):
        fm.add_direction(key, {x: seed for x, seed in seeds.items() if x in set(program.inputs)}, label=label)
    return fm, list(program.outputs)


def _finish(fm, outputs, columns):
    """The target with one output per (output row, direction column), row by row, zeros kept."""
    target = fm.target
    for name, expr in outputs:
        for key in range(columns):
            target.set_output(fm.name_for(name, key), fm.derivative(expr, key))
    target.prune()
    return target


#: The constructions of :func:`inverse_dynamics_derivatives`.
IDM_CONSTRUCTIONS = ("auto", "coriolis", "forward")


def inverse_dynamics_derivatives(model, construction="auto"):
    """The program of ``[dtau/dq, dtau/dqd]`` (outputs row by row, ``nv x 2 nv``).

    Parameters
    ----------
    model : DynamicModel
    construction : {"auto", "coriolis", "forward"}, optional
        ``"forward"``: one forward-mode pass of the inverse dynamic program
        per direction of :func:`configuration_directions` and
        :func:`velocity_directions`.  ``"coriolis"`` (fixed root, every
        joint rate a symbol): the configuration columns so, and ``dtau/dqd
        = 2 C(q, qd) + diag(FV)`` from the model's Coriolis matrix program:
        the velocity terms are ``sum_jk c_ijk qd_j qd_k`` with Christoffel
        symbols symmetric in ``j, k``, so their derivative is twice the
        Christoffel-form ``C``; viscous friction adds ``FV``, Coulomb
        friction 0.  (A free flyer's ``C`` has Hamel terms that are not
        symmetric: the identity does not hold there.)  ``"auto"``
        (default) takes ``"coriolis"`` where it applies, the cheaper as
        measured (multiplications/additions, Newton-Euler engine):

        ===========  ===========  ===========
        robot        coriolis     forward
        ===========  ===========  ===========
        RX-90        1933/1497    2378/1927
        Krang        14354/11180  15039/12162
        ===========  ===========  ===========

    Returns
    -------
    Program
        Outputs ``dGAM<i>_d<x>`` (zeros kept), row ``i`` of the generalized
        forces (a free flyer's ``GAMFX0 .. GAMCZ0`` first).
    """
    if construction not in IDM_CONSTRUCTIONS:
        raise KaneRobotError(f"unknown construction {construction!r}: choose among {', '.join(IDM_CONSTRUCTIONS)}")
    robot = model.robot
    holonomic = all(robot.frame(label).joint.euclidean for label in robot.joint_labels)
    applies = not _floating(model) and holonomic and all(isinstance(s, sympy.Symbol) for s in model.qd)
    if construction == "coriolis" and not applies:
        raise KaneRobotError(
            f"{model.robot.name}: dtau/dqd = 2 C + diag(FV) needs a fixed root, joints whose speeds are their "
            f"configuration's rates (no spherical or planar joint) and a symbol for every joint rate; take construction='forward'"
        )
    configuration, velocity = _state_directions(model)
    program = model.program("inverse_dynamics")
    if construction == "forward" or not applies:
        directions = configuration + velocity
        fm, _ = _differentiated(program, directions)
        return _finish(fm, list(program.outputs.items()), len(directions))
    fm, _ = _differentiated(program, configuration)
    target = fm.target
    n = len(model.q)
    entries = target.splice(model.program("coriolis_matrix"))
    names = matrix_entry_names("C", (n, n))
    C = [[entries.get(names[i][j], sympy.S.Zero) for j in range(n)] for i in range(n)]
    labels = [label for label, _ in velocity]
    for i, (name, expr) in enumerate(program.outputs.items()):
        for key in range(n):
            target.set_output(fm.name_for(name, key), fm.derivative(expr, key))
        viscous = link_parameter(model.robot, model.robot.joint_labels[i], "FV")
        for j, label in enumerate(labels):
            target.set_output(fm.name.format(var=name, wrt=label), 2 * C[i][j] + (viscous if i == j else 0))
    target.prune()
    return target


def _direct(model):
    """Forward mode over the articulated-body program along q, qd and the torques."""
    configuration, velocity = _state_directions(model)
    program = model.program("direct_dynamics")
    directions = configuration + velocity + torque_directions(model)
    fm, _ = _differentiated(program, directions)
    return _finish(fm, list(program.outputs.items()), len(directions))


def _inverse_source(model):
    """``(source, qdd, dtau, torques)`` of the constructions through the inverse model.

    ``source`` is the direct model's program (outputs ``qdd``, ``{name:
    expression}``), then the ``idm`` derivative program with its
    accelerations replaced by those outputs (``dtau``, ``{name:
    expression}`` row by row, ``nv x 2 nv``); ``torques`` the torque inputs.
    """
    ddm = model.program("direct_dynamics")
    # The forward-mode idm derivatives, not the model's (2 C for dtau/dqd): inside this program
    # they cost less (Krang 28415/23554 multiplications/additions against 36074/26498).
    idm_d = inverse_dynamics_derivatives(model, "forward")
    source = Program(inputs=ddm.inputs, compound=ddm.compound)
    qdd = source.splice(ddm)
    mapping = {s: v for s, v in zip(model.qdd, qdd.values()) if isinstance(s, sympy.Symbol)}
    dtau = source.splice(idm_d, mapping)
    # Outputs keep every line alive in the source (the forward mode copies them all anyway).
    for name, value in qdd.items():
        source.set_output(name, value)
    for name, value in dtau.items():
        source.set_output(f"kr_seed_{name}", value)
    torques = [s for s in joint_torques(model) if isinstance(s, sympy.Symbol)]
    if len(torques) != len(qdd):
        raise KaneRobotError(f"{model.robot.name}: the torques of every joint are needed for the direct model's derivatives")
    return source, qdd, dtau, torques


def _through_inverse(model):
    """``-A^-1 dtau/dx`` and ``A^-1`` as torque derivatives of the articulated-body program.

    The forward mode differentiates the direct model's outputs of
    :func:`_inverse_source` along directions that seed the torques with
    ``-dtau/dx_k`` (``x`` one of the 2 nv state directions) and with ``e_k``.
    """
    source, qdd, dtau, torques = _inverse_source(model)
    width, names = 2 * len(qdd), list(dtau)
    labels = [label for label, _ in configuration_directions(model) + velocity_directions(model)]
    fm = ForwardMode(source)
    for col, label in enumerate(labels):
        seeds = {tau: -dtau[names[row * width + col]] for row, tau in enumerate(torques)}
        fm.add_direction(col, {tau: fm.value(seed) for tau, seed in seeds.items()}, label=label)
    for k, (label, seeds) in enumerate(torque_directions(model)):
        fm.add_direction(width + k, seeds, label=label)
    return _finish(fm, list(qdd.items()), width + len(torques))


def _inverse_product(model):
    """``A^-1`` as the torque derivatives of the articulated-body program (one
    triangle, by symmetry), then ``-A^-1 dtau/dx`` as products in the program
    (the zeros of ``dtau/dx``, many on a tree, cost nothing)."""
    source, qdd, dtau, _torques = _inverse_source(model)
    nv, names = len(qdd), list(dtau)
    width = 2 * nv
    fm = ForwardMode(source)
    for k, (label, seeds) in enumerate(torque_directions(model)):
        fm.add_direction(k, seeds, label=label)
    rows = list(qdd.items())
    inverse = [[None] * nv for _ in range(nv)]
    for i, (_, expr) in enumerate(rows):
        for k in range(i + 1):
            inverse[i][k] = inverse[k][i] = fm.derivative(expr, k)
    target = fm.target
    labels = [label for label, _ in configuration_directions(model) + velocity_directions(model)]
    for i, (name, _) in enumerate(rows):
        for col, label in enumerate(labels):
            terms = [inverse[i][k] * fm.value(dtau[names[k * width + col]]) for k in range(nv)]
            target.set_output(fm.name.format(var=name, wrt=label), -sympy.Add(*terms))
        for k in range(nv):
            target.set_output(fm.name_for(name, k), inverse[i][k])
    target.prune()
    return target


#: The constructions of :func:`direct_dynamics_derivatives`.
CONSTRUCTIONS = ("auto", "product", "inverse", "direct")


def direct_dynamics_derivatives(model, construction="auto"):
    """The program of ``[dqdd/dq, dqdd/dqd, dqdd/dtau]`` (outputs row by row, ``nv x (2 nv + n)``).

    Parameters
    ----------
    model : DynamicModel
    construction : {"auto", "product", "inverse", "direct"}, optional
        See docs/theory/derivatives.md; ``"product"`` and ``"inverse"`` need a fixed
        root.  ``"auto"`` (default) takes the cheapest by operation count
        as measured (multiplications/additions, Newton-Euler engine):

        ===========  ===========  ===========  ===========
        robot        product      inverse      direct
        ===========  ===========  ===========  ===========
        RX-90        3975/3177    4987/3790    5250/4023
        Krang        28415/23554  35927/27771  39697/31017
        ===========  ===========  ===========  ===========

        so ``"product"`` for a fixed root (without deriving all three,
        which would triple the derivation time; it is also the quickest to
        derive) and ``"direct"`` for a floating base.  A product for a
        floating base, its six base columns of ``A^-1`` taken along a
        wrench on link 0 added to the articulated-body program, was
        measured and costs more: satellite 4615/3724 against 4234/3396,
        the conftest tree on a free flyer 12503/10171 against 11971/9566.

    Returns
    -------
    Program
        Outputs ``dQDP<i>_d<x>`` (a free flyer's ``dDVX0_d<x> .. dDWZ0_d<x>``
        first), zeros kept.
    """
    if construction not in CONSTRUCTIONS:
        raise KaneRobotError(f"unknown construction {construction!r}: choose among {', '.join(CONSTRUCTIONS)}")
    if construction in ("product", "inverse") and _floating(model):
        raise KaneRobotError(f"{model.robot.name} has a floating base: its direct model's derivatives take construction='direct'")
    if construction == "direct" or (construction == "auto" and _floating(model)):
        return _direct(model)
    if construction == "inverse":
        return _through_inverse(model)
    return _inverse_product(model)


def derivative_program(model, name):
    """The program of derivative model ``name`` (:data:`DERIVATIVE_MODELS`) of ``model``."""
    if name == "inverse_dynamics_derivatives":
        return inverse_dynamics_derivatives(model)
    return direct_dynamics_derivatives(model)


def output_grid(program, rows):
    """The outputs of a derivative program as ``rows`` rows of names (row-major)."""
    names = list(program.outputs)
    if len(names) % rows:
        raise KaneRobotError(f"{len(names)} derivative outputs do not fill {rows} rows")
    width = len(names) // rows
    return [names[i * width:(i + 1) * width] for i in range(rows)]


def split(matrix, nv, single):
    """``(N, nv, 2 nv [+ n])`` as ``(d_dq, d_dqd[, d_dtau])``, one state's when ``single``."""
    parts = [matrix[:, :, :nv], matrix[:, :, nv:2 * nv]]
    if matrix.shape[2] > 2 * nv:
        parts.append(matrix[:, :, 2 * nv:])
    return tuple(part[0] if single else part for part in parts)
