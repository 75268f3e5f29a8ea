"""Nonlinear model predictive control on the CasADi graphs of a model.

:class:`MPC` is a :class:`~kanerobot.control.Controller` (``tau =
controller(t, q, qd)``) for :func:`kanerobot.simulate`,
:func:`kanerobot.cross_validate` and :func:`kanerobot.campaign`, like
:class:`~kanerobot.control.ComputedTorque` and
:class:`~kanerobot.control.BalanceLQR`.  Every ``dt`` seconds (a *tick*) it
solves, over a horizon of ``N`` steps of ``dt``::

    min  sum_k dt [(x_k - r_k)^T Q (x_k - r_k) + (u_k - u_r,k)^T R (u_k - u_r,k)] + (x_N - r_N)^T P (x_N - r_N)
    s.t. x_0 = the state measured,  x_{k+1} = F(x_k, u_k),  u_min <= u_k <= u_max

and holds ``tau = actuation @ u_0`` until the next tick (zero-order hold at
the MPC's rate ``1 / dt``).

- **State and inputs**: those of :func:`kanerobot.control.linearize` and of
  the LQR: ``x = (p, v)``, the controlled coordinates and their rates (every
  joint of a fixed base; the wheels, pitch and body joints of a wheeled base,
  not its posture x, y, theta, on which the dynamics does not depend); ``u``
  the motors' torques, ``tau = actuation @ u`` (Krang: the wheel motors react
  on the unactuated pitch, :func:`kanerobot.control.actuation_matrix`).
- **Prediction model** (:class:`PredictionModel`): the model's mass matrix
  ``A(q)`` and bias ``H(q, qd)`` as CasADi SX graphs (``model.casadi`` on a
  fixed base; on a wheeled base, whose models are projections, the SX graphs
  of its symbolic projected programs, :func:`casadi_functions`), ``qdd =
  A^-1 (actuation u - H)``, solved by a numeric LU in the graph;
  Coulomb friction (``FS``) is left out of it (``sign`` has no derivative; the
  plant keeps it).  ``F`` is one RK4 step of ``dt`` (``substeps`` of them),
  its Jacobians by the chain rule through the stages, each stage's from the
  Jacobian of the inverse dynamics ``A(q) a + H(q, v)`` at fixed ``a``
  (``dqdd/dx = -A^-1 d(A a + H)/dx``): 2.5 ms per interval on Krang's 38
  states and 18 motors, where CasADi's own Jacobian of the solved graph takes 50.
- **Multiple shooting, real-time iteration** (Diehl, Bock, Schloeder 2005):
  the decision variables are every ``x_k`` and ``u_k``; each tick makes
  ``iterations`` (default 1) Gauss-Newton SQP steps from the previous
  solution shifted by one step (its last step repeated), each a
  sparse QP solved by CasADi's bundled ``qrqp`` (an active-set solver,
  exact; ``solver="osqp"``, an ADMM, is slower here).  One step per tick is
  the real-time iteration: on Krang (38 states, 18 motors, N = 10, dt =
  0.05 s: 20 Hz) a tick takes about 70 ms on one core of a 2-core machine
  (25 ms for the ten intervals' Jacobians, the rest the sparse QP), 100-130
  ms when the other core is busy: 1.5 to 2.5 times slower than real time in
  Python.  IPOPT to convergence at each tick was not tried: each of its
  iterations needs these Jacobians (and Hessians) again.  On the
  RX-90 (N = 10) a tick takes 20-60 ms.  More ``iterations`` converge to the
  solution of the nonlinear problem.
- **Terminal cost** ``P``: by default the discrete-time Riccati solution of
  the prediction model linearised at the reference's last point (RK4 step's
  Jacobians, cost ``dt Q``, ``dt R``): the infinite-horizon LQR's cost to go,
  so that without active limits the MPC's feedback near the reference is
  the discrete LQR's for any horizon (and the continuous LQR's
  :func:`~kanerobot.control.lqr_balance`, ``K``, to ``O(dt)``).
- **Reference**: a set point (an equilibrium: the LQR's ``q_eq``, ``u_eq``)
  or a :class:`~kanerobot.control.Trajectory` of the controlled coordinates,
  sampled at the horizon's nodes; its inputs ``u_r`` default to those the
  model needs to follow it (least squares through ``actuation``).

**Ticks.**  The MPC is a sampled controller: its ``period`` is ``dt``, so
:func:`kanerobot.simulate` (and :func:`kanerobot.cross_validate`,
:func:`kanerobot.campaign`) calls it once per tick ``t0 + k dt``, at the state
integrated to the tick, holds its torque until the next tick (the
integration restarts there: no step across a tick) and reports that held
torque in ``result.tau``: one solve per tick (``stats["ticks"]``).  Called
by anything else (``kr.right_hand_side``, another integrator, a function
around it), it keeps its own hold: the first call of a run fixes ``t0``;
tick ``k`` starts at ``t0 + k dt``; the first call at or after a tick's start
solves with the state it is given (within one of the integrator's steps of
the tick) and the result is held until the next tick.  An adaptive
integrator goes back in time after a rejected step: a call in an earlier
tick forgets the ticks after it (they are solved again when the integrator
passes them), so that every tick's input comes from the accepted motion.  A
call at ``t0`` after later ticks starts a new run (a campaign's runs share
the controller); :meth:`MPC.reset` does it by hand.

Examples
--------
A planar arm held at an equilibrium, its motors limited to 5 N m:

>>> import numpy as np, kanerobot as kr
>>> from kanerobot.dynamics.parameters import random_parameters
>>> robot = kr.load(kr.frames_path("planar2"))
>>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
>>> mpc = MPC(fn, [0.3, -0.2], horizon=10, dt=0.05, limits=5.0)
>>> result = kr.simulate(fn, None, [0.0, 0.0, 0.0, 0.0], (0.0, 3.0), mpc, t_eval=[3.0])   # sampled at 1 / dt
>>> bool(np.abs(result.q[-1] - [0.3, -0.2]).max() < 1e-3), bool(np.abs(result.tau).max() <= 5.0 + 1e-9)
(True, True)
>>> mpc.stats["ticks"]                                   # one solve per tick: 3 s / 0.05 s
60
"""

