"""The models as JAX functions: ``backend="jax"`` and :meth:`NumericDynamics.jax_function`.

``model.numeric(values, backend="jax")`` runs every program as a jitted
``jax.numpy`` function (:class:`~kanerobot.codegen.jax.JaxBackend`, the
Python printer's subclass) where the C backend would run compiled C: the
numeric functions keep their protocol (names, signatures, numpy results,
batches), and their numbers are the C backend's to rounding.

The same programs are offered raw, as pure functions for ``jax.jit``,
``jax.vmap`` and ``jax.grad`` / ``jax.jacfwd``: :func:`jax_function` (the
method :meth:`~kanerobot.dynamics.dynamic_model.NumericDynamics.jax_function`)
gives ``f(q, qd, qdd, p)`` and its kin, of the protocol's state layout (a
floating base's position and quaternion first in ``q``), the parameters
``p`` an array in the order of ``model.parameters`` (by default the bound
values), so that a batch of states or of parameter vectors is a ``vmap``.

Every function here is float64: JAX's ``jax_enable_x64`` is turned on when
the first one is built (:func:`~kanerobot.codegen.jax.load_jax`).

XLA compiles each program once per batch shape, and long straight-line
programs slowly (:func:`kanerobot.codegen.jax.jit`): under a second for the
RX-90's inverse dynamics, about ten seconds for its direct-dynamics
derivatives, minutes for Krang's largest programs.  ``backend="jax"`` pays
that on the first call of each model and shape; the raw functions run
eagerly (op by op, no compilation) until the caller jits them.
"""

import numpy as np

from kanerobot.codegen.jax import jax_program, jit, load_jax
from kanerobot.dynamics.common import MODEL_INPUTS
from kanerobot.errors import KaneRobotError

__all__ = ["JAX_FUNCTIONS", "evaluate", "flexible_evaluate", "frame_outputs", "jax_function", "program_function", "solved_direct_dynamics"]

#: The raw functions :func:`jax_function` gives, with their arguments before ``p``.
JAX_FUNCTIONS = MODEL_INPUTS


def program_function(cache, key, program, name, args, outputs=None, doc=""):
    """The jitted JAX function of ``program`` (:func:`~kanerobot.codegen.jax.jax_program`), made once and kept in ``cache[key]``.

    Returns ``(jitted, plain)``: ``plain`` is the pure function itself (to
    compose inside a user's own ``jax.jit``).
    """
    if key not in cache:
        plain = jax_program(program, name, args, outputs=outputs, doc=doc)
        cache[key] = (jit(plain), plain)
    return cache[key]


def model_function(model, name):
    """``(jitted, plain)`` JAX function of model ``name`` of a :class:`~kanerobot.dynamics.dynamic_model.DynamicModel`:
    the arguments of :meth:`~kanerobot.dynamics.dynamic_model.DynamicModel.compiled` (state groups, then
    ``p``), the output laid out as the C backend's (an (nv, nv) matrix, a derivative's (nv, 2 nv [+ n]))."""
    cache = model.__dict__.setdefault("_jax_functions", {})
    if name not in cache:
        if name not in model.models:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(model.models)}")
        program = model.program(name)
        program_function(cache, name, program, f"{model.c_prefix}{name}", model._program_arguments(), model._output_grid(name),
                         f"{model.models[name]}, robot {model.robot.name}")  # fmt: skip
    return cache[name]


def evaluate(fn, name, states):
    """Model ``name`` of numeric functions ``fn`` on a batch, as ``NumericDynamics._evaluate``: ``states`` maps
    the keys of ``DynamicModel._state_groups`` to (N, k) arrays, groups left out are 0; a numpy array."""
    jitted, _ = model_function(fn.model, name)
    arrays = []
    for key, symbols in fn.model._state_groups():
        array = states.get(key)
        arrays.append(np.zeros(len(symbols)) if array is None else np.asarray(array, dtype=float))
    batch = max(len(array) for array in states.values())
    out = np.asarray(jitted(*arrays, fn._parameter_array))
    return np.broadcast_to(out, (batch,) + out.shape[1:]) if out.shape[0] != batch else out


