"""Energies and power of a robot with bound parameters, numerically.

Every function takes the numeric model of :meth:`DynamicModel.numeric`
(``fn``: fixed-base serial or tree, closed loop, wheeled base, flexible
joints or floating base) and one state or a batch, as the model's own functions do:

    T = 1/2 qd^T A(q) qd                                   kinetic energy
    U_g = -sum_j g . (M_j P_j + R_j MS_j)                  potential of gravity
    U_e = 1/2 sum_f k_f (q_f - q_rf)^2                     potential of the joint springs
    E = T + U_g + U_e                                      total energy
    dE/dt = qd . (tau - friction)                          power balance

``A`` is the model's inertia matrix (with the rotor inertias ``IA`` as the
model puts them), ``g`` the gravity acceleration (``robot.base.G``: in frame
0, or in the world frame for a floating base), ``P_j`` and ``R_j`` the
position and orientation of frame j (numeric forward kinematics), ``M_j`` and
``MS_j`` its mass and first moments (SYMORO's ``M``, ``MX MY MZ``): ``M_j
P_j + R_j MS_j`` is ``M_j`` times the position of the centre of mass.  The
power balance holds because ``Adot - 2C`` is skew-symmetric and
``Q = dU/dq``: ``dE/dt = qd.(A qdd + 1/2 Adot qd + Q) = qd.(tau - C qd - Q -
f + 1/2 Adot qd + Q) = qd.(tau - f)``.

What each structure's coordinates are (its
:class:`~kanerobot.state_space.StateSpace`, ``fn.state_space``, says it:
these functions read that and nothing else of the structure):

- fixed base (:class:`~kanerobot.dynamics.model.NumericDynamics`): ``q``,
  ``qd``, ``tau`` of the n joints;
- closed loops and wheeled bases (:class:`~kanerobot.dynamics.closed_loop.ClosedLoopDynamics`,
  :class:`~kanerobot.dynamics.wheeled.WheeledDynamics`): ``q`` every joint
  (a closed configuration), ``qd`` and ``tau`` the independent speeds (the
  active joints of a loop); friction acts on every joint's rate ``G qd``
  (the contact forces of rolling wheels do no work);
- flexible joints (:class:`~kanerobot.dynamics.flexible.NumericFlexible`):
  ``q = z = (q, q_r)``, ``qd = zd``; ``tau`` the n joint and motor torques;
  the springs store ``U_e``; friction acts on the rigid joints and motors;
- floating base (the same :class:`~kanerobot.dynamics.model.NumericDynamics`
  on a free-flyer root): pinocchio's ``q`` (7 + n) and ``qd`` (6 + n); ``tau`` the n joint torques.

A joint of several speeds (spherical, planar) has its ``nq`` columns in
``q`` and ``nv`` in ``qd`` and ``tau``; its friction coefficients act on
each of its speeds.

Symbols the numeric model does not need (a mass whose link only turns about
the vertical, say) are taken as 0 unless given in ``values``: they change
``U`` by a constant only, since the gravity torques ``Q = dU/dq`` do not
depend on them.  The base is taken as fixed (``W0 = V0 = 0``): a base of
known motion makes ``T`` the energy relative to it.

Examples
--------
>>> import numpy as np, kanerobot as kr
>>> robot = kr.load(kr.frames_path("planar2"))
>>> values = {name: 0.0 for name in kr.derive(robot).parameters}
>>> values.update(L1=1.0, M1=1.0, M2=1.0, MX1=0.5, MX2=0.5, ZZ1=1 / 3, ZZ2=1 / 3, G3=-9.81)
>>> fn = kr.derive(robot).numeric(values, backend="numpy")
>>> round(float(kinetic_energy(fn, [0.0, 0.0], [1.0, 0.0])), 12)   # two unit rods turning as one: I = 8/3
1.333333333333
"""

import contextlib
import weakref
from typing import Any

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.state_space import StateSpace

__all__ = [
    "centres_of_mass",
    "elastic_energy",
    "friction_torques",
    "gravity_energy",
    "kinetic_energy",
    "potential_energy",
    "power",
    "total_energy",
]