import time
from typing import Any

import numpy as np

from kanerobot import control
from kanerobot.codegen.casadi import require_casadi
from kanerobot.errors import KaneRobotError

__all__ = ["MPC", "PredictionModel", "balance_mpc", "casadi_functions", "projected_function"]

#: QP solvers of CasADi's ``conic`` that a tick may use (bundled with the casadi wheel).
SOLVERS = ("qrqp", "osqp")


# ------------------------------------------------------------ the model
def _view(fn):
    """The model's :class:`~kanerobot.control.ControlView`, refused (one line) where ``x = (p, v)`` is not a state:
    as :func:`kanerobot.control.linearize`, a rigid fixed or wheeled base (nothing to close or normalise)."""
    view = control.ControlView(fn)
    if view.space.prepare_map is not None or view.space.not_rigid:
        raise KaneRobotError(f"MPC needs a rigid model whose state is its coordinates and their rates (fixed base or wheeled "
                             f"base); {view.kind} models are not supported")  # fmt: skip
    return view


def _array(x, what, n):
    array = np.asarray(x, dtype=float).reshape(-1) if np.ndim(x) <= 1 else np.asarray(x, dtype=float)
    if array.shape != (n,):
        raise KaneRobotError(f"{what} must be {n} values, got shape {np.shape(x)}")
    return array


def _coulomb_free(model, values):
    """The parameter values in the order of ``model.parameters``, every Coulomb coefficient ``FS<joint>`` at 0."""
    joints = {str(label) for label in getattr(model.robot, "joint_labels", ())}
    return np.array([0.0 if name.startswith("FS") and name[2:] in joints else float(values[name]) for name in model.parameters])