def flexible_evaluate(model, name, arrays, parameters):
    """Program ``name`` of a :class:`~kanerobot.dynamics.flexible.FlexibleModel` on the (N, k) ``arrays`` of its
    groups ``z, zd, zdd, tau`` by JAX, laid out as its C functions (:meth:`FlexibleModel.compiled
    <kanerobot.dynamics.flexible.FlexibleModel.compiled>`): (N, k) or (N, m, m) numpy."""
    cache = model.__dict__.setdefault("_jax_functions", {})
    args, outputs = model._program_layout(name)
    jitted, _ = program_function(cache, name, model.program(name), f"kr_flexible_{name}", args, outputs)
    return np.asarray(jitted(*arrays, parameters))


def frame_outputs(programs, key, q, parameters):
    """The outputs of kinematic program ``key`` of :class:`~kanerobot.dynamics.kinematic_programs.KinematicPrograms`
    on configurations ``q`` (N, nq) with ``parameters``, by JAX: (N, m) numpy."""
    cache = programs._compiled  # beside the C functions, keyed ("jax", ...)
    arguments = programs.arguments(key)
    nq = len(programs.robot.q)
    name = "kr_" + "_".join("".join(c if c.isalnum() else "_" for c in str(part)) for part in key)
    jitted, _ = program_function(cache, ("jax",) + key, programs.program(key), name,
                                 [("q", arguments[:nq]), ("p", arguments[nq:])])  # fmt: skip
    return np.asarray(jitted(q, parameters))


def jax_function(fn, name):
    """Model ``name`` of numeric functions ``fn`` as a pure JAX function of the state and the parameters.

    Parameters
    ----------
    fn : NumericDynamics
        Of a serial, tree or floating robot (any backend: the JAX programs
        are generated on first use).
    name : str
        One of :data:`JAX_FUNCTIONS`: ``inverse_dynamics``, ``mass_matrix``,
        ``h``, ``coriolis_matrix``, ``gravity``, ``direct_dynamics``,
        ``base_acceleration`` (a floating base), ``inverse_dynamics_derivatives``,
        ``direct_dynamics_derivatives``.

    Returns
    -------
    callable
        ``f(*states, p=None, wrench=None)``, the states those of the
        numeric method of the same name (``inverse_dynamics(q, qd, qdd)``,
        ``mass_matrix(q)``, ``direct_dynamics(q, qd, tau)`` ...), each
        array's last axis its entries (leading axes broadcast: a batch);
        ``p`` the parameters in the order of ``fn.model.parameters`` (None:
        the values ``fn`` is bound to), ``wrench`` a dict link label ->
        6-vector as in :meth:`NumericDynamics.inverse_dynamics`.  It
        returns what the numeric method returns, as ``jax.Array`` (float64):
        one array, or a tuple of blocks for ``base_acceleration`` and the
        derivatives.  It is pure: ``jax.jit``, ``jax.vmap`` (over states,
        or over ``p``, by position) and ``jax.grad`` / ``jax.jacfwd`` apply.
        A quaternion in ``q`` (a free flyer's, a ball joint's) is
        normalised first, as the numeric methods do.  Where the numeric
        methods raise (a singular inertia), the result holds NaN or inf:
        traced code cannot raise.

    Raises
    ------
    KaneRobotError
        Unknown name, ``base_acceleration`` of a fixed base, JAX not installed.
    """
    model = fn.model
    if name not in JAX_FUNCTIONS:
        raise KaneRobotError(f"no JAX function {name!r}: available are {', '.join(JAX_FUNCTIONS)}")
    if name == "base_acceleration" and not model.root.nv:
        fn._unavailable("base_acceleration", "it is the free-floating inverse dynamics of a floating base (is_floating = 1)")
    function = getattr(_Functions(fn), name)
    return function