_CACHE: "weakref.WeakKeyDictionary[object, _Energy]" = weakref.WeakKeyDictionary()  # fn -> _Energy


# ------------------------------------------------------------ public API
def kinetic_energy(fn, q, qd):
    """Kinetic energy ``T = 1/2 qd^T A(q) qd``.

    Parameters
    ----------
    fn : numeric model
        What ``model.numeric(values)`` returns (see the module notes).
    q : array_like, shape (nq,) or (N, nq)
    qd : array_like, shape (nv,) or (N, nv)

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    A one-link arm (``flexarm1`` as a rigid joint is the pendulum of
    ``tests``): with ``ZZ1 = 0.5`` turning at 2 rad/s, ``T = 1/2 ZZ1 qd^2``.

    >>> import numpy as np, kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 0.0)
    >>> values.update(ZZ1=0.5, M1=1.0, L1=1.0)
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> float(kinetic_energy(fn, [0.3, 0.0], [2.0, 0.0]))
    1.0
    """
    s = energy_structure(fn)
    (q, single), (qd, _) = s.configuration(q), s.velocity(qd)
    A = np.asarray(fn.mass_matrix(q), dtype=float).reshape(len(q), qd.shape[1], qd.shape[1])
    T = 0.5 * np.einsum("ni,nij,nj->n", qd, A, qd)
    return _out(T, single)


def gravity_energy(fn, q, values=None):
    """Potential energy of gravity ``U_g = -sum_j g . (M_j P_j + R_j MS_j)``.

    Computed from the positions of the links by numeric forward kinematics
    (not from the model's gravity torques, the tests hold it against): ``P_j``,
    ``R_j`` the placement of frame j in frame 0 (in the world frame for a
    floating base, through the base pose of ``q``).

    Parameters
    ----------
    fn : numeric model
    q : array_like, shape (nq,) or (N, nq)
    values : mapping, optional
        Values of symbols the numeric model does not carry (they only shift
        ``U_g`` by a constant; 0 otherwise).

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    A unit rod of ``planar2`` held horizontal along x0 with gravity along
    -x0 (``G1 = -9.81``) has ``U = -g . M c = 9.81 * 0.5``:

    >>> import numpy as np, kanerobot as kr, dataclasses
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> robot = dataclasses.replace(robot, base=kr.Base.from_values(G=["G1", 0, 0]))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 0.0)
    >>> values.update(M1=1.0, MX1=0.5, ZZ1=0.25, L1=1.0, G1=-9.81)
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> round(float(gravity_energy(fn, [0.0, 0.0])), 12)
    4.905
    """
    s = energy_structure(fn, values)
    q, single = s.configuration(q)
    moments, _ = s.bodies.first_moments(*s.placement(q))
    U = -sum(moment @ s.gravity for moment in moments.values()) if moments else np.zeros(len(q))
    return _out(np.asarray(U, dtype=float).reshape(len(q)), single)


def elastic_energy(fn, q):
    """Potential energy of the joint springs ``U_e = 1/2 sum_f k_f (q_f - q_rf)^2``.

    Written ``-1/2 Gamma_f . (q_f - q_rf)`` with the model's elastic torques
    ``Gamma_f = -k (q_f - q_rf)``; zero for a robot without flexible joints.

    Parameters
    ----------
    fn : numeric model
    q : array_like, shape (nq,) or (N, nq)

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("flexarm1")))
    >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
    >>> fn = model.numeric(values, backend="numpy")
    >>> float(elastic_energy(fn, [0.0, 0.1]))          # 1/2 K1 0.1^2
    0.5
    """
    s = energy_structure(fn)
    q, single = s.configuration(q)
    return _out(s.elastic(q), single)


