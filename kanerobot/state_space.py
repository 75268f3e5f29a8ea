"""The state space of a dynamic model: what simulation, control, energy and the CLI know of a structure.

Every model :func:`kanerobot.derive` returns gives its :class:`StateSpace`
(``model.state_space``), and so does its numeric model (``fn.state_space``,
the same description with the numeric functions of the structure bound:
``qdot``, ``prepare``, the joint rates friction acts on ...).  Simulation
(:mod:`kanerobot.simulation`), the controllers (:mod:`kanerobot.control`),
the energies (:mod:`kanerobot.dynamics.energy`) and the command line read
this one object: none of them knows which structure it runs.  A structure
(its dynamics module) says what differs in the few hooks below; everything
else follows from the sizes and the actuation.

The state is ``x = (q, qd)``:

- ``q`` (``nq``): the configuration, named by :attr:`StateSpace.coordinates`;
- ``qd`` (``nv``): the speeds, ``qdot = qdot(q, qd)`` (``qd`` itself, the
  quaternion's derivative of a free flyer, ``G(q) qd`` under velocity
  constraints);
- ``tau`` (``ntau``): the inputs, doing the power ``tau . (B qd)`` with
  ``B`` the constant :attr:`StateSpace.actuation` (ntau, nv) that picks the
  rates each input drives.  The controlled coordinates are those ``tau``
  drives (one per input); the others (a floating base, a flexible joint's
  link side) are *free*;
- friction acts on the tree's joint rates ``r = R(q) qd``
  (:meth:`StateSpace.joint_rates`), and a force ``f`` on them is the
  torques ``P f`` with ``P = B R^T`` (:meth:`StateSpace.force_map`).

Examples
--------
>>> import kanerobot as kr
>>> s = kr.derive(kr.load(kr.frames_path("satellite"))).state_space
>>> s.kind, (s.nq, s.nv, s.ntau), s.coordinates[:7]
('floating base', (10, 9, 3), ('x', 'y', 'z', 'qx', 'qy', 'qz', 'qw'))
>>> s.layout
'q (10: base x y z, quaternion x y z w, joints 1, 2, 3) then qd (9: base v x y z and w x y z in frame 0, joint rates 1, 2, 3)'
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from kanerobot.errors import KaneRobotError

__all__ = ["StateSpace"]


@dataclasses.dataclass(frozen=True, eq=False)
class StateSpace:
    """The state ``(q, qd)``, the inputs ``tau`` and the structure-specific maps of one model.

    Built by each structure's model (``model.state_space``) and numeric
    model (``fn.state_space``, with :attr:`fn` and the numeric hooks set).

    Attributes
    ----------
    kind : str
        The structure: ``"fixed base"``, ``"closed loop"``, ``"wheeled
        base"``, ``"flexible joints"`` or ``"floating base"`` (for messages
        and results; nothing branches on it).
    adjective : str
        ``"a <adjective> robot"`` in the command line's messages
        (``"serial"``, ``"closed-loop"``, ``"floating-base"`` ...).
    name : str
        The robot's name.
    coordinates : tuple of str
        Names of the columns of ``q`` (joint labels, base ``x .. qw``, the
        motors ``qr<j>``).
    q_names, qd_names : tuple of str
        The model's symbols of ``q`` and ``qd`` (``th1``, ``QP1``, ``vx``
        ...), as the command line lists them.
    torques : tuple of str
        Names of the entries of ``tau``.
    layout_q, layout_qd, tau_layout : str
        What ``q``, ``qd`` and ``tau`` hold, as error messages say it.
    actuation : numpy.ndarray, shape (ntau, nv)
        ``B``: ``tau`` does the power ``tau . (B qd)``; each row picks the
        one rate its input drives.
    controlled : tuple of int
        The columns of ``q`` a controller tracks, one per input.
    controlled_labels : tuple of str
        Their names.
    aliases : dict
        More names of columns of ``q`` (a flexible joint's label for its
        link side, ``r<j>`` for its motor).
    origin : numpy.ndarray, shape (nq,)
        The configuration at rest at the origin (joints 0, unit quaternion).
    origin_is_state : bool
        Whether :attr:`origin` is a state of the model (not of a closed
        loop, not necessarily of a wheeled base's rolling constraints).
    q_note : str
        What the command line adds after the names of ``q`` (``" (a closed
        configuration)"``).
    joint_state : bool
        Whether the programs take the groups ``q, qd, qdd, tau`` and the
        wrenches (fixed base, closed loops): the command line's export
        names them; other structures' programs take their state symbols.
    link_columns : tuple of int or None
        The columns of ``q`` (and ``qd``) of a rigid robot's joints, where a
        structure has more coordinates than the robot has joints (the link
        side of flexible joints); None otherwise.
    tree : Robot
        The rigid tree whose links carry the mass (the energies) and whose
        joints carry the friction coefficients.
    joints : tuple of str
        The labels of the tree's joint rates ``r = R qd``.
    joint_columns : tuple of int
        The columns of ``q`` holding the tree's joint variables.
    program_inputs : tuple or None
        ``((group, "q" | "qd" | "tau", slice), ...)``: how a state fills the
        input groups of the compiled programs; None when the numeric model
        is not a program (constrained structures).
    fn : numeric model or None
        The numeric model the hooks belong to (None for ``model.state_space``).
    """

    kind: str
    adjective: str
    name: str
    coordinates: tuple
    q_names: tuple
    qd_names: tuple
    torques: tuple
    layout_q: str
    layout_qd: str
    tau_layout: str
    actuation: np.ndarray
    controlled: tuple
    controlled_labels: tuple
    origin: np.ndarray
    tree: Any
    joints: tuple
    origin_is_state: bool = True
    q_note: str = ""
    joint_state: bool = False
    aliases: dict = dataclasses.field(default_factory=dict)
    link_columns: tuple | None = None
    joint_columns: tuple | None = None
    program_inputs: tuple | None = None
    # ---- numeric hooks, set by the structure's numeric model (None: the default)
    fn: Any = None
    values: dict | None = None
    #: ``qdot(q, qd)``; default ``qd``.
    qdot_map: Callable | None = None
    #: ``integrate(q, qd, dt)`` where the structure has an exact map; default Runge-Kutta on :meth:`qdot`.
    integrate_map: Callable | None = None
    #: ``prepare(q)``: the configuration the model is evaluated at; default ``q``.
    prepare_map: Callable | None = None
    #: ``start(q, what)``: check (and normalise) a starting configuration.
    start_check: Callable | None = None
    #: ``R(q)`` (nr, nv) batch-capable ``rates(q, qd)``, and ``c(q, qd)``: ``rdot = R qdd + c``.
    rate_matrix: Callable | None = None
    rate_values: Callable | None = None
    rate_bias_map: Callable | None = None
    #: ``monitors(q_raw, q, qd)``: ``{name: array}`` along a run.
    monitor_map: Callable | None = None
    #: ``(R0, P0)`` of frame 0 for a batch of configurations; default the identity at the origin.
    base_pose: Callable | None = None
    #: ``U_e(q)`` of a batch: the springs' energy; default 0.
    elastic_energy: Callable | None = None
    #: ``configuration(p)``: a configuration whose controlled coordinates are ``p``.
    configuration_map: Callable | None = None
    #: The controller's inertia and gravity where they are not the model's reduced ones (flexible joints).
    control_inertia: Callable | None = None
    control_gravity: Callable | None = None
    #: ``k`` (ntau,): joint stiffnesses (flexible joints).
    stiffness: Callable | None = None
    #: Why computed torque cannot run on this model (None: it can).
    not_rigid: str | None = None

    # ------------------------------------------------------------ sizes
    @property
    def nq(self):
        return len(self.coordinates)

    @property
    def nv(self):
        return len(self.qd_names)

    @property
    def ntau(self):
        return len(self.torques)

    @property
    def layout(self):
        """``"q (nq: ...) then qd (nv: ...)"``, as error messages say the state."""
        return f"q ({self.nq}: {self.layout_q}) then qd ({self.nv}: {self.layout_qd})"

    @functools.cached_property
    def controlled_rates(self):
        """The columns of ``qd`` the inputs drive (one per input), in input order."""
        return tuple(int(np.flatnonzero(row)[0]) for row in self.actuation)

    @functools.cached_property
    def free_rates(self):
        """The columns of ``qd`` no input drives (a floating base's six)."""
        driven = set(self.controlled_rates)
        return tuple(k for k in range(self.nv) if k not in driven)

    @staticmethod
    def of(fn, refusal):
        """``fn.state_space`` of a numeric model ``fn``, else the error ``"<refusal> <type>: give ..."``.

        Examples
        --------
        >>> StateSpace.of(object(), "no energy for")
        Traceback (most recent call last):
          ...
        kanerobot.errors.KaneRobotError: no energy for object: give the numeric model of a fixed-base, closed-loop, wheeled, flexible-joint or floating-base robot (kr.derive(robot).numeric(values))
        """
        space = getattr(fn, "state_space", None)
        if not isinstance(space, StateSpace) or space.fn is not fn:
            raise KaneRobotError(
                f"{refusal} {type(fn).__name__}: give the numeric model of a fixed-base, closed-loop, wheeled, "
                f"flexible-joint or floating-base robot (kr.derive(robot).numeric(values))"
            )
        return space

    def bind(self, fn, **hooks):
        """This state space with the numeric model ``fn`` and its hooks."""
        return dataclasses.replace(self, fn=fn, **hooks)

    def _numeric(self, what):
        if self.fn is None:
            raise KaneRobotError(f"{what} needs the numeric model: use model.numeric(values).state_space")

    # ------------------------------------------------------------ states
    def column(self, label):
        """The column of ``q`` named ``label`` (a coordinate or an alias)."""
        label = str(label)
        if label in self.aliases:
            return self.aliases[label]
        if label not in self.coordinates:
            raise KaneRobotError(f"{label!r} is not a coordinate of {self.name}: q holds {', '.join(self.coordinates)}")
        return self.coordinates.index(label)

    def split(self, x, what=None):
        """``(q, qd)`` of a state ``x`` (copies), checked: its length, finite values, the structure's own check."""
        what = what or f"x0 for {self.name}"
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or x.shape[0] != self.nq + self.nv:
            raise KaneRobotError(f"{what} must have {self.nq + self.nv} values: {self.layout}; got shape {np.shape(x)}")
        if not np.all(np.isfinite(x)):
            raise KaneRobotError(f"{what} has values that are not finite: {x.tolist()}")
        q, qd = x[: self.nq].copy(), x[self.nq :].copy()
        if self.start_check is not None:
            q = self.start_check(q, what)
        return q, qd

    def prepare(self, q):
        """The configuration the model is evaluated at (loops closed, quaternion normalised)."""
        return q if self.prepare_map is None else self.prepare_map(q)

    def qdot(self, q, qd):
        """``dq/dt`` at the state."""
        return qd if self.qdot_map is None else self.qdot_map(q, qd)

    def integrate(self, q, qd, dt, steps=8):
        """The configuration reached from ``q`` moving at constant speeds ``qd`` for ``dt``.

        The structure's own map where it has one (the exponential of a free
        flyer's twist); otherwise ``dq/dt = qdot(q, qd)`` by ``steps``
        classical Runge-Kutta steps, exact where ``qdot`` does not depend on
        ``q`` (joints, flexible joints) and of fourth order where it does
        (``G(q) qd`` of wheels and loops), then :meth:`prepare`.
        """
        q = np.array(q, dtype=float)
        if self.integrate_map is not None:
            return self.integrate_map(q, qd, dt)
        h = dt / steps
        for _ in range(steps):
            k1 = self.qdot(q, qd)
            k2 = self.qdot(q + 0.5 * h * k1, qd)
            k3 = self.qdot(q + 0.5 * h * k2, qd)
            k4 = self.qdot(q + h * k3, qd)
            q = q + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return self.prepare(q)

    def sample(self, rng):
        """A random state ``(q, qd)`` in [-1, 1] (prepared)."""
        return self.prepare(rng.uniform(-1, 1, self.nq)), rng.uniform(-1, 1, self.nv)

    def configuration(self, p):
        """A configuration whose controlled coordinates are ``p``, the others at :attr:`origin`."""
        if self.configuration_map is not None:
            return self.configuration_map(p)
        q = self.origin.copy()
        q[list(self.controlled)] = p
        return q

    # ------------------------------------------------------------ inputs and friction
    def actuated_rates(self, qd):
        """``B qd``: the rates the inputs work on (one state or a batch)."""
        return np.asarray(qd)[..., self._driven]

    def joint_rates(self, q, qd, qdot=None):
        """``r = R qd``: the tree's joint rates, where friction acts (one state or a batch)."""
        if self.rate_values is not None:
            # qdot is the rates when each coordinate is one joint's rate (not a quaternion's, not a floating base's)
            return qdot if qdot is not None and self.nq == len(self.joints) else self.rate_values(q, qd)
        return np.asarray(qd)[..., self._rates]

    @functools.cached_property
    def rate_columns(self):
        """The columns of ``qd`` that are the joint rates, when ``R`` is a selection."""
        return tuple(range(self.nv - len(self.joints), self.nv))

    @functools.cached_property
    def _driven(self):
        return np.array(self.controlled_rates, dtype=int)

    @functools.cached_property
    def _rates(self):
        return np.array(self.rate_columns, dtype=int)

    def rate_map(self, q):
        """``R(q)`` (nr, nv)."""
        if self.rate_matrix is not None:
            return self.rate_matrix(q)
        return np.eye(self.nv)[list(self.rate_columns)]

    def rate_bias(self, q, qd):
        """``c(q, qd)`` (nr,): ``rdot = R qdd + c``."""
        return np.zeros(len(self.joints)) if self.rate_bias_map is None else self.rate_bias_map(q, qd)

    def force_map(self, q):
        """``P = B R^T`` (ntau, nr): a force ``f`` on the joint rates is the inputs ``P f``.

        ``B`` picks one rate per input, so ``P`` is the driven columns of
        ``R``, transposed: no product, and laid out as ``R^T`` is, so that
        ``P f`` rounds as ``R^T f`` does.
        """
        return np.ascontiguousarray(self.rate_map(q)[:, self._driven]).T

    @property
    def direct_friction(self):
        """Whether ``P`` is the identity: friction on the rates ``tau`` drives, one to one."""
        if self.rate_matrix is not None or len(self.joints) != self.ntau:
            return False
        return bool(np.array_equal(self.force_map(None), np.eye(self.ntau)))

    def monitors(self, q_raw, q, qd):
        """``{name: (N, ...) array}`` of the structure along a run (closure, quaternion norm ...)."""
        return {} if self.monitor_map is None else self.monitor_map(q_raw, q, qd)

    # ------------------------------------------------------------ control
    def reduced(self, M, b=()):
        """``M`` (and the bias ``b``) of the rates with the free rates eliminated at zero force.

        ``M_aa - M_af M_ff^-1 M_fa`` and ``b_a - M_af M_ff^-1 b_f`` (the
        floating base's free base); ``M`` itself when every rate is driven.
        """
        a, f = list(self.controlled_rates), list(self.free_rates)
        M = np.asarray(M, dtype=float).reshape(self.nv, self.nv)
        b = [np.asarray(x, dtype=float).reshape(self.nv) for x in b]
        if not f:
            return (M, *b) if b else M
        X = np.linalg.solve(M[np.ix_(f, f)], np.column_stack([M[np.ix_(f, a)]] + [x[f] for x in b]))
        Maf = M[np.ix_(f, a)].T
        out = [M[np.ix_(a, a)] - Maf @ X[:, : len(a)]] + [x[a] - Maf @ X[:, len(a) + k] for k, x in enumerate(b)]
        return tuple(out) if b else out[0]

    def free_rates_at_rest(self, q, v):
        """``qd`` with the driven rates ``v`` and the free ones at zero momentum ``(A qd)_free = 0``."""
        self._numeric("free_rates_at_rest")
        qd = np.zeros(self.nv)
        qd[list(self.controlled_rates)] = v
        f = list(self.free_rates)
        if f:
            A = np.asarray(self.fn.mass_matrix(q), dtype=float).reshape(self.nv, self.nv)
            a = list(self.controlled_rates)
            qd[f] = -np.linalg.solve(A[np.ix_(f, f)], A[np.ix_(f, a)] @ np.asarray(v, dtype=float))
        return qd