def casadi_functions(fn):
    """``(A, H, p)``: the mass matrix and the bias forces of a numeric model as ``casadi.Function`` s.

    ``A(q, p)`` is (nv, nv), ``H(q, qd, p)`` (nv,), in the numeric model's
    ``q`` and ``qd`` (a wheeled base's independent speeds); ``p`` holds the
    values of ``fn.model.parameters`` with Coulomb friction (``FS``) at 0.
    A fixed-base model gives :meth:`DynamicModel.casadi
    <kanerobot.dynamics.dynamic_model.DynamicModel.casadi>`; a wheeled base,
    whose :meth:`model.casadi` there is not, its symbolic projected programs
    (``A_a = G^T A G``, ``H_a``) printed by the CasADi backend.

    Raises
    ------
    KaneRobotError
        When CasADi is not installed, or for a model with neither.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("diffdrive"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
    >>> A, H, p = casadi_functions(fn)
    >>> q, qd = np.full(7, 0.1), [0.3, -0.2]
    >>> bool(np.allclose(A(q, p).full(), fn.mass_matrix(q))), bool(np.allclose(H(q, qd, p).full().ravel(), fn.h(q, qd)))
    (True, True)
    """
    require_casadi()
    model = fn.model
    values = getattr(fn, "values_by_name", None)
    if values is None:
        values = dict(zip(model.parameters, fn.parameter_values))
    p = _coulomb_free(model, values)
    if hasattr(model, "casadi"):
        return model.casadi("mass_matrix"), model.casadi("h"), p
    has = getattr(model, "has_program", lambda name: False)
    if not (has("mass_matrix") and has("h") and hasattr(model, "program")):
        raise KaneRobotError(f"MPC needs the CasADi graphs of the mass matrix and h of {fn.state_space.kind} models, which have none")
    return projected_function(model, "mass_matrix"), projected_function(model, "h"), p


def projected_function(model, name):
    """A constrained model's symbolic program ``name`` (``mass_matrix`` or ``h``) as a ``casadi.Function`` of (q[, qd], p).

    ``A_a = G^T A G`` and ``H_a`` of a wheeled base (or any :class:`~kanerobot.dynamics.constrained.ConstrainedModel`),
    which has no :meth:`~kanerobot.dynamics.dynamic_model.DynamicModel.casadi`: printed by the CasADi backend from
    ``model.program(name)``, its external wrenches zero; shared by the MPC and :mod:`kanerobot.optimal`.
    """
    import casadi
    import sympy

    from kanerobot.codegen.casadi import casadi_program
    from kanerobot.dynamics.dynamic_model import argument_groups

    wrenches = [s for symbols in model.wrench.values() for s in symbols]
    states = [("q", list(model.q))] + ([("qd", list(model.qd)), ("w", wrenches)] if name == "h" else [])
    groups = argument_groups(states) + [("p", [sympy.Symbol(label) for label in model.parameters])]
    m = len(model.qd)
    built = casadi_program(model.program(name), f"mpc_{name}", groups, outputs=(m, m) if name == "mass_matrix" else None, constant=("p",))
    f = built.function
    if name == "mass_matrix":
        return f
    q, qd, p = casadi.SX.sym("q", len(model.q)), casadi.SX.sym("qd", m), casadi.SX.sym("p", len(model.parameters))
    return casadi.Function("h", [q, qd, p], [f(q, qd, casadi.SX(len(wrenches), 1), p)], ["q", "qd", "p"], ["H"])