def potential_energy(fn, q, values=None):
    """Potential energy ``U = U_g + U_e``: gravity and joint springs.

    See :func:`gravity_energy` and :func:`elastic_energy`.

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("flexarm1")))   # x0 points down, G1 = 9.81
    >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
    >>> fn = model.numeric(values, backend="numpy")
    >>> round(float(potential_energy(fn, [0.0, 0.1])), 12)      # hanging: -MX1 G1, spring 1/2 K1 0.1^2
    -9.31
    """
    return gravity_energy(fn, q, values) + elastic_energy(fn, q)


def total_energy(fn, q, qd, values=None):
    """Total mechanical energy ``E = T + U_g + U_e``.

    Without input torques and friction it is constant along a motion of the
    model; otherwise ``dE/dt`` is :func:`power`.

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("flexarm1")))
    >>> values = {"ZZ1": 0.5, "MX1": 1.0, "MY1": 0.0, "G1": 9.81, "IA1": 0.1, "FV1": 0.0, "FS1": 0.0, "K1": 100.0}
    >>> fn = model.numeric(values, backend="numpy")
    >>> round(float(total_energy(fn, [0.0, 0.1], [2.0, 0.0])), 12)   # + 1/2 ZZ1 2^2
    -8.31
    """
    return kinetic_energy(fn, q, qd) + potential_energy(fn, q, values)


def friction_torques(fn, q, qd):
    """Joint friction ``f = FV qdot + FS sign(qdot)`` on the rates it acts on.

    Parameters
    ----------
    fn : numeric model
    q : array_like, shape (nq,) or (N, nq)
    qd : array_like, shape (nv,) or (N, nv)

    Returns
    -------
    rates : numpy.ndarray, shape (nr,) or (N, nr)
        The rates friction acts on: ``qd`` of a fixed base; every joint's
        rate ``G qd`` of a closed loop or a wheeled base (n); ``zd`` of flexible joints
        (friction on the rigid joints and the motors, none on a flexible
        joint's link side); the joint rates ``qd[6:]`` of a floating base.
    torques : numpy.ndarray, shape of ``rates``
        The friction torques on them (SYMORO's ``FV_j``, ``FS_j`` of joint
        j's link).

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 1.0)
    >>> values.update(FV1=0.5, FS1=0.1, FV2=0.0, FS2=0.0, MY2=0.0)  # MY2 = 0: a body (ZZ2 >= MX2**2 / M2)
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> rates, torques = friction_torques(fn, [0.0, 0.0], [2.0, -1.0])
    >>> torques.tolist()
    [1.1, 0.0]
    """
    s = energy_structure(fn)
    (q, single), (qd, _) = s.configuration(q), s.velocity(qd)
    rates = s.friction_rates(q, qd)
    torques = s.FV * rates + s.FS * np.sign(rates) + 0.0  # no -0.0
    return _out(rates, single), _out(torques, single)


def power(fn, q, qd, tau):
    """Power ``dE/dt = qd . tau - (friction rates) . f`` put into the robot.

    The power of the joint (and motor) torques ``tau`` less what friction
    dissipates: the time derivative of :func:`total_energy` along the
    motion the model gives for ``tau`` (module notes).

    Parameters
    ----------
    fn : numeric model
    q : array_like, shape (nq,) or (N, nq)
    qd : array_like, shape (nv,) or (N, nv)
    tau : array_like, shape (ntau,) or (N, ntau)
        Joint torques: n of a fixed base, the generalized forces of the
        independent speeds of a closed loop (its active joints) or a wheeled
        base, the joint and motor torques of flexible joints, the n joint
        torques of a floating base.

    Returns
    -------
    float or numpy.ndarray, shape (N,)

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 1.0)
    >>> values.update(FV1=0.5, FS1=0.0, FV2=0.0, FS2=0.0, MY2=0.0)  # MY2 = 0: a body (ZZ2 >= MX2**2 / M2)
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> float(power(fn, [0.0, 0.0], [2.0, 0.0], [3.0, 1.0]))   # 3*2 - 0.5*2*2
    4.0
    """
    s = energy_structure(fn)
    (q, single), (qd, _) = s.configuration(q), s.velocity(qd)
    tau, _ = _states(tau, s.ntau, "tau", s.tau_layout)
    rates = s.friction_rates(q, qd)
    dissipated = np.sum(rates * (s.FV * rates + s.FS * np.sign(rates)), axis=1)
    return _out(np.sum(s.actuated_rates(qd) * tau, axis=1) - dissipated, single)


