"""Dynamic models of a robot, derived once, evaluated by generated code.

:func:`derive` gathers the algorithms of this package into a
:class:`DynamicModel`: each model is a :class:`~kanerobot.symbolic.Program`
derived on first use and kept, with its operation count.  ``model.numeric``
binds the parameters to numbers and returns :class:`NumericDynamics`, whose
functions run the programs compiled to numpy source (no sympy substitution),
for one state or a batch of states.

    Gamma = A(q) qdd + C(q, qd) qd + Q(q) + friction,   H = C qd + Q + friction
"""

import numpy as np
import sympy

from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.robot.description import WRENCH_NAMES
from kanerobot.symbolic.printing import matrix_entry_names

#: Models a :class:`DynamicModel` offers, with what they compute.
MODELS = {
    "inverse_dynamics": "joint torques Gamma(q, qd, qdd) by recursive Newton-Euler",
    "mass_matrix": "inertia matrix A(q) by composite links",
    "h": "centrifugal, Coriolis, gravity and friction torques H(q, qd)",
    "coriolis_matrix": "Coriolis matrix C(q, qd) in Christoffel form",
    "gravity": "gravity torques Q(q)",
    "direct_dynamics": "joint accelerations qdd(q, qd, Gamma), recursive, no inertia matrix",
}
METHODS = ("newton-euler",)


def derive(robot, method="newton-euler"):
    """The dynamic models of ``robot`` by ``method``.

    Parameters
    ----------
    robot : Robot
        Serial or tree robot with a fixed or moving (known motion) base.
    method : {"newton-euler"}
        The Kane and Lagrange engines come with their own issue.

    Returns
    -------
    DynamicModel

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = kr.derive(kr.load(kr.frames_path("planar2")))
    >>> model.parameters[:4]
    ['FS1', 'FS2', 'FV1', 'FV2']
    >>> fn = model.numeric({name: 1.0 for name in model.parameters})
    >>> fn.mass_matrix([0.0, 0.0]).shape
    (2, 2)
    """
    if method not in METHODS:
        raise KaneRobotError(f"unknown method {method!r}: available are {', '.join(METHODS)}")
    if robot.loops or robot.floating or robot.wheeled:
        kind = "closed loops" if robot.loops else ("a floating base" if robot.floating else "a wheeled base")
        raise KaneRobotError(f"{robot.name} has {kind}: its dynamics come with a later issue; serial and tree robots only")
    return DynamicModel(robot, method)