class PredictionModel:
    """``xdot = f(x, u)`` of the controlled coordinates and one RK4 interval with its Jacobians, in CasADi.

    Parameters
    ----------
    fn : numeric model
        A rigid fixed or wheeled base (as :func:`kanerobot.control.linearize`).
    q_ref : array_like
        Every joint variable; the coordinates that are not controlled (a
        wheeled base's posture) stay at their values here.
    actuation : array_like (m, k)
        ``tau = actuation @ u``.

    Attributes
    ----------
    nx, nu : int
        ``2 m`` states, ``k`` inputs.
    """

    def __init__(self, fn, q_ref, actuation):
        casadi = require_casadi()
        self.view = view = _view(fn)
        m = view.n
        self.actuation = B = np.asarray(actuation, dtype=float)
        self.nx, self.nu = 2 * m, B.shape[1]
        q_ref = _array(q_ref, "q_ref", view.nq)
        A, H, p = casadi_functions(fn)
        x, u, a = casadi.SX.sym("x", self.nx), casadi.SX.sym("u", self.nu), casadi.SX.sym("a", m)
        q = casadi.SX(casadi.DM(q_ref))
        for i, column in enumerate(view.columns):
            q[column] = x[i]
        qd = casadi.SX(view.nv, 1)
        for i, column in enumerate(view.rate_columns):
            qd[column] = x[m + i]
        mass, bias = A(q, casadi.DM(p)), H(q, qd, casadi.DM(p))
        rates = np.array(view.rate_columns)
        mass, bias = mass[rates, rates], bias[rates]  # the controlled rates (all of them on a fixed or wheeled base)
        #: (A, actuation u - H) at (x, u)
        self.terms = casadi.Function("terms", [x, u], [mass, casadi.mtimes(casadi.DM(B), u) - bias])
        #: d(A a + H)/dx at fixed a: the inverse dynamics' Jacobian, whence dqdd/dx = -A^-1 of it
        self.inverse_jacobian = casadi.Function("inverse_jacobian", [x, a], [casadi.jacobian(casadi.mtimes(mass, a) + bias, x)])
        X, U = casadi.MX.sym("x", self.nx), casadi.MX.sym("u", self.nu)
        self.f = casadi.Function("f", [X, U], [self._rates(X, U)[0]], ["x", "u"], ["xdot"])

    def _rates(self, x, u, jacobians=False):
        """``(xdot, dxdot/dx, dxdot/du)`` (MX; the Jacobians None unless asked)."""
        import casadi

        m = self.nx // 2
        mass, force = self.terms(x, u)
        a = casadi.solve(mass, force, "lapacklu")
        xdot = casadi.vertcat(x[m:], a)
        if not jacobians:
            return xdot, None, None
        da = casadi.solve(mass, casadi.horzcat(-self.inverse_jacobian(x, a), casadi.DM(self.actuation)), "lapacklu")
        top = casadi.horzcat(casadi.DM.zeros(m, m), casadi.DM.eye(m), casadi.DM.zeros(m, self.nu))
        J = casadi.vertcat(top, da)
        return xdot, J[:, : self.nx], J[:, self.nx :]

    def interval(self, dt, substeps=1):
        """``F(x, u) -> (x_next, dx_next/dx, dx_next/du)``: ``substeps`` RK4 steps of ``dt / substeps``, input held."""
        import casadi

        x, u = casadi.MX.sym("x", self.nx), casadi.MX.sym("u", self.nu)
        h = dt / substeps
        z, Zx, Zu = x, casadi.DM.eye(self.nx), casadi.DM.zeros(self.nx, self.nu)
        for _ in range(substeps):
            total, total_x, total_u = 0, 0, 0
            k, kx, ku = None, None, None
            for c, w in ((0.0, 1.0), (0.5, 2.0), (0.5, 2.0), (1.0, 1.0)):
                if k is None:
                    s, sx, su = z, Zx, Zu
                else:
                    s, sx, su = z + c * h * k, Zx + c * h * kx, Zu + c * h * ku
                k, fx, fu = self._rates(s, u, jacobians=True)
                kx, ku = casadi.mtimes(fx, sx), casadi.mtimes(fx, su) + fu
                total, total_x, total_u = total + w * k, total_x + w * kx, total_u + w * ku
            z, Zx, Zu = z + h / 6 * total, Zx + h / 6 * total_x, Zu + h / 6 * total_u
        return casadi.Function("interval", [x, u], [z, Zx, Zu], ["x", "u"], ["x_next", "Fx", "Fu"])


# ------------------------------------------------------------ the controller
def _limits(limits, k, motors, robot):
    """``(lower, upper)`` arrays (k,) of the motors' torques (``-inf``, ``inf`` where unbounded)."""
    if limits is None:  # the robot's effort limits, where it has them
        upper = np.array([getattr(robot.limits.get(label), "effort", None) or np.inf for label in motors], dtype=float)
        return -upper, upper
    if isinstance(limits, tuple) and len(limits) == 2:
        if any(np.size(b) not in (1, k) for b in limits):
            raise KaneRobotError(f"limits must be a bound, {k} bounds or (lower, upper) of {k} motor torques each; got {limits!r}")
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (k,)).copy() for b in limits)
    else:
        bound = np.asarray(limits, dtype=float)
        if bound.size not in (1, k) or bound.ndim > 1:
            raise KaneRobotError(f"limits must be a bound, {k} bounds or (lower, upper) of {k} motor torques each; got shape {bound.shape}")
        upper = np.broadcast_to(np.abs(bound), (k,)).copy()
        if np.any(bound < 0):
            raise KaneRobotError(f"a torque bound must be >= 0 (|u| <= bound), got {bound.tolist()}")
        lower = -upper
    bad = np.flatnonzero(~(lower <= upper) | np.isnan(lower) | np.isnan(upper))
    if bad.size:
        j = int(bad[0])
        raise KaneRobotError(f"torque limits of motor {motors[j]}: lower {lower[j]:g} > upper {upper[j]:g}; give lower <= upper")
    return lower, upper