def centres_of_mass(fn, q, values=None):
    """Positions of the links' centres of mass, ``P_j + R_j MS_j / M_j``.

    In frame 0 (in the world frame for a floating base).

    Parameters
    ----------
    fn : numeric model
    q : array_like, shape (nq,) or (N, nq)
    values : mapping, optional
        Values of masses and first moments the numeric model does not carry.

    Returns
    -------
    dict
        ``{link label: numpy.ndarray of shape (3,) or (N, 3)}`` for every
        link whose mass is known and positive.

    Examples
    --------
    >>> import kanerobot as kr
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> values = dict.fromkeys(kr.derive(robot).parameters, 1.0)
    >>> values.update(MX2=0.5, MY2=0.0, MZ2=0.0, M2=1.0, L1=1.0)
    >>> fn = kr.derive(robot).numeric(values, backend="numpy")
    >>> centres_of_mass(fn, [0.0, 0.0])["2"].tolist()
    [1.5, 0.0, 0.0]
    """
    s = energy_structure(fn, values)
    q, single = s.configuration(q)
    moments, masses = s.bodies.first_moments(*s.placement(q))
    return {label: _out(moment / masses[label], single) for label, moment in moments.items() if masses[label] > 0}


# ---------------------------------------------------------------- helpers
def _out(x, single):
    if single:
        return float(x[0]) if np.ndim(x) == 1 else x[0]
    return x


def _states(x, size, what, layout):
    array = np.asarray(x, dtype=float)
    single = array.ndim == 1
    array = np.atleast_2d(array)
    if array.ndim != 2 or array.shape[1] != size:
        raise KaneRobotError(f"{what} must have {size} values ({layout}), shape ({size},) or (N, {size}); got shape {np.shape(x)}")
    return array, single


def _number(expr, symbols):
    """``expr`` with ``symbols`` bound, the symbols left over taken as 0."""
    value = sympy.sympify(sympy.sympify(expr).xreplace(symbols))
    if value.free_symbols:
        value = value.xreplace({s: 0 for s in value.free_symbols})
    return float(value)


class _Bodies:
    """Numeric forward kinematics of a tree: each link's ``M_j P_j + R_j MS_j``."""

    def __init__(self, robot, symbols):
        from kanerobot.robot.description import BASE

        self.labels = robot.joint_labels
        index, k = {}, 0
        for label in robot.joint_labels:  # the columns of q of each joint (nq of them)
            index[label], k = slice(k, k + robot.frame(label).joint.nq), k + robot.frame(label).joint.nq
        # (label, antecedent, columns of q or None, function or constant 3x4): the last is
        # the lambdified function where there are columns, the array where None (Any: tied to the third)
        self.frames: list[tuple[str, str, slice | None, Any]] = []
        for frame in robot.frames:
            T = sympy.Matrix(frame.transform())[:3, :]
            if frame.is_joint:
                x = list(frame.coordinates)
                T = T.xreplace({s: v for s, v in symbols.items() if s not in x})
                T = T.xreplace({s: 0 for s in T.free_symbols if s not in x})
                f = sympy.lambdify(x, list(T), modules="numpy")
                self.frames.append((frame.label, frame.antecedent, index[frame.label], f))
            else:
                constant = np.array([_number(e, symbols) for e in T], dtype=float).reshape(3, 4)
                self.frames.append((frame.label, frame.antecedent, None, constant))
        self.links = {}
        for label in robot.links:
            d = robot.dynamics[label]
            known = not {str(s) for s in sympy.sympify(d["M"]).free_symbols} - {str(s) for s in symbols}
            M = _number(d["M"], symbols)
            MS = np.array([_number(d[n], symbols) for n in ("MX", "MY", "MZ")])
            self.links[label] = (M, MS, known)
        self.base = BASE

    def first_moments(self, R0, P0, q):
        """``({label: (N, 3) M P + R MS}, {label: M})`` for links whose mass is known;
        links of unknown mass count in the moments (0 for their unknown symbols)."""
        N = len(q)
        R = {self.base: R0}
        P = {self.base: P0}
        for label, antecedent, column, f in self.frames:
            if column is None:
                local = np.broadcast_to(f, (N, 3, 4))
            else:
                entries = f(*q[:, column].T)
                local = np.stack([np.broadcast_to(np.asarray(e, dtype=float), (N,)) for e in entries], axis=1).reshape(N, 3, 4)
            Ra, Pa = R[antecedent], P[antecedent]
            R[label] = Ra @ local[:, :, :3]
            P[label] = Pa + np.einsum("nij,nj->ni", Ra, local[:, :, 3])
        moments, masses = {}, {}
        for label, (M, MS, known) in self.links.items():
            moments[label] = M * P[label] + R[label] @ MS
            masses[label] = M if known else 0.0
        return moments, masses