class DynamicModel:
    """The programs of one robot's dynamic models, derived on first use.

    Attributes
    ----------
    robot : Robot
    method : str
    """

    def __init__(self, robot, method):
        self.robot = robot
        self.method = method
        self._programs = {}
        self.q = list(robot.q)
        self.qd = list(robot.qd)
        self.qdd = list(robot.qdd)
        self.tau = [robot.joint_parameters[label]["GAM"] for label in robot.joint_labels]
        self.wrench = {
            label: [robot.dynamics[label][name] for name in WRENCH_NAMES]
            for label in robot.links
            if any(robot.dynamics[label][name] != 0 for name in WRENCH_NAMES)
        }

    def program(self, name):
        """The :class:`~kanerobot.symbolic.Program` of model ``name`` (see :data:`MODELS`)."""
        if name not in MODELS:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(MODELS)}")
        if name not in self._programs:
            self._programs[name] = self._derive(name)
        return self._programs[name]

    def _derive(self, name):
        from kanerobot.dynamics import composite, coriolis, direct, newton_euler

        if name == "inverse_dynamics":
            return newton_euler.inverse_dynamics(self.robot)
        if name == "h":
            return newton_euler.coriolis_gravity(self.robot)
        if name == "gravity":
            return newton_euler.gravity_torques(self.robot)
        if name == "mass_matrix":
            return composite.mass_matrix(self.robot)
        if name == "coriolis_matrix":
            return coriolis.coriolis_matrix(self.robot, self.program("mass_matrix"))
        return direct.direct_dynamics(self.robot)

    def op_count(self, name):
        """Operations of model ``name``: ``{"mul": int, "add": int, "fn": int}``."""
        return dict(self.program(name).op_count())

    @property
    def state_symbols(self):
        """Symbols given as arguments of the numeric functions, in a fixed order:
        q, QP, QDP, GAM, then the external wrenches."""
        groups = [self.q, self.qd, self.qdd, self.tau] + list(self.wrench.values())
        out = []
        for group in groups:
            out += [s for s in group if isinstance(s, sympy.Symbol) and s not in out]
        return out

    @property
    def parameters(self):
        """Sorted names of the free symbols the models need besides the state.

        These are the symbols of the inverse dynamic model, which every other
        model specialises, less q, QP, QDP, GAM and the external wrenches
        (given as ``wrench=`` to :meth:`NumericDynamics.inverse_dynamics`).
        """
        program = self.program("inverse_dynamics")
        used = set()
        for _, expr in list(program.assignments()) + list(program.output_lines()):
            used |= expr.free_symbols
        assigned = {symbol for symbol, _ in program.assignments()}
        return sorted(str(s) for s in used - assigned - set(self.state_symbols))

    @property
    def robot_symbol_names(self):
        """Names of every symbol in the robot's description (parameters and states)."""
        robot = self.robot
        exprs = [v for table in (robot.dynamics, robot.joint_parameters) for d in table.values() for v in d.values()]
        exprs += [v for key in ("Z", "W0", "WP0", "V0", "VP0", "G") for v in getattr(robot.base, key)]
        names = set(robot.geometric_parameters)
        for expr in exprs:
            names |= {str(s) for s in sympy.sympify(expr).free_symbols}
        return names

    def numeric(self, values):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        ``values`` must give every name of :attr:`parameters`; other symbols
        of the robot that no model needs are accepted and ignored.

        Raises
        ------
        ParameterError
            Listing the names without a value and the names that are not
            symbols of the robot.
        """
        return NumericDynamics(self, values)


def _as_states(x, n, what):
    """``x`` as an (N, n) array and whether it was a single state."""
    array = np.asarray(x, dtype=float)
    single = array.ndim == 1
    array = np.atleast_2d(array)
    if array.ndim != 2 or array.shape[1] != n:
        raise KaneRobotError(f"{what} must have shape ({n},) or (N, {n}), got {np.shape(x)}")
    return array, single


class NumericDynamics:
    """Numeric dynamic functions of one robot with bound parameters.

    Every function takes one state (1-D arrays of length n) or a batch
    (2-D arrays of shape (N, n)) and returns arrays of matching shape.
    Programs are compiled to numpy source once, on first call.
    """

    def __init__(self, model, values):
        self.model = model
        names = set(model.parameters)
        given = {str(k) for k in values}
        missing = sorted(names - given)
        unknown = sorted(given - names - model.robot_symbol_names)
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"no value for {', '.join(missing)}")
            if unknown:
                parts.append(f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a symbol of this robot")
            raise ParameterError(
                f"robot {model.robot.name}: " + "; ".join(parts) + f" (parameters: {', '.join(model.parameters)})"
            )
        # Robot symbols the models do not need (XX1 of an arm whose first
        # link only turns about z) are accepted and left out.
        self.values = {sympy.Symbol(str(k)): float(v) for k, v in values.items() if str(k) in names}
        self._parameter_values = [self.values[s] for s in sorted(self.values, key=str)]
        self._compiled = {}

    @property
    def n(self):
        return len(self.model.q)

    def _run(self, name, given):
        """Evaluate program ``name`` on a batch; ``given`` maps state symbols to
        (N,) columns, and state symbols left out are 0 (wrenches, torques)."""
        if name not in self._compiled:
            arguments = self.model.state_symbols + sorted(self.values, key=str)
            self._compiled[name] = self.model.program(name).to_function(args=arguments)
        batch = len(next(iter(given.values())))
        zeros = np.zeros(batch)
        states = [given.get(s, zeros) for s in self.model.state_symbols]
        out = np.asarray(self._compiled[name](*states, *self._parameter_values), dtype=float)
        return np.broadcast_to(out.reshape(out.shape[0], -1), (out.shape[0], batch)).T

    def _columns(self, *groups):
        """{symbol: column} for (symbols, (N, n) array) pairs."""
        return {s: array[:, k] for symbols, array in groups for k, s in enumerate(symbols) if isinstance(s, sympy.Symbol)}

    def _vector_result(self, result, single):
        return result[0] if single else result

    def _matrix(self, name, flat, symmetric):
        n = self.n
        outputs = [line for line, _ in self.model.program(name).output_lines()]
        names = matrix_entry_names(name_prefix(name), (n, n))
        position = {names[i][j]: (i, j) for i in range(n) for j in range(n)}
        M = np.zeros((flat.shape[0], n, n))
        for k, output in enumerate(outputs):
            i, j = position[output]
            M[:, i, j] = flat[:, k]
            if symmetric:
                M[:, j, i] = flat[:, k]
        return M

    # ----------------------------------------------------------- the models
    def inverse_dynamics(self, q, qd, qdd, wrench=None):
        """Joint torques, shape (n,) or (N, n).

        ``wrench`` maps a link label to the 6-vector (FX, FY, FZ, CX, CY, CZ)
        the link exerts on the environment, in its own frame; links the robot
        describes with a wrench and that are left out get zero.
        """
        (q, single), (qd, _), (qdd, _) = (_as_states(x, self.n, w) for x, w in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
        groups = [(self.model.q, q), (self.model.qd, qd), (self.model.qdd, qdd)]
        wrench = {str(label): value for label, value in (wrench or {}).items()}
        for label, symbols in self.model.wrench.items():
            value = np.asarray(wrench.pop(label, np.zeros(6)), dtype=float)
            if value.shape[-1] != 6:
                raise KaneRobotError(f"wrench of link {label} must have 6 values FX FY FZ CX CY CZ, got shape {value.shape}")
            groups.append((symbols, np.broadcast_to(np.atleast_2d(value), (q.shape[0], 6))))
        if wrench:
            described = ", ".join(self.model.wrench) or "none"
            raise KaneRobotError(
                f"no external wrench is described on link(s) {', '.join(map(str, wrench))} "
                f"(links with FX..CZ in the robot file: {described})"
            )
        return self._vector_result(self._run("inverse_dynamics", self._columns(*groups)), single)

    def mass_matrix(self, q):
        """Inertia matrix A(q), shape (n, n) or (N, n, n)."""
        q, single = _as_states(q, self.n, "q")
        A = self._matrix("mass_matrix", self._run("mass_matrix", self._columns((self.model.q, q))), symmetric=True)
        return A[0] if single else A

    def h(self, q, qd):
        """Centrifugal, Coriolis, gravity and friction torques H(q, qd)."""
        (q, single), (qd, _) = _as_states(q, self.n, "q"), _as_states(qd, self.n, "qd")
        return self._vector_result(self._run("h", self._columns((self.model.q, q), (self.model.qd, qd))), single)

    def coriolis_matrix(self, q, qd):
        """Coriolis matrix C(q, qd) (Christoffel form), shape (n, n) or (N, n, n)."""
        (q, single), (qd, _) = _as_states(q, self.n, "q"), _as_states(qd, self.n, "qd")
        C = self._matrix("coriolis_matrix", self._run("coriolis_matrix", self._columns((self.model.q, q), (self.model.qd, qd))), symmetric=False)
        return C[0] if single else C

    def gravity(self, q):
        """Gravity torques Q(q), shape (n,) or (N, n)."""
        q, single = _as_states(q, self.n, "q")
        return self._vector_result(self._run("gravity", self._columns((self.model.q, q))), single)

    def direct_dynamics(self, q, qd, tau):
        """Joint accelerations for torques ``tau``, shape (n,) or (N, n)."""
        (q, single), (qd, _), (tau, _) = (_as_states(x, self.n, w) for x, w in ((q, "q"), (qd, "qd"), (tau, "tau")))
        groups = [(self.model.q, q), (self.model.qd, qd), (self.model.tau, tau)]
        return self._vector_result(self._run("direct_dynamics", self._columns(*groups)), single)


def name_prefix(model_name):
    """Prefix of the matrix entries a model's outputs are named with."""
    return {"mass_matrix": "A", "coriolis_matrix": "C"}[model_name]