def _weights(value, size, what, default):
    W = np.asarray(default if value is None else value, dtype=float)
    if W.ndim == 0:
        W = np.full(size, float(W))
    W = np.diag(W) if W.ndim == 1 and W.shape == (size,) else W
    if W.shape != (size, size):
        raise KaneRobotError(f"{what} must be a number, {size} values or a {size}x{size} matrix; got shape {np.shape(value)}")
    return W


class MPC(control.Controller):
    """Nonlinear MPC by multiple shooting and real-time iterations (module notes).

    Parameters
    ----------
    model : numeric model
        What the controller believes: a rigid fixed or wheeled base.
    trajectory : Trajectory, callable or array_like
        The controlled coordinates' reference (a set point: an equilibrium).
    horizon : int
        ``N`` >= 1 steps.
    dt : float
        The step, and the period of the control (zero-order hold at ``1 /
        dt``): :attr:`period`.
    Q, R : array_like, optional
        Weights of the state ``x = (p, v)`` (2m) and of the motors' torques
        (k): a number, the diagonal or the matrix; default 1000 on the
        positions, 10 on the rates and 0.1 on the torques (:func:`kanerobot.control.lqr_balance`'s).
    terminal : "lqr", array_like or None
        ``P``: the discrete Riccati solution at the reference's end (default),
        a (2m, 2m) matrix, or None (no terminal cost).
    limits : float, array_like or (lower, upper), optional
        Bounds of the motors' torques: ``|u| <= limits`` or ``lower <= u <=
        upper``; default the robot's effort limits where it has them.
    actuation : array_like (m, k), optional
        ``tau = actuation @ u``; default the identity on a fixed base,
        :func:`~kanerobot.control.actuation_matrix` on a wheeled one.
    q_ref : array_like, optional
        Every joint variable where the coordinates that are not controlled
        stay (a wheeled base's posture); default the model's configuration
        of the reference's start.
    u_ref : array_like (k,), optional
        The reference's inputs, constant; default those of the model along
        the reference (least squares through ``actuation``).
    motors : sequence of str, optional
        Labels of the motors, with ``actuation`` (default ``u0``, ``u1`` ...).
    iterations : int
        SQP steps per tick (1: the real-time iteration).
    substeps : int
        RK4 steps per interval.
    solver : {"qrqp", "osqp"}
        CasADi's QP solver.

    Attributes
    ----------
    prediction : PredictionModel
    P : numpy.ndarray
        The terminal weight (2m, 2m).
    lower, upper : numpy.ndarray
        The torque limits (k,).
    motors : list of str
    period : float
        ``dt``: :func:`kanerobot.simulate` samples the MPC once per tick
        (:attr:`kanerobot.control.Controller.period`).
    stats : dict
        ``ticks``, ``qp_failures`` (a tick whose QP failed holds the last
        solution's next input, clipped), ``seconds`` (spent solving).
    """

    def __init__(self, model, trajectory, *, horizon=20, dt=0.02, Q=None, R=None, terminal="lqr", limits=None, actuation=None,
                 q_ref=None, u_ref=None, motors=None, iterations=1, substeps=1, solver="qrqp"):  # fmt: skip
        require_casadi()  # before anything: one line saying how to install it
        super().__init__(model, trajectory)
        view = self.view
        if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
            raise KaneRobotError(f"the MPC's horizon must be a whole number of steps >= 1, got {horizon!r}")
        if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
            raise KaneRobotError(f"the MPC's step dt must be a positive time in seconds, got {dt!r}")
        for name, value in (("iterations", iterations), ("substeps", substeps)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise KaneRobotError(f"the MPC's {name} must be a whole number >= 1, got {value!r}")
        if solver not in SOLVERS:
            raise KaneRobotError(f"unknown QP solver {solver!r}: use {', '.join(SOLVERS)}")
        self.N, self.dt, self.iterations, self.substeps, self.solver = int(horizon), float(dt), int(iterations), int(substeps), solver
        self.period = self.dt  # sampled: kr.simulate calls it once per tick and holds its torque (zero-order hold)
        _view(model)  # a rigid fixed or wheeled base, before anything is built
        m = view.n
        if actuation is None:
            if getattr(model.model.robot, "wheels", ()):
                actuation, self.motors = control.actuation_matrix(model)
            else:
                actuation, self.motors = np.eye(m), list(view.labels)
        else:
            actuation = np.asarray(actuation, dtype=float)
            if actuation.ndim != 2 or actuation.shape[0] != m:
                raise KaneRobotError(f"the actuation matrix must have {m} rows (the controlled coordinates), got shape {actuation.shape}")
            self.motors = [f"u{k}" for k in range(actuation.shape[1])] if motors is None else [str(label) for label in motors]
            if len(self.motors) != actuation.shape[1]:
                raise KaneRobotError(f"{len(self.motors)} motor labels for an actuation of {actuation.shape[1]} motors")
        self.actuation = actuation
        k = actuation.shape[1]
        self.Q = _weights(Q, 2 * m, "Q", np.concatenate([np.full(m, 1000.0), np.full(m, 10.0)]))
        self.R = _weights(R, k, "R", 0.1)
        t0 = self.trajectory.t_span[0] if self.trajectory.t_span else 0.0
        self.q_ref = view.full_configuration(self.trajectory.position(t0)) if q_ref is None else _array(q_ref, "q_ref", view.nq)
        self.u_ref = None if u_ref is None else _array(u_ref, "u_ref", k)
        self.lower, self.upper = _limits(limits, k, self.motors, model.model.robot)
        if self.u_ref is not None and (np.any(self.u_ref < self.lower - 1e-12) or np.any(self.u_ref > self.upper + 1e-12)):
            j = int(np.argmax((self.u_ref < self.lower) | (self.u_ref > self.upper)))
            raise KaneRobotError(f"the reference needs {self.u_ref[j]:g} on motor {self.motors[j]}, outside its limits "
                                 f"[{self.lower[j]:g}, {self.upper[j]:g}]: the MPC cannot hold it")  # fmt: skip
        self._terminal = terminal
        if isinstance(terminal, str):
            if terminal != "lqr":
                raise KaneRobotError(f"terminal must be 'lqr', None or a {2 * m}x{2 * m} matrix, got {terminal!r}")
        elif terminal is not None and np.shape(terminal) != (2 * m, 2 * m):
            raise KaneRobotError(f"terminal must be 'lqr', None or a {2 * m}x{2 * m} matrix, got shape {np.shape(terminal)}")
        self._built = None
        self.reset()

    # -------------------------------------------------- building (lazy: rebuilt after pickling)
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_built"] = None  # CasADi's functions and solver are rebuilt where the controller lands
        return state

    def _build(self):
        if self._built is not None:
            return self._built
        import casadi

        prediction = PredictionModel(self.model, self.q_ref, self.actuation)
        N, nx, nu = self.N, prediction.nx, prediction.nu
        interval = prediction.interval(self.dt, self.substeps)
        mapped = interval.map(N, "serial")
        # the variables w = (x_0, u_0, x_1, u_1, ..., x_N), x_0 fixed by its bounds; the rows
        # Fx_j dx_j + Fu_j du_j - dx_{j+1} = x_{j+1} - F(x_j, u_j): HPIPM's [A_j B_j -I] ordering
        block = nx + nu
        pieces = [(nx * j + np.repeat(np.arange(nx), block), j * block + np.tile(np.arange(block), nx)) for j in range(N)]
        pieces = [pair for j, piece in enumerate(pieces) for pair in (piece, (nx * j + np.arange(nx), (j + 1) * block + np.arange(nx)))]
        rows, cols = np.concatenate([r for r, _ in pieces]), np.concatenate([c for _, c in pieces])
        nw, ng = N * block + nx, nx * N
        order = np.lexsort((rows, cols))  # column-major: CasADi's compressed columns
        colind = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=nw))])
        sparsity_a = casadi.Sparsity(ng, nw, colind.tolist(), rows[order].tolist())
        self._built = built = {"prediction": prediction, "interval": interval, "mapped": mapped, "order": order,
                               "sparsity_a": sparsity_a, "nw": nw, "ng": ng}  # fmt: skip
        P = self._terminal_weight(prediction, interval)
        self.P = P
        weights = [block_ for _ in range(N) for block_ in (self.dt * self.Q, self.dt * self.R)] + [P]
        from scipy.linalg import block_diag

        Hd = 2 * block_diag(*weights)
        built["H"] = casadi.DM(casadi.Sparsity.dense(nw, nw), Hd.T.ravel().tolist())
        built["H"] = casadi.sparsify(built["H"])
        built["Hd"] = Hd
        options: dict[str, Any] = {"error_on_fail": False}
        if self.solver == "qrqp":
            options.update(print_iter=False, print_header=False, print_info=False, max_iter=1000)
        elif self.solver == "osqp":
            options.update(osqp={"verbose": False, "eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 20000, "polish": True})
        built["qp"] = casadi.conic("mpc", self.solver, {"h": built["H"].sparsity(), "a": sparsity_a}, options)
        return built

    def _terminal_weight(self, prediction, interval):
        """``P`` (module notes): the discrete Riccati solution at the reference's end, a given matrix, or zeros."""
        nx = prediction.nx
        if self._terminal is None:
            return np.zeros((nx, nx))
        if not isinstance(self._terminal, str):
            return np.asarray(self._terminal, dtype=float)
        from scipy.linalg import solve_discrete_are

        t_end = self.trajectory.t_span[1] if self.trajectory.t_span else 0.0
        x, u = self._reference(np.array([t_end]))
        _, Fx, Fu = (np.array(v) for v in interval(x[0], u[0]))
        try:
            return solve_discrete_are(Fx, Fu, self.dt * self.Q, self.dt * self.R)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise KaneRobotError(f"no terminal LQR at the reference's end ({exc}): give terminal= a matrix, or None") from None

    # -------------------------------------------------- the reference
    def _reference(self, times):
        """``(x_r, u_r)`` at ``times``: (len, 2m) and (len, k)."""
        view = self.view
        q, qd, qdd = self.trajectory.sample(times)
        x = np.concatenate([q, qd], axis=1)
        if self.u_ref is not None:
            return x, np.broadcast_to(self.u_ref, (len(times), self.actuation.shape[1]))
        full = np.repeat(self.q_ref[None, :], len(times), axis=0)
        full[:, view.columns] = q
        rates = np.zeros((len(times), view.nv))
        rates[:, view.rate_columns] = qd
        accelerations = np.zeros((len(times), view.nv))
        accelerations[:, view.rate_columns] = qdd
        tau = np.asarray(self.model.inverse_dynamics(full, rates, accelerations), dtype=float).reshape(len(times), -1)
        return x, np.linalg.lstsq(self.actuation, tau.T, rcond=None)[0].T

    # -------------------------------------------------- running
    def reset(self):
        """Forget the run: the next call starts one (its time is ``t0``)."""
        self._t0 = None
        self._ticks = {}  # tick -> (u, w after the solve)
        self.stats = {"ticks": 0, "qp_failures": 0, "seconds": 0.0}

    def state(self, q, qd):
        """``x = (p, v)`` of a state ``(q, qd)``."""
        return np.concatenate([self.view.positions(q), self.view.rates(qd)])

    def __call__(self, t, q, qd):
        return self.actuation @ self.motor_torques(t, q, qd)

    def motor_torques(self, t, q, qd):
        """``u``, the motors' torques held over the tick of ``t`` (solved at its first call), shape (k,)."""
        t = float(t)
        if self._t0 is None or t < self._t0 or (t == self._t0 and max(self._ticks, default=0) > 0):
            self.reset()
            self._t0 = t
        tick = int(np.floor((t - self._t0) / self.dt + 1e-9))
        if tick in self._ticks:
            return self._ticks[tick][0]
        for later in [j for j in self._ticks if j > tick]:  # the integrator went back: those ticks came from a rejected step
            del self._ticks[later]
        start = time.perf_counter()
        u, w = self._solve(tick, self.state(q, qd))
        self.stats["seconds"] += time.perf_counter() - start
        self.stats["ticks"] += 1
        self._ticks[tick] = (u, w)
        return u

    def _guess(self, tick, times):
        """The previous tick's solution shifted to start at ``tick`` (the reference at the first tick)."""
        built = self._build()
        nx, nu, N = built["prediction"].nx, built["prediction"].nu, self.N
        before = [j for j in self._ticks if j < tick]
        xr, ur = self._reference(times)
        if not before:
            return xr.copy(), ur[:N].copy()
        last = max(before)
        w = self._ticks[last][1]
        shift = tick - last
        X = np.array([w[j * (nx + nu) : j * (nx + nu) + nx] for j in range(N + 1)])
        U = np.array([w[j * (nx + nu) + nx : (j + 1) * (nx + nu)] for j in range(N)])
        if shift > N:
            return xr.copy(), ur[:N].copy()
        X, U = np.concatenate([X[shift:], np.repeat(X[-1:], shift, axis=0)]), np.concatenate([U[shift:], np.repeat(U[-1:], shift, axis=0)])
        return X, U

    def _solve(self, tick, x):
        casadi = require_casadi()

        built = self._build()
        nx, nu, N = built["prediction"].nx, built["prediction"].nu, self.N
        times = self._t0 + (tick + np.arange(N + 1)) * self.dt
        xr, ur = self._reference(times)
        X, U = self._guess(tick, times)
        reference = np.concatenate([np.concatenate([xr[j], ur[j]]) for j in range(N)] + [xr[N]])
        lbx, ubx = np.full(built["nw"], -np.inf), np.full(built["nw"], np.inf)
        for _ in range(self.iterations):
            w = np.concatenate([np.concatenate([X[j], U[j]]) for j in range(N)] + [X[N]])
            nxt, Fx, Fu = (np.array(v) for v in built["mapped"](X[:N].T, U.T))
            data, gaps = [], []
            for j in range(N):
                data += [np.hstack([Fx[:, j * nx : (j + 1) * nx], Fu[:, j * nu : (j + 1) * nu]]).ravel(), -np.ones(nx)]
                gaps.append(X[j + 1] - nxt[:, j])
            a = casadi.DM(built["sparsity_a"], np.concatenate(data)[built["order"]])
            b = np.concatenate(gaps)
            lbx[:nx] = ubx[:nx] = x - X[0]
            for j in range(N):
                s = j * (nx + nu) + nx
                lbx[s : s + nu], ubx[s : s + nu] = self.lower - U[j], self.upper - U[j]
            g = built["Hd"] @ (w - reference)
            solution = built["qp"](h=built["H"], g=g, a=a, lba=b, uba=b, lbx=lbx, ubx=ubx)
            if not built["qp"].stats()["success"]:
                self.stats["qp_failures"] += 1
                break
            w = w + np.asarray(solution["x"]).ravel()
            X = np.array([w[j * (nx + nu) : j * (nx + nu) + nx] for j in range(N + 1)])
            U = np.clip(np.array([w[j * (nx + nu) + nx : (j + 1) * (nx + nu)] for j in range(N)]), self.lower, self.upper)
        w = np.concatenate([np.concatenate([X[j], U[j]]) for j in range(N)] + [X[N]])
        return np.clip(U[0], self.lower, self.upper), w

    def __repr__(self):
        return (f"<MPC on {self.model.model.robot.name}: horizon {self.N} x {self.dt:g} s, {2 * self.view.n} states, "
                f"{self.actuation.shape[1]} motors, {self.iterations} SQP step(s) per tick ({self.solver})>")  # fmt: skip


def balance_mpc(lqr, horizon=10, dt=0.05, limits=None, **options):
    """An :class:`MPC` holding a :class:`~kanerobot.control.BalanceLQR`'s equilibrium, with its weights and motors.

    The reference is the LQR's ``q_eq`` and ``u_eq``, the weights its ``Q``
    and ``R``, the actuation its own (Krang: the wheel motors reacting on the
    pitch); ``limits`` bound the motors' torques; ``options`` go to :class:`MPC`.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot import control
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0), friction=False), backend="numpy")
    >>> lqr = control.lqr_balance(fn, [0.3, -0.2], pitch=None)
    >>> mpc = balance_mpc(lqr, horizon=5, dt=0.05)
    >>> bool(np.allclose(mpc.motor_torques(0.0, lqr.q_eq, [0.0, 0.0]), lqr.u_eq))   # at the equilibrium: its torques
    True
    >>> mpc.P.shape, mpc.motors
    ((4, 4), ['1', '2'])
    """
    return MPC(lqr.model, control.ControlView(lqr.model).positions(lqr.q_eq), horizon=horizon, dt=dt, Q=lqr.Q, R=lqr.R,
               limits=limits, actuation=lqr.actuation, q_ref=lqr.q_eq, u_ref=lqr.u_eq, motors=lqr.motors, **options)  # fmt: skip