def solved_direct_dynamics(fn):
    """``jax_function(fn, "direct_dynamics")`` solved from the programs A and H, whatever the engine.

    XLA compiles a large recursive direct-dynamics program slowly and with
    much memory (a 38-DOF humanoid's: several minutes and over 10 GB),
    the inertia matrix and ``H`` in seconds: this is the same function, a
    dense solve ``A qdd = [0; tau] - H`` (a floating base not actuated) in
    place of the program.

    Parameters
    ----------
    fn : NumericDynamics
        Of a serial, tree or floating robot (any backend).

    Returns
    -------
    callable
        ``f(q, qd, tau, p=None, wrench=None)`` as :func:`jax_function`'s
        ``direct_dynamics``: accelerations (nv,), pure JAX.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> robot = kr.load(kr.frames_path("planar2"))
    >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
    >>> q, qd, tau = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([1.0, -2.0])
    >>> bool(np.allclose(solved_direct_dynamics(fn)(q, qd, tau), fn.direct_dynamics(q, qd, tau), rtol=1e-12, atol=0))
    True
    """
    return _Functions(fn).solved_direct_dynamics


class _Functions:
    """The pure JAX functions of one :class:`NumericDynamics` (see :func:`jax_function`): its model, layout and values, read once."""

    def __init__(self, fn):
        self.jnp = load_jax().numpy
        self.model = model = fn.model
        self.bound = self.jnp.asarray(fn._parameter_array)
        self.nv, self.n, self.base = fn.nv, fn.n, model.root.nv
        self.slices = model.group_slices()
        self.quaternions = [qs.stop for _, qs, _ in fn._quaternions]

    def _normalised(self, q):
        """``q`` with each quaternion (the last four of a free flyer's or ball joint's configuration) made unit."""
        jnp = self.jnp
        q = jnp.asarray(q, dtype=jnp.float64)
        for stop in self.quaternions:
            part = q[..., stop - 4 : stop]
            q = q.at[..., stop - 4 : stop].set(part / jnp.linalg.norm(part, axis=-1, keepdims=True))
        return q

    def _wrenches(self, wrench):
        wrench = {str(label): value for label, value in (wrench or {}).items()}
        unknown = sorted(set(wrench) - set(self.model.wrench))
        if unknown:
            raise KaneRobotError(f"no external wrench is described on link(s) {', '.join(unknown)} "
                                 f"(links with FX..CZ in the robot file: {', '.join(self.model.wrench) or 'none'})")  # fmt: skip
        return wrench

    def _run(self, program, given, p, wrench=None, groups=None):
        """Program ``program`` on the protocol's arrays ``given`` ({"q": ..., "qd": ...}); ``groups`` gives state groups by key."""
        jnp, wrench, arrays = self.jnp, self._wrenches(wrench), []
        for key, symbols in self.model._state_groups():
            argument, part = self.slices.get(key, (None, None))
            if groups and key in groups:
                arrays.append(groups[key])
            elif argument in given:
                arrays.append(given[argument][..., part])
            elif not isinstance(key, str):  # ("wrench", label)
                arrays.append(jnp.asarray(wrench.get(key[1], jnp.zeros(6)), dtype=jnp.float64))
            else:
                arrays.append(jnp.zeros(len(symbols)))
        _, plain = model_function(self.model, program)
        return plain(*arrays, self.bound if p is None else jnp.asarray(p, dtype=jnp.float64))

    def _blocks(self, out):
        """``(d_dq, d_dqd[, d_dtau])`` of a derivative model's (nv, 2 nv [+ n]) result."""
        nv = self.nv
        parts = (out[..., :nv], out[..., nv : 2 * nv])
        return parts + ((out[..., 2 * nv :],) if out.shape[-1] > 2 * nv else ())

    def _solve(self, A, rhs):
        return self.jnp.linalg.solve(A, rhs[..., None])[..., 0]

    def inverse_dynamics(self, q, qd, qdd, p=None, wrench=None):
        """Generalized forces ``A qdd + H`` (nv,): :meth:`NumericDynamics.inverse_dynamics`, pure JAX."""
        return self._run("inverse_dynamics", {"q": self._normalised(q), "qd": qd, "qdd": qdd}, p, wrench)

    def mass_matrix(self, q, p=None):
        """Inertia matrix (nv, nv): :meth:`NumericDynamics.mass_matrix`, pure JAX."""
        return self._run("mass_matrix", {"q": self._normalised(q)}, p)

    def h(self, q, qd, p=None, wrench=None):
        """``H(q, qd)`` (nv,): :meth:`NumericDynamics.h`, pure JAX."""
        return self._run("h", {"q": self._normalised(q), "qd": qd}, p, wrench)

    def coriolis_matrix(self, q, qd, p=None):
        """Coriolis matrix (nv, nv): :meth:`NumericDynamics.coriolis_matrix`, pure JAX."""
        return self._run("coriolis_matrix", {"q": self._normalised(q), "qd": qd}, p)

    def gravity(self, q, p=None):
        """Gravity torques (nv,): :meth:`NumericDynamics.gravity`, pure JAX."""
        return self._run("gravity", {"q": self._normalised(q)}, p)

    def direct_dynamics(self, q, qd, tau, p=None, wrench=None):
        """Accelerations (nv,) for the joint torques ``tau`` (n,): :meth:`NumericDynamics.direct_dynamics`, pure JAX."""
        q = self._normalised(q)
        if self.model.has_program("direct_dynamics"):
            return self._run("direct_dynamics", {"q": q, "qd": qd, "tau": tau}, p, wrench)
        return self.solved_direct_dynamics(q, qd, tau, p, wrench)

    def solved_direct_dynamics(self, q, qd, tau, p=None, wrench=None):
        """:meth:`direct_dynamics` solved from the programs A and H, whatever the engine (:func:`solved_direct_dynamics`)."""
        jnp, q = self.jnp, self._normalised(q)
        # A qdd = [0; tau] - H, a floating base not actuated
        H = self.h(q, qd, p, wrench)
        tau = jnp.broadcast_to(tau, H.shape[:-1] + (self.n,))
        return self._solve(self.mass_matrix(q, p), jnp.concatenate([jnp.zeros(H.shape[:-1] + (self.nv - self.n,)), tau], axis=-1) - H)

    def base_acceleration(self, q, qd, qdd, p=None, wrench=None):
        """``(base acceleration (6,), joint torques (n,))`` of a free base: :meth:`NumericDynamics.base_acceleration`, pure JAX."""
        q, b = self._normalised(q), self.base
        if self.model.has_program("base_acceleration"):
            out = self._run("base_acceleration", {"q": q, "qd": qd}, p, wrench, groups={"qdd": qdd})
            return out[..., :b], out[..., b:]
        # A11 vdot_b = -(A12 qdd + H1), GAM = A21 vdot_b + A22 qdd + H2 (NumericDynamics._solved_base_acceleration)
        A, H = self.mass_matrix(q, p), self.h(q, qd, p, wrench)
        base = self._solve(A[..., :b, :b], -(A[..., :b, b:] @ qdd[..., None])[..., 0] - H[..., :b])
        torques = (A[..., b:, :b] @ base[..., None])[..., 0] + (A[..., b:, b:] @ qdd[..., None])[..., 0] + H[..., b:]
        return base, torques

    def inverse_dynamics_derivatives(self, q, qd, qdd, p=None, wrench=None):
        """``(dtau/dq, dtau/dqd)``, (nv, nv) each, dq in the tangent space: :meth:`NumericDynamics.inverse_dynamics_derivatives`."""
        return self._blocks(self._run("inverse_dynamics_derivatives", {"q": self._normalised(q), "qd": qd, "qdd": qdd}, p, wrench))

    def direct_dynamics_derivatives(self, q, qd, tau, p=None, wrench=None):
        """``(dqdd/dq, dqdd/dqd, dqdd/dtau)``: :meth:`NumericDynamics.direct_dynamics_derivatives`, pure JAX."""
        jnp, q = self.jnp, self._normalised(q)
        if self.model.has_program("direct_dynamics_derivatives"):
            return self._blocks(self._run("direct_dynamics_derivatives", {"q": q, "qd": qd, "tau": tau}, p, wrench))
        # -A^-1 dtau/dx at qdd = direct_dynamics, and A^-1 S^T (NumericDynamics._solved_derivatives)
        qdd = self.direct_dynamics(q, qd, tau, p, wrench)
        dtau = jnp.concatenate(self.inverse_dynamics_derivatives(q, qd, qdd, p, wrench), axis=-1)
        S = jnp.broadcast_to(jnp.eye(self.nv)[:, self.nv - self.n :], dtau.shape[:-2] + (self.nv, self.n))
        return self._blocks(jnp.linalg.solve(self.mass_matrix(q, p), jnp.concatenate([-dtau, S], axis=-1)))