class _Energy:
    """What the energy functions need of one numeric model, read off its state space.

    The sizes and layouts, the bodies of the tree (numeric forward
    kinematics), gravity, the friction coefficients of the tree's joints;
    the structure's own maps (base pose, joint rates, springs) are the
    state space's.
    """

    def __init__(self, fn, extra):
        from kanerobot.dynamics.common import link_parameter

        space = StateSpace.of(fn, "no energy for")
        self.space = space
        self.name = space.name
        values = dict(space.values)
        values.update({str(k): float(v) for k, v in (extra or {}).items()})
        symbols = {sympy.Symbol(k): sympy.Float(float(v)) for k, v in values.items()}
        tree = space.tree
        self.gravity = np.array([_number(g, symbols) for g in fn.model.robot.base.G], dtype=float)
        self.bodies = _Bodies(tree, symbols)
        self.FV = np.array([_number(link_parameter(tree, label, "FV"), symbols) for label in space.joints])
        self.FS = np.array([_number(link_parameter(tree, label, "FS"), symbols) for label in space.joints])
        # the expressions too: the simulation re-binds their symbols to apply its own Coulomb law
        self.FS_expressions = [sympy.sympify(link_parameter(tree, label, "FS")) for label in space.joints]
        self.friction_labels = list(space.joints)
        self.ntau, self.tau_layout = space.ntau, f"{space.ntau} joint torques"

    def configuration(self, q):
        return _states(q, self.space.nq, "q", self.space.layout_q)

    def velocity(self, qd):
        return _states(qd, self.space.nv, "qd", self.space.layout_qd)

    def placement(self, q):
        """``(R0, P0, joints)``: the pose of frame 0 and the joint values of the tree."""
        space = self.space
        joints = q if space.joint_columns is None else q[:, list(space.joint_columns)]
        if space.base_pose is None:
            return np.broadcast_to(np.eye(3), (len(q), 3, 3)), np.zeros((len(q), 3)), joints
        return (*space.base_pose(q), joints)

    def elastic(self, q):
        return np.zeros(len(q)) if self.space.elastic_energy is None else self.space.elastic_energy(q)

    def friction_rates(self, q, qd):
        return self.space.joint_rates(q, qd)

    def actuated_rates(self, qd):
        """The rates the torques ``tau`` work on."""
        return self.space.actuated_rates(qd)


def energy_structure(fn, values=None):
    """What the energy functions and the simulation need to know of a numeric model ``fn``.

    Its bodies, gravity and friction coefficients, with the sizes and maps
    of its :class:`~kanerobot.state_space.StateSpace` (``fn.state_space``),
    built once per ``fn`` and cached (rebuilt when ``values`` rebind the
    parameters).
    """
    if values:
        return _Energy(fn, values)
    try:
        return _CACHE[fn]
    except (KeyError, TypeError):
        s = _Energy(fn, None)
        with contextlib.suppress(TypeError):  # an unhashable model is not cached
            _CACHE[fn] = s
        return s
