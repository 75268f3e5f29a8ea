"""The model class every structure shares and the numeric helpers of every dynamic model.

:class:`DynamicModel` holds the programs of a serial or tree robot's dynamic
models (derived on first use, kept, with their operation counts) and is the
base class of the other structures' models (floating base, flexible joints,
closed loops, wheels: :mod:`~kanerobot.dynamics.floating`,
:mod:`~kanerobot.dynamics.flexible`, :mod:`~kanerobot.dynamics.constrained`);
``model.numeric`` binds the parameters to numbers and returns
:class:`NumericDynamics`, whose functions run the programs as generated code
(no sympy substitution), for one state or a batch of states: numpy source, or
C compiled with the system compiler (:mod:`kanerobot.codegen.compiled`) when
one is available.  The checks and layouts here (:func:`as_states`,
:func:`bound_values`, :func:`matrix_grid` ...) are the ones every structure
shares.

This module imports no structure module: they all import it, and
:func:`kanerobot.dynamics.model.derive` (which chooses among them) sits above.

    Gamma = A(q) qdd + C(q, qd) qd + Q(q) + friction,   H = C qd + Q + friction
"""

import contextlib
import functools
import inspect
import math
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import sympy
from numpy.typing import ArrayLike

from kanerobot.dynamics import common, composite, coriolis, derivatives, direct, lagrange, newton_euler
from kanerobot.dynamics.centroidal import moving_links
from kanerobot.dynamics.free_flyer import check_floating, check_masses
from kanerobot.dynamics.kinematic_programs import FrameKinematics
from kanerobot.dynamics.root import root_joint_model
from kanerobot.errors import KaneRobotError, ParameterError, SingularityError
from kanerobot.progress import slow_step
from kanerobot.robot.description import BASE, WRENCH_NAMES
from kanerobot.robot.joints import base_pose, quaternion_to_rotation
from kanerobot.state_space import StateSpace
from kanerobot.symbolic.printing import matrix_entry_names
from kanerobot.symbolic.program import collection_paused

#: Models a :class:`DynamicModel` offers, with what they compute (and the
#: derivative models of :data:`~kanerobot.dynamics.derivatives.DERIVATIVE_MODELS`).
MODELS = {
    "inverse_dynamics": "joint torques Gamma(q, qd, qdd) by recursive Newton-Euler",
    "mass_matrix": "inertia matrix A(q) by composite links",
    "h": "centrifugal, Coriolis, gravity and friction torques H(q, qd)",
    "coriolis_matrix": "Coriolis matrix C(q, qd) in Christoffel form",
    "gravity": "gravity torques Q(q)",
    "direct_dynamics": "joint accelerations qdd(q, qd, Gamma), recursive, no inertia matrix",
}
#: Models only some structures offer, with what they compute: a floating
#: base's free-floating inverse dynamics, flexible joints' springs.
STRUCTURE_MODELS = {
    "base_acceleration": "free-floating base acceleration and joint torques (q, qd, qdd of the joints), F_0 = 0",
    "elastic_torques": "elastic torques Gamma_f = -k (q_f - q_r) of the flexible joints",
}
#: Engines: Khalil's customized Newton-Euler (with composite links, Christoffel
#: symbols and the recursive direct model), Lagrange (kinetic and potential
#: energy), Kane (sympy.physics.mechanics.KanesMethod).
METHODS = ("newton-euler", "lagrange", "kane")
#: The programs of each engine, by model: ``build(robot)``, or
#: ``build(robot, A)`` for the Coriolis matrix built on the engine's inertia
#: matrix program.  Each builder serves a fixed root and the free flyer; Kane's
#: programs come from its :class:`~kanerobot.dynamics.kane.KaneSystem`
#: (:meth:`DynamicModel.kane_system`, so that sympy.physics.mechanics is
#: imported only for it).  A model an engine has no program for is solved
#: numerically from A and H (:data:`SOLVED`).
ENGINES: dict[str, dict[str, Callable[..., Any] | None]] = {
    "newton-euler": {
        "inverse_dynamics": newton_euler.inverse_dynamics,
        "mass_matrix": composite.mass_matrix,
        "h": newton_euler.h,
        "coriolis_matrix": coriolis.coriolis_matrix,
        "gravity": newton_euler.gravity,
        "direct_dynamics": direct.direct_dynamics,
        "base_acceleration": direct.base_acceleration,
    },
    "lagrange": {
        "inverse_dynamics": lagrange.inverse_dynamics,
        "mass_matrix": lagrange.mass_matrix,
        "h": lagrange.h,
        "coriolis_matrix": lagrange.coriolis_matrix,
        "gravity": lagrange.gravity,
    },
    "kane": {name: None for name in ("inverse_dynamics", "mass_matrix", "h", "coriolis_matrix", "gravity")},
}
#: Models an engine has no program for; they are computed from others.
SOLVED = {method: {"direct_dynamics", "base_acceleration"} - set(ENGINES[method]) for method in ENGINES}
for _solved in SOLVED.values():  # the derivatives of a solved model are solved too
    _solved |= {derivatives.SOLVED_DERIVATIVES[name] for name in _solved if name in derivatives.SOLVED_DERIVATIVES}
#: Backends of :meth:`DynamicModel.numeric`.
BACKENDS: tuple[str, ...] = (
    "auto",
    "c",
    "numpy",
    "casadi",  # kanerobot.codegen.casadi (issue 29): programs as casadi.Function, pip install 'kanerobot[casadi]'
    "jax",  # kanerobot.dynamics.jax_model (issue 29): optional, pip install 'kanerobot[jax]'
)
#: Models whose result is an (n, n) matrix, and whether it is symmetric.
MATRIX_MODELS = {"mass_matrix": True, "coriolis_matrix": False}
#: The state groups of the root joint's speeds and their derivatives, after those of the joints;
#: its configuration's group (``"quaternion"``) is in :meth:`DynamicModel._root_groups`.
ROOT_GROUPS = {"q": "quaternion", "qd": "base_velocity", "qdd": "base_acceleration"}


def joint_torques(robot):
    """The generalized forces of every joint, one per speed, in ``robot.joint_labels`` order
    (:func:`kanerobot.dynamics.common.joint_torques`).

    Examples
    --------
    >>> import kanerobot as kr
    >>> joint_torques(kr.load(kr.frames_path("planar2")))
    [GAM1, GAM2]
    """
    return [torque for label in robot.joint_labels for torque in common.joint_torques(robot, label)]


def solve_dynamics(A, rhs, robot_name, what="inertia matrix"):
    """``A^-1 rhs``: the accelerations of ``A qdd = rhs`` (``rhs = tau - H`` and its kin), one state or a batch.

    Every structure solves its direct dynamics here where its engine has no
    recursive program (Lagrange, Kane, the projections of closed loops and
    wheels, a simulation step on the compiled ``A`` and ``H``).

    Parameters
    ----------
    A : numpy.ndarray, shape (n, n) or (N, n, n)
    rhs : numpy.ndarray, shape (n,) or (N, n)
    robot_name : str
        For the message.
    what : str
        What ``A`` is, for the message (``"inertia matrix"``, ``"composite inertia"``).

    Returns
    -------
    numpy.ndarray, shape (n,) or (N, n)

    Raises
    ------
    SingularityError
        When ``A`` (one of the batch) is singular.

    Examples
    --------
    >>> solve_dynamics(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]), "arm")
    array([1. , 0.5])
    >>> solve_dynamics(np.zeros((2, 2)), np.ones(2), "arm")
    Traceback (most recent call last):
      ...
    kanerobot.errors.SingularityError: robot arm: the inertia matrix of the robot is singular (check the masses and inertias)
    """
    try:
        return np.linalg.solve(A, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise SingularityError(
            f"robot {robot_name}: the {what} of the robot is singular (check the masses and inertias)"
        ) from None


@contextlib.contextmanager
def deriving(model, name, detail=""):
    """Where every model class derives a program on first use: a progress line
    when it lasts over a second (:func:`~kanerobot.progress.slow_step`) and
    the garbage collector paused (:func:`~kanerobot.symbolic.program.collection_paused`)."""
    with slow_step(f"deriving {name} of {model.robot.name} ({model.method}{detail})"), collection_paused():
        yield


class ProgramCache:
    """The one program cache of every structure's model (:class:`DynamicModel`,
    :class:`~kanerobot.dynamics.constrained.ConstrainedModel`,
    :class:`~kanerobot.dynamics.flexible.FlexibleModel`).

    :meth:`program` derives model ``name`` once by the subclass's
    ``_derive(name)``, inside :func:`deriving` (a progress line for a slow
    derivation), after refusing a name not in :attr:`models` (when it lists
    them) and what ``_check_program(name)`` refuses (a model the engine
    solves numerically).  The subclass's ``__init__`` sets ``_programs = {}``.
    """

    #: The models offered, name -> what it computes (empty: the subclass's ``_derive`` says);
    #: read-only, an instance may replace it by its own (a floating base's).
    models: Mapping[str, str] = {}
    #: What the progress line adds after the engine's name.
    deriving_detail = ""
    #: name -> derived program (set to ``{}`` by the subclass's ``__init__``).
    _programs: dict[str, Any]

    def program(self, name):
        """The :class:`~kanerobot.symbolic.Program` of model ``name`` (see :attr:`models`), derived once."""
        if name not in self._programs:
            if self.models and name not in self.models:
                raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(self.models)}")
            self._check_program(name)
            with deriving(self, name, self.deriving_detail):
                self._programs[name] = self._derive(name)
        return self._programs[name]

    def _check_program(self, name):
        """Raise for a model this engine has no program for (default: none)."""

    def _derive(self, name):
        raise NotImplementedError


class DynamicModel(ProgramCache):
    """The programs of one robot's dynamic models, derived on first use.

    Serial and tree robots on any root joint: a fixed base, or a floating
    one (the free flyer, OpenSYMORO section IV-D: the ``base_acceleration``
    model, the root's speeds first; see :mod:`~kanerobot.dynamics.floating`).
    The sizes, names and layouts of the state come from the joint models,
    the root's first (:attr:`joint_models`).

    Attributes
    ----------
    robot : Robot
    method : str
    root : JointModel
        Link 0's joint on the world: ``Fixed()`` or ``FreeFlyer()``.
    joint_models : tuple of JointModel
        The root's, then each joint's of ``robot.joint_labels``: ``nq`` and
        ``nv`` are the sums of theirs.

    Subclasses for other structures set :attr:`models`, :meth:`_derive`,
    :meth:`_state_groups` and :attr:`parameter_programs`; compiling,
    counting and parameter checks are shared.

    Examples
    --------
    >>> import kanerobot as kr
    >>> model = DynamicModel(kr.load(kr.frames_path("satellite")), "newton-euler")
    >>> model.nq, model.nv, model.n, model.root
    (10, 9, 3, FreeFlyer())
    """

    #: The models offered, name -> what it computes.
    models: Mapping[str, str] = {**MODELS, **derivatives.DERIVATIVE_MODELS}
    #: Programs whose symbols make up :attr:`parameters`.
    parameter_programs: tuple[str, ...] = ("inverse_dynamics",)
    #: Prefix of the compiled C functions.
    c_prefix = "kr_"

    def __init__(self, robot, method):
        if robot.floating:
            check_floating(robot, "the floating-base dynamic model")
            if method not in METHODS:
                raise KaneRobotError(
                    f"{robot.name} has a floating base: method={method!r} does not model it; available are "
                    f"{', '.join(METHODS)}"
                )
        self.robot = robot
        self.method = method
        self._programs = {}
        self._compiled = {}
        self.root = root_joint_model(robot)
        self.joint_models = (self.root,) + tuple(robot.frame(label).joint for label in robot.joint_labels)
        self.q = list(robot.q)
        self.qd = list(robot.qd)
        self.qdd = list(robot.qdd)
        self.tau = joint_torques(robot)
        if self.root.nv:
            # the free-floating inverse dynamics; the C functions named apart from a fixed base's
            self.models = {**MODELS, "base_acceleration": STRUCTURE_MODELS["base_acceleration"], **derivatives.DERIVATIVE_MODELS}
            self.c_prefix = "kr_floating_"
            if self.has_program("base_acceleration"):
                self.parameter_programs = ("inverse_dynamics", "base_acceleration")
        self.wrench = {
            label: [robot.dynamics[label][name] for name in WRENCH_NAMES]
            for label in robot.links
            if any(robot.dynamics[label][name] != 0 for name in WRENCH_NAMES)
        }

    @property
    def n(self):
        """Number of the joints' speeds (of torques): one per joint of one speed."""
        return len(self.qd)

    @property
    def nq(self):
        """Length of a configuration: the root joint's (7 for a free flyer), then each joint's ``nq``."""
        return sum(joint.nq for joint in self.joint_models)

    @property
    def nv(self):
        """Length of a velocity or acceleration: the root joint's (6 for a free flyer), then each joint's ``nv``."""
        return sum(joint.nv for joint in self.joint_models)

    @property
    def layout(self):
        """``[(joint model, q slice, qd slice)]`` of the root joint and of each joint, in state order."""
        out, i, k = [], 0, 0
        for joint in self.joint_models:
            out.append((joint, slice(i, i + joint.nq), slice(k, k + joint.nv)))
            i, k = i + joint.nq, k + joint.nv
        return out

    def has_program(self, name):
        """False for the models this engine computes from others (direct dynamics of
        Lagrange and Kane, and of every engine on joints of several speeds: a linear
        solve of A qdd = Gamma - H)."""
        return name not in SOLVED.get(self.method, set())

    def _derive(self, name):
        """The program of model ``name`` by this engine (:data:`ENGINES`)."""
        if not self.has_program(name):
            raise KaneRobotError(
                f"the {self.method} engine has no program for {name}: it is solved numerically as "
                f"A^-1 (Gamma - H); use method='newton-euler' for the recursive direct dynamic model"
            )
        if name in derivatives.DERIVATIVE_MODELS:
            return derivatives.derivative_program(self, name)
        if self.method == "kane":
            return self.kane_system.program(name)
        build = ENGINES[self.method][name]
        assert build is not None  # only Kane's entries are None, and Kane returned above
        if name == "coriolis_matrix":  # built on this engine's inertia matrix
            return build(self.robot, self.program("mass_matrix"))
        return build(self.robot)

    @property
    def kane_system(self):
        """The :class:`~kanerobot.dynamics.kane.KaneSystem` of a Kane model."""
        if self.method != "kane":
            raise KaneRobotError(f"this model was derived by {self.method}: use kr.derive(robot, method='kane')")
        if not hasattr(self, "_kane"):
            # imported on first use: kane loads sympy.physics.mechanics, which `import kanerobot`
            # should not pay for (no import cycle: kane imports nothing of this module)
            from kanerobot.dynamics.kane import KaneSystem

            self._kane = KaneSystem(self.robot)
        return self._kane

    @property
    def kanes_method(self):
        """The ``sympy.physics.mechanics.KanesMethod`` of a Kane model."""
        return self.kane_system.kanes_method

    @property
    def bodies(self):
        return self.kane_system.bodies

    @property
    def loads(self):
        return self.kane_system.loads

    @property
    def frames(self):
        return self.kane_system.frames

    def compiled(self, name):
        """Model ``name`` compiled to C: a :class:`~kanerobot.codegen.compiled.CompiledFunction`.

        Compiled on first use (or loaded from the cache folder) and kept.
        Its arguments are the state groups q, QP, QDP, GAM, then one group of
        six per external wrench (see :attr:`wrench`), each ``(N, n)`` or
        ``(N, 6)``, and the parameters, ``(len(parameters),)`` in the order
        of :attr:`parameters`, passed once for the whole batch.  It returns
        ``(N, n)`` vectors or ``(N, n, n)`` matrices (the inertia matrix
        filled by symmetry).

        Raises
        ------
        kanerobot.codegen.compiled.CompileError
            No C compiler, or compilation failed.
        """
        if name not in self.models:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(self.models)}")
        if name not in self._compiled:
            from kanerobot.codegen.compiled import compile_program

            program = self.program(name)
            self._compiled[name] = compile_program(
                program, f"{self.c_prefix}{name}", self._program_arguments(), outputs=self._output_grid(name), constant=("p",),
                doc=f"{self.models[name]}, robot {self.robot.name}",
            )
        return self._compiled[name]

    def _program_arguments(self):
        """The argument groups of every model's generated function (C, JAX): the state groups
        (:meth:`_state_groups`, a wrench's named ``wrench<k>``), then ``p``, the :attr:`parameters`."""
        named, wrenches = [], 0
        for key, symbols in self._state_groups():
            if not isinstance(key, str):
                wrenches += 1
            named.append((key if isinstance(key, str) else f"wrench{wrenches}", symbols))
        return argument_groups(named) + [("p", [sympy.Symbol(label) for label in self.parameters])]

    def casadi_function(self, name):
        """Model ``name`` as a :class:`~kanerobot.codegen.casadi.CasadiFunction`: the arguments of
        :meth:`compiled` (the state groups, then ``p``, passed once for a batch), built once and kept.

        What ``numeric(values, backend="casadi")`` runs; :meth:`casadi` gives the
        ``casadi.Function`` of one state with the numeric functions' inputs.

        Raises
        ------
        KaneRobotError
            For an unknown model, a model this engine solves numerically, or
            when CasADi is not installed.
        """
        if name not in self.models:
            raise KaneRobotError(f"unknown model {name!r}: available are {', '.join(self.models)}")
        built = self.__dict__.setdefault("_casadi", {})
        if name not in built:
            from kanerobot.codegen.casadi import casadi_program

            built[name] = casadi_program(
                self.program(name), f"{self.c_prefix}{name}", self._program_arguments(), outputs=self._output_grid(name),
                constant=("p",), doc=f"{self.models[name]}, robot {self.robot.name}",
            )
        return built[name]

    def casadi(self, name, values=None, physical=True, wrench=False):
        """Model ``name`` as a ``casadi.Function`` of one state, its parameters bound or an input.

        The SX graph of the model's program, one node per assignment (common
        subexpressions shared, nothing expanded): see
        :func:`kanerobot.dynamics.casadi_model.model_function` for its inputs
        and outputs.

        Parameters
        ----------
        name : str
            A model of :attr:`models` with a program (:meth:`has_program`), or
            the direct dynamics of Lagrange and Kane (``A^-1 ([0; tau] - H)``
            solved in the graph).
        values : mapping name -> float, optional
            The parameters, checked as :meth:`numeric` checks them, folded
            into the graph as constants.  None (the default): the function's
            last input is ``p``, the parameters in the order of
            :attr:`parameters` (identification, robust design).
        physical : bool, optional
            As for :meth:`numeric`.
        wrench : bool, optional
            Whether the external wrenches of :attr:`wrench` are inputs, after
            the state's (zero when not, the default).

        Returns
        -------
        casadi.Function

        Raises
        ------
        KaneRobotError
            When CasADi is not installed (``pip install 'kanerobot[casadi]'``),
            for an unknown model or one this engine solves numerically (the
            direct dynamics derivatives of Lagrange and Kane).
        ParameterError
            As :meth:`numeric`, for ``values``.

        Examples
        --------
        >>> import numpy as np, kanerobot as kr
        >>> from kanerobot.dynamics.parameters import random_parameters
        >>> robot = kr.load(kr.frames_path("planar2"))
        >>> model = kr.derive(robot)
        >>> f = model.casadi("inverse_dynamics")  # parameters as an input
        >>> f.name_in(), f.size_in(3), f.name_out()
        (['q', 'qd', 'qdd', 'p'], (12, 1), ['tau'])
        >>> values = random_parameters(robot, np.random.default_rng(0))
        >>> fn = model.numeric(values, backend="numpy")
        >>> q, qd, qdd = [0.1, 0.2], [0.3, 0.4], [0.5, 0.6]
        >>> p = [values[name] for name in model.parameters]
        >>> bool(np.allclose(f(q, qd, qdd, p).full().ravel(), fn.inverse_dynamics(q, qd, qdd)))
        True
        >>> bound = model.casadi("mass_matrix", values)  # parameters folded in
        >>> bool(np.allclose(bound(q).full(), fn.mass_matrix(q)))
        True
        """
        from kanerobot.dynamics.casadi_model import model_function

        parameters = None
        if values is not None:
            parameters = NumericDynamics(self, values, backend="numpy", physical=physical).parameter_values
        return model_function(self, name, parameters, wrench)

    def _output_grid(self, name):
        """How the C backend lays out model ``name``'s outputs: None for a
        vector, else the (nv, nv) grid of :func:`matrix_grid` (of
        :func:`~kanerobot.dynamics.derivatives.output_grid` for a derivative model)."""
        if name in derivatives.DERIVATIVE_MODELS:
            return derivatives.output_grid(self.program(name), self.nv)
        if name not in MATRIX_MODELS:
            return None
        return matrix_grid(self.program(name), self.nv, name, MATRIX_MODELS[name])

    def compile(self, names=None, jobs=None):
        """Compile models to C now rather than on their first call.

        Sources are generated one after the other while up to ``jobs``
        compilers run at once (default: one per CPU).

        Parameters
        ----------
        names : iterable of str, optional
            Models (see :data:`MODELS`); by default all of them but the
            derivative models (named to compile them).
        jobs : int, optional

        Returns
        -------
        dict
            ``{name: CompiledFunction}``, as :meth:`compiled` gives them.
        """
        if names is None:
            names = [name for name in self.models if self.has_program(name) and name not in derivatives.DERIVATIVE_MODELS]
        names = list(names)
        for name in list(self.parameter_programs) + names:  # derived here, not in the threads
            self.program(name)
        todo = [name for name in dict.fromkeys(names) if name not in self._compiled]
        jobs = min(len(todo), jobs or os.cpu_count() or 1)
        if jobs > 1:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                list(pool.map(self.compiled, todo))
        return {name: self.compiled(name) for name in names}

    def _root_groups(self):
        """``{joints' group: (root's group, symbols)}``: the root joint's symbols the programs read, none
        for a fixed root.  Of a configuration, the orientation only (a free flyer's quaternion
        ``QX0 .. QW0``: the dynamics do not depend on where the base is); its speeds and their derivatives."""
        root = self.root
        if not root.nv:
            return {}
        names = {"q": root.configuration_names(BASE)[3:], "qd": root.speed_names(BASE), "qdd": root.acceleration_names(BASE)}
        return {key: (ROOT_GROUPS[key], [sympy.Symbol(name) for name in names[key]]) for key in ROOT_GROUPS}

    def _state_groups(self):
        """[(key, symbols)] in argument order: "q" (the joints'), the root's configuration, "qd", the
        root's speeds, "qdd", their derivatives (:meth:`_root_groups`), "tau", then ("wrench", label) per wrench."""
        root, groups = self._root_groups(), []
        for key, symbols in (("q", self.q), ("qd", self.qd), ("qdd", self.qdd)):
            groups.append((key, symbols))
            if key in root:
                groups.append(root[key])
        return groups + [("tau", self.tau)] + [(("wrench", label), symbols) for label, symbols in self.wrench.items()]

    def group_slices(self):
        """``{group: (argument, slice)}``: where the numeric functions' ``q``, ``qd``, ``qdd`` and
        ``tau`` hold each state group of :meth:`_state_groups` (the root's entries first)."""
        nq, nv = self.root.nq, self.root.nv
        out = {"q": ("q", slice(nq, None)), "qd": ("qd", slice(nv, None)), "qdd": ("qdd", slice(nv, None)), "tau": ("tau", slice(None))}
        root = self._root_groups()
        if root:
            out[root["q"][0]] = ("q", slice(nq - len(root["q"][1]), nq))
            out[root["qd"][0]], out[root["qdd"][0]] = ("qd", slice(0, nv)), ("qdd", slice(0, nv))
        return out

    def matrix(self, name) -> sympy.Matrix:
        """Model ``name`` as one sympy Matrix of the state and the parameters: the program substituted back.

        The intermediate variables of :meth:`program` are replaced by their
        expressions (:meth:`Program.substitute_back
        <kanerobot.symbolic.program.Program.substitute_back>`), so the
        entries are plain expressions of ``q`` (``sin(th1)``, not ``S1``),
        ``qd``, ``qdd``, ``tau`` and the parameters: to read, differentiate
        or simplify with sympy, not to evaluate fast (the program does that).
        Shape: (nv, nv) for the inertia and Coriolis matrices, (nv, 2 nv) or
        (nv, 2 nv + n) for the derivative models (their blocks side by
        side), a column (nv, 1) for a vector model.

        Examples
        --------
        >>> import kanerobot as kr
        >>> A = kr.derive(kr.load(kr.frames_path("planar2"))).matrix("mass_matrix")
        >>> A.shape, A[0, 1] == A[1, 0]
        ((2, 2), True)
        >>> sorted(map(str, A[1, 1].free_symbols))
        ['IA2', 'ZZ2']
        """
        program = self.program(name)
        values = program.substitute_back()
        grid = self._output_grid(name)
        if grid is None:
            return sympy.Matrix([values[output] for output in program.outputs])
        entry = lambda cell: 0 if cell == 0 else values[cell]  # noqa: E731 (0: an absent entry)
        rows, cols = len(grid), len(grid[0])
        return sympy.Matrix(rows, cols, lambda i, j: entry(grid[j][i]) if grid[i][j] is None else entry(grid[i][j]))

    def op_count(self, name):
        """Operations of model ``name``: ``{"mul": int, "add": int, "fn": int}``.

        For a direct dynamic model solved from A and H (Lagrange, Kane), the
        counts of both programs plus those of a Cholesky factorisation and two
        triangular solves, taken as ``n(n+1)(n+2)/6 + n^2`` multiplications,
        as many additions plus n, and n square roots.  For the derivatives of
        such a model, those counts, the inverse dynamics derivatives' and two
        triangular solves (``n^2`` multiplications and additions) per column.
        """
        if self.has_program(name):
            return dict(self.program(name).op_count())
        n = self.nv
        if name in derivatives.SOLVED_DERIVATIVES.values():
            solved, D = self.op_count("direct_dynamics"), self.op_count("inverse_dynamics_derivatives")
            columns = (2 * n + len(self.tau)) * n * n
            return {key: solved[key] + D[key] + (columns if key != "fn" else 0) for key in ("add", "mul", "fn")}
        A, H = self.op_count("mass_matrix"), self.op_count("h")
        solve = n * (n + 1) * (n + 2) // 6 + n * n
        return {"add": A["add"] + H["add"] + n + solve, "mul": A["mul"] + H["mul"] + solve, "fn": A["fn"] + H["fn"] + n}

    @property
    def state_symbols(self):
        """Symbols given as arguments of the numeric functions, in the order of
        :meth:`_state_groups` (q, QP, QDP, GAM, then the external wrenches), each once."""
        out = []
        for _, group in self._state_groups():
            out += [s for s in group if isinstance(s, sympy.Symbol) and s not in out]
        return out

    @property
    def parameters(self):
        """Names of the free symbols the models need besides the state, in the robot's order.

        Frame by frame, SYMORO's order within a frame (``D3 XX3 ... FS3``),
        gravity last: :meth:`~kanerobot.robot.description.Robot.parameter_order`.

        These are the symbols of the inverse dynamic model (the programs of
        :attr:`parameter_programs`), which every other model specialises,
        less q, QP, QDP, GAM and the external wrenches (given as ``wrench=``
        to :meth:`NumericDynamics.inverse_dynamics`).
        """
        used = set().union(*(self.program(name).used_inputs() for name in self.parameter_programs))
        return parameters_without_state(self.robot, used - set(self.state_symbols))

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

    def numeric(self, values, backend="auto", physical=True, check=True, bind=False):
        """Numeric functions with the parameters bound to ``values`` ({name: float}).

        ``values`` must give every name of :attr:`parameters`; other symbols
        of the robot that no model needs are accepted and ignored.

        ``bind`` (default False) says when the numbers come in.  False: the
        programs are derived with the parameters as symbols and the values
        are passed to the generated code at each call (one derivation for
        any values: identification, parameter studies).  True: the model of
        ``robot.subs(values)`` is derived and its code generated with the
        numbers folded in (:func:`bound_numeric`): a parameter whose value
        is 0 (a URDF's zero products of inertia, rotor inertia, friction)
        vanishes from the programs, as with ``kr.load(path, bind=True)``:
        the fastest code for one set of values, at the price of a
        derivation per set.  The returned functions' ``model`` is then the
        bound model.

        ``backend`` says how the programs run:

        - ``"numpy"``: generated numpy source, vectorized over the batch;
        - ``"c"``: generated C, compiled with the system compiler on each
          model's first call (see :mod:`kanerobot.codegen.compiled`; the
          libraries are cached on disk and in the process); an error when
          there is no compiler or compiling fails;
        - ``"auto"`` (default): C when a C compiler is found, else numpy;
          if compiling fails, numpy from then on.  The reason for falling
          back is :attr:`NumericDynamics.fallback_reason`;
        - ``"casadi"``: each program as a ``casadi.Function`` (an SX graph,
          one node per assignment: :mod:`kanerobot.codegen.casadi`), a batch
          by its ``map``; ``pip install 'kanerobot[casadi]'``.  For
          optimisation, :meth:`casadi` gives the function itself;
        - ``"jax"``: generated ``jax.numpy``, jitted on each model's first
          call (float64: JAX's ``jax_enable_x64`` is turned on), the
          results numpy arrays; the same programs as pure functions for
          ``jax.jit``, ``jax.vmap`` and ``jax.grad`` are
          :meth:`NumericDynamics.jax_function` (see
          :mod:`kanerobot.dynamics.jax_model`).  Needs JAX
          (``pip install 'kanerobot[jax]'``); never chosen by ``"auto"``.

        All give the same numbers (to rounding) and the same shapes.

        ``physical`` (default True) checks that the values are those of real
        bodies (:func:`~kanerobot.dynamics.parameters.check_physical`: mass
        >= 0, inertia about the centre of mass positive semi-definite with the
        triangle inequality, rotor inertia and friction >= 0); identified base
        parameters, which group several links' values, need
        ``physical=False``.  ``check`` (default True) makes every function
        refuse states that are not finite numbers (an ``inf`` rate gives NaN
        torques everywhere).  The test is measurable on batches (a few % of
        a batch of 1000 states of the RX-90's ``h`` in C) and costs nothing
        worth naming on one state in C (a loop in the extension, 0.27 us
        per call with or without it); ``check=False`` saves it in a loop of
        states known to be finite (``kr.simulate`` of a fixed-base robot in
        C calls the compiled code directly and does not pay it).

        Raises
        ------
        ParameterError
            Listing the names without a value and the names that are not
            symbols of the robot; for a value that is not a finite number;
            for values that are not physical (with ``physical=True``).
        kanerobot.codegen.compiled.CompileError
            With ``backend="c"`` when no C compiler is found.
        KaneRobotError
            For an unknown backend; with ``backend="casadi"`` or ``backend="jax"`` when CasADi or
            JAX is not installed.

        Examples
        --------
        >>> import kanerobot as kr
        >>> robot = kr.load(kr.frames_path("planar2"))
        >>> model = kr.derive(robot)
        >>> values = dict.fromkeys(model.parameters, 0.0) | {"L1": 0.5, "G3": -9.81, "M1": 1.0, "M2": 2.0, "MX2": 0.5, "ZZ2": 0.2}
        >>> fast = model.numeric(values, bind=True, backend="numpy")
        >>> fast.model.parameters, sum(fast.model.op_count("inverse_dynamics").values()) < sum(model.op_count("inverse_dynamics").values())
        ([], True)
        """
        if bind:
            return bound_numeric(self, values, self._rebuilt, backend=backend, physical=physical, check=check)
        return NumericDynamics(self, values, backend=backend, physical=physical, check=check)

    def _rebuilt(self, robot):
        """The model of this kind (class, method) of another robot (``numeric(..., bind=True)``'s)."""
        return type(self)(robot, self.method)

    @property
    def state_space(self):
        """The :class:`~kanerobot.state_space.StateSpace`: ``q`` and ``qd`` of the root joint (a free
        flyer's: pinocchio's ``x y z``, quaternion ``x y z w``, then ``v``, ``w`` in frame 0) and of each
        joint, from the joint models; ``tau`` one per joint speed."""
        robot, root = self.robot, self.root
        labels = tuple(robot.joint_labels)
        coordinates, speeds, described = list(_names(root, BASE, "configuration")), list(_names(root, BASE, "speed")), []
        rates: list[str] = []
        controlled: list[int] = []
        for label, (joint, q, _) in zip(labels, self.layout[1:]):
            names = _names(joint, robot.frame(label).stem, "configuration")
            coordinates += [label] if joint.nv == 1 else [f"{label}.{name}" for name in names]
            described.append(label if joint.nv == 1 else f"{label} ({' '.join(names)})")
            rates += [label] * joint.nv
            # the columns a controller tracks, one per speed: the configuration's first nv (a quaternion's vector part)
            controlled += range(q.start, q.start + joint.nv)
        joints = f"joints {', '.join(described)}"
        slices = self.group_slices()
        inputs = tuple((key, *slices[key]) for key, _ in self._state_groups() if key in slices and slices[key][0] in ("q", "qd", "tau"))
        free = bool(root.nv)
        return StateSpace(
            kind="floating base" if free else "fixed base", adjective="floating-base" if free else robot.structure,
            name=robot.name, coordinates=tuple(coordinates),
            q_names=tuple(coordinates[:root.nq]) + tuple(map(str, self.q)), qd_names=tuple(speeds) + tuple(map(str, self.qd)),
            torques=tuple(map(str, self.tau)),
            layout_q=f"base x y z, quaternion x y z w, {joints}" if free else joints,
            layout_qd=f"base v x y z and w x y z in frame 0, joint rates {', '.join(labels)}" if free else "their rates",
            tau_layout=joints, actuation=np.eye(self.nv)[root.nv:], controlled=tuple(controlled),
            controlled_labels=tuple(coordinates[k] for k in controlled),
            origin=np.concatenate([joint.neutral() for joint in self.joint_models]), tree=robot, joints=tuple(rates),
            joint_state=not free, joint_columns=tuple(range(root.nq, self.nq)) if free else None,
            program_inputs=inputs,
        )  # fmt: skip


def _names(joint, stem, kind):
    """The names of a joint's configuration or speeds in a state space: its symbols' names without
    the frame's stem, in lower case (a free flyer's ``x y z qx qy qz qw``, ``vx .. wz``)."""
    return tuple(name[: len(name) - len(stem)].lower() for name in getattr(joint, f"{kind}_names")(stem))


#: The state groups each model's one-state call takes, in this order
#: (:meth:`NumericDynamics._fast_function`); the others are zero.
ONE_STATE_GROUPS = {name: groups for name, groups in common.MODEL_INPUTS.items() if name != "base_acceleration"}


def general_path(*args):
    """The one-state call where there is no extension: None, the general path answers."""
    return None


def argument_groups(groups):
    """``[(name, symbols)]`` as arguments of a compiled function: entries that
    are numbers (a customised 0), or symbols already in an earlier group, get
    a placeholder no program uses (``kr_unused_<name>_<k>``)."""
    out, seen = [], set()
    for name, symbols in groups:
        group = []
        for k, symbol in enumerate(symbols):
            if isinstance(symbol, sympy.Symbol) and symbol not in seen:
                seen.add(symbol)
                group.append(symbol)
            else:
                group.append(sympy.Symbol(f"kr_unused_{name}_{k}"))
        out.append((name, group))
    return out


def select_backend(backend):
    """``(backend, fallback_reason)`` for a requested backend of :data:`BACKENDS`:
    ``"c"`` when a C compiler is found (an error if ``"c"`` was asked and there
    is none), else ``"numpy"`` with the reason; ``"casadi"`` when asked (an
    error naming the extra to install when CasADi is missing)."""
    if backend not in BACKENDS:
        raise KaneRobotError(f"unknown backend {backend!r}: choose among {', '.join(BACKENDS)}")
    if backend == "numpy":
        return "numpy", None
    if backend == "casadi":
        from kanerobot.codegen.casadi import require_casadi

        require_casadi()  # one line saying how to install it
        return "casadi", None
    if backend == "jax":  # asked for by name only, never chosen by "auto"
        from kanerobot.codegen.jax import load_jax

        load_jax()  # one line saying what to install when JAX is missing
        return "jax", None
    from kanerobot.codegen.compiled import find_compiler

    try:
        find_compiler()
    except KaneRobotError as exc:
        if backend == "c":
            raise type(exc)(f"backend 'c': {exc}") from None
        return "numpy", str(exc)
    return "c", None


def bound_values(robot, parameters, robot_names, values, hint=None, physical=True):
    """``{Symbol: float}`` of the ``parameters`` in ``values``, after checking them.

    Names of ``robot_names`` (symbols of the robot) that no model needs are
    accepted and left out (XX1 of an arm whose first link only turns about z).
    Every structure's ``numeric`` binds its values here, so the checks are
    the same for all.

    Raises
    ------
    ParameterError
        Listing the parameters without a value (``hint(missing)`` may add
        advice) and the names that are not symbols of the robot; naming a
        value that is not a finite number; with ``physical``, naming the
        links the ``parameters`` use whose values are not those of a rigid
        body, negligible ones aside
        (:func:`~kanerobot.dynamics.parameters.check_physical`).
    """
    names = set(parameters)
    given = {str(k) for k in values}
    missing = sorted(names - given)
    unknown = sorted(given - names - set(robot_names))
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"no value for {', '.join(missing)}" + (hint(missing) if hint else ""))
        if unknown:
            parts.append(f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a symbol of this robot")
        raise ParameterError(f"robot {robot.name}: " + "; ".join(parts) + f" (parameters: {', '.join(parameters)})")
    numbers = finite_values(robot, values)
    if physical:
        from kanerobot.dynamics.parameters import check_physical

        check_physical(robot, numbers, used=names)  # a link the model does not use cannot change it
    return {sympy.Symbol(name): value for name, value in numbers.items() if name in names}


def bound_numeric(model, values, rebuild, backend="auto", physical=True, check=True):
    """``model.numeric(values, bind=True)``: the numeric functions of the model of ``robot.subs(values)``.

    The numbers go into the description before the programs are derived
    (as ``kr.load(path, bind=True)`` does for a URDF), so the generated code
    has them folded in: a product with a value 0 vanishes, a value 1
    multiplies nothing.  The values are checked as the unbound path checks
    them (finite numbers, symbols of the robot, physical with
    ``physical=True``); the bound robot's model then needs no other
    parameter, or names those still missing.

    Parameters
    ----------
    model : DynamicModel, ClosedLoopModel, FloatingBaseModel, FlexibleModel or WheeledModel
    values : mapping name -> float
    rebuild : callable
        ``rebuild(robot)``: the model of the same kind (method, options) for the bound robot.
    backend, physical, check
        As :meth:`DynamicModel.numeric`.

    Returns
    -------
    NumericDynamics, ConstrainedDynamics or NumericFlexible
        Of the bound model (``.model``), with no parameters of its own.

    Raises
    ------
    ParameterError
        A value that is not a finite number; names that are not symbols of
        the robot; values not physical (``physical=True``); parameters of
        the models without a value.
    """
    from kanerobot.robot.description import parameter_symbol_names
    from kanerobot.robot.expressions import exact_number

    robot = model.robot
    numbers = finite_values(robot, values)
    state = {str(s) for s in robot.joint_symbols}
    for table in robot.joint_parameters.values():
        state |= {str(s) for value in table.values() for s in sympy.sympify(value).free_symbols}
    known = parameter_symbol_names(robot) - state
    unknown = sorted(set(numbers) - known - state)
    if unknown:
        raise ParameterError(
            f"robot {robot.name}: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not a symbol of this robot "
            f"(to bind: its parameters {', '.join(sorted(known)) or 'none'})"
        )
    if physical:
        from kanerobot.dynamics.parameters import check_physical

        check_physical(robot, numbers, used={str(name) for name in model.parameters})
    bound = rebuild(robot.subs({name: exact_number(value) for name, value in numbers.items() if name in known}))
    return bound.numeric({}, backend=backend, physical=False, check=check)


def finite_values(robot, values):
    """``{name: float}`` of ``values``, or a :class:`ParameterError` naming
    those that are not finite numbers."""
    numbers, bad = {}, []
    for key, value in values.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            bad.append(f"{key} = {value!r}")
            continue
        if not np.isfinite(number):
            bad.append(f"{key} = {number}")
        numbers[str(key)] = number
    if bad:
        raise ParameterError(f"robot {robot.name}: {', '.join(bad)}: every value must be a finite number")
    return numbers


def as_states(x, n, what, detail=None, check=True):
    """``x`` as an (N, n) array and whether it was a single state; ``detail``
    (what the n values are) goes into the error message.  With ``check``,
    entries that are not finite numbers are refused, naming the first."""
    try:
        array = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise KaneRobotError(f"{what} must be numbers, got {x!r}") from None
    single = array.ndim == 1
    array = np.atleast_2d(array)
    if array.ndim != 2 or array.shape[1] != n:
        if detail:
            raise KaneRobotError(f"{what} must have {n} values ({detail}), shape ({n},) or (N, {n}); got shape {np.shape(x)}")
        raise KaneRobotError(f"{what} must have shape ({n},) or (N, {n}), got {np.shape(x)}")
    if check and not _finite(array):
        row, column = np.argwhere(~np.isfinite(array))[0]
        where = f"{what}[{column}]" if single else f"{what}[{row}, {column}] (state {row} of the batch)"
        raise KaneRobotError(f"{where} = {array[row, column]}: states must be finite numbers")
    return array, single


def _finite(array):
    """Whether every entry is a finite number.  For one state, Python's math
    on a short list costs a third of numpy's ufunc call (0.7 us against 2-3)."""
    if array.size <= 32:
        return all(map(math.isfinite, array.ravel().tolist()))
    return bool(np.isfinite(array).all())


class BalanceFunctions:
    """The balance quantities of a numeric model: centre of mass, its velocity and Jacobian, centroidal momentum.

    A model class gives :meth:`center_of_mass`, :meth:`center_of_mass_jacobian`,
    :meth:`centroidal_momentum_matrix` and ``_speeds(qd)`` (its speeds as
    (N, nv) and whether one state); the velocity and the momentum are these
    matrices times the speeds, written once here.  See
    :mod:`kanerobot.dynamics.centroidal` for the definitions and the algorithm.
    """

    if TYPE_CHECKING:  # what the model class gives (declared for the type checker only: nothing at run time)

        def center_of_mass_jacobian(self, q: ArrayLike) -> np.ndarray: ...

        def centroidal_momentum_matrix(self, q: ArrayLike) -> np.ndarray: ...

        def _speeds(self, qd: ArrayLike) -> tuple[np.ndarray, bool]: ...

    def center_of_mass_velocity(self, q: ArrayLike, qd: ArrayLike) -> np.ndarray:
        """Velocity of the centre of mass ``cdot = J_G(q) qd``, shape (3,) or (N, 3).

        In the axes of :meth:`center_of_mass` (frame 0, or the world for a
        floating base); ``qd`` the model's speeds (pinocchio's for a floating
        base, the independent speeds of closed loops and wheels).
        """
        return self._times(self.center_of_mass_jacobian(q), qd)

    def centroidal_momentum(self, q: ArrayLike, qd: ArrayLike) -> np.ndarray:
        """Centroidal momentum ``h_G = [l; k_G] = A_G(q) qd``, shape (6,) or (N, 6).

        Linear momentum, then angular momentum about the centre of mass, in
        the axes of :meth:`center_of_mass`; ``qd`` as in :meth:`center_of_mass_velocity`.
        """
        return self._times(self.centroidal_momentum_matrix(q), qd)

    def _times(self, matrix, qd):
        """``matrix @ qd`` for one state or a batch of either."""
        speeds, single = self._speeds(qd)
        out = (np.asarray(matrix) @ speeds[..., None])[..., 0]
        return out[0] if single and np.ndim(matrix) == 2 else out


#: The numeric protocol: the methods every numeric model has, with one
#: signature whatever the structure (``tests/test_model_protocol.py``); a
#: structure that cannot give one raises :class:`KaneRobotError` saying why.
PROTOCOL = (
    "inverse_dynamics", "mass_matrix", "h", "gravity", "coriolis_matrix", "direct_dynamics", "base_acceleration",
    "inverse_dynamics_derivatives", "direct_dynamics_derivatives", "pose", "jacobian", "center_of_mass",
    "center_of_mass_jacobian", "centroidal_momentum_matrix", "center_of_mass_velocity", "centroidal_momentum",
    "total_mass", "configuration_derivative", "rhs", "state_space",
)  # fmt: skip


class _class_or_instance:
    """A method bound to the instance it is read on, or to the class (``cls.provides(name)`` and ``fn.provides(name)``)."""

    def __init__(self, function):
        # update_wrapper only copies the name and docstring: a descriptor, not a callable, is fine
        functools.update_wrapper(self, function)  # type: ignore[arg-type]
        self.function = function

    def __get__(self, instance, owner):
        return functools.partial(self.function, owner if instance is None else instance)


class NumericProtocol(BalanceFunctions):
    """What every numeric model offers (:data:`PROTOCOL`), one signature for every structure.

    ``q`` is the structure's configuration (``nq`` values), ``qd``, ``qdd``
    its speeds and their derivatives (``nv``), ``tau`` its inputs; ``wrench``
    the external wrenches by link and ``out`` an array receiving the result.
    The methods here are those some structure cannot give: each raises a
    :class:`KaneRobotError` saying why, and a structure that can overrides it.
    """

    #: The symbolic model these functions run (set by each structure's ``__init__``).
    model: Any

    if TYPE_CHECKING:  # what every structure gives (declared for the type checker only: nothing at run time)

        @property
        def nq(self) -> int: ...

        @property
        def nv(self) -> int: ...

        def direct_dynamics(self, q, qd, tau, wrench=None, out=None) -> np.ndarray: ...

    @_class_or_instance
    def provides(owner, name: str) -> bool:
        """Whether this structure gives method ``name`` of :data:`PROTOCOL` (not the refusal inherited here).

        Examples
        --------
        >>> import kanerobot as kr
        >>> from kanerobot.dynamics.parameters import random_parameters
        >>> robot = kr.load(kr.frames_path("planar2"))
        >>> fn = kr.derive(robot).numeric(random_parameters(robot), backend="numpy")
        >>> fn.provides("direct_dynamics_derivatives"), fn.provides("base_acceleration")
        (True, False)
        """
        if name not in PROTOCOL:
            raise KaneRobotError(f"{name!r} is not a method of the numeric models: they are {', '.join(PROTOCOL)}")
        cls = owner if isinstance(owner, type) else type(owner)
        given = inspect.getattr_static(cls, name) is not inspect.getattr_static(NumericProtocol, name, None)
        return given and (owner is cls or name not in owner._refused())

    def _refused(self):
        """The methods of :data:`PROTOCOL` the class gives and this instance refuses (its structure cannot)."""
        return set()

    def _unavailable(self, name, why) -> NoReturn:
        raise KaneRobotError(f"robot {self.model.robot.name} ({self.model.state_space.kind}): no {name}: {why}")

    def _no_out(self, name, out):
        """Refuse ``out`` for a model whose result is not one array."""
        if out is not None:
            self._unavailable(f"out= for {name}", "its result is several arrays; call it without out")

    def _output(self, result, out):
        """``result``, or ``out`` holding it when given."""
        if out is None:
            return result
        if not isinstance(out, np.ndarray) or out.shape != result.shape or out.dtype != np.float64 or not out.flags.writeable:
            given = f"a {out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else repr(out)
            raise KaneRobotError(f"out must be a writeable float64 array of shape {result.shape}, got {given}")
        out[...] = result
        return out

    def base_acceleration(self, q, qd, qdd, wrench=None):
        """The free-floating inverse dynamics (``F_0 = 0``) of a floating base; see
        :meth:`NumericDynamics.base_acceleration`."""
        self._unavailable("base_acceleration", "it is the free-floating inverse dynamics of a floating base (is_floating = 1)")

    def inverse_dynamics_derivatives(self, q, qd, qdd, wrench=None):
        """``(dtau/dq, dtau/dqd)``: programs of serial, tree and floating robots (:class:`NumericDynamics`)."""
        self._unavailable("inverse_dynamics_derivatives", _NO_DERIVATIVES)

    def direct_dynamics_derivatives(self, q, qd, tau, wrench=None):
        """``(dqdd/dq, dqdd/dqd, dqdd/dtau)``: programs of serial, tree and floating robots (:class:`NumericDynamics`)."""
        self._unavailable("direct_dynamics_derivatives", _NO_DERIVATIVES)

    def center_of_mass(self, q: ArrayLike) -> np.ndarray:
        """Centre of mass: programs of the rigid structures (:meth:`NumericDynamics.center_of_mass`)."""
        self._unavailable("center_of_mass", _NO_BALANCE)

    def center_of_mass_jacobian(self, q: ArrayLike) -> np.ndarray:
        """Jacobian of the centre of mass: programs of the rigid structures."""
        self._unavailable("center_of_mass_jacobian", _NO_BALANCE)

    def centroidal_momentum_matrix(self, q: ArrayLike) -> np.ndarray:
        """Centroidal momentum matrix: programs of the rigid structures."""
        self._unavailable("centroidal_momentum_matrix", _NO_BALANCE)

    def total_mass(self) -> float:
        """Mass of the links that move: that of the balance programs."""
        self._unavailable("total_mass", _NO_BALANCE)

    def configuration_derivative(self, q, qd):
        """``dq/dt`` at the speeds ``qd``, shape (nq,) or (N, nq)."""
        raise NotImplementedError

    def rhs(self, t, x, tau=None):
        """``xdot = (dq/dt, qdd)`` for ``x = (q, qd)``, for ``scipy.integrate.solve_ivp``.

        Parameters
        ----------
        t : float
        x : array_like, shape (nq + nv,)
        tau : array_like (ntau,), callable ``tau(t, x)`` or None
            The inputs (default 0).

        Returns
        -------
        numpy.ndarray, shape (nq + nv,)
        """
        x = np.asarray(x, dtype=float)
        nq, nv = self.nq, self.nv
        if x.shape != (nq + nv,):
            raise KaneRobotError(f"x must have {nq + nv} values, {self.model.state_space.layout}; got shape {x.shape}")
        q, qd = x[:nq], x[nq:]
        if callable(tau):
            tau = tau(t, x)
        tau = np.zeros(self.model.state_space.ntau) if tau is None else np.asarray(tau, dtype=float)
        return np.concatenate([self.configuration_derivative(q, qd), self.direct_dynamics(q, qd, tau)])


_NO_DERIVATIVES = (
    "the derivative models are programs of serial, tree and floating robots; differentiate inverse_dynamics "
    "or direct_dynamics numerically"
)
_NO_BALANCE = "the balance programs (centre of mass, centroidal momentum) are derived for rigid robots only"


class NumericDynamics(NumericProtocol, FrameKinematics):
    """Numeric dynamic functions of one robot with bound parameters.

    Every function takes one state (1-D arrays of length n) or a batch
    (2-D arrays of shape (N, n)) and returns arrays of matching shape.
    Programs are compiled (to numpy source, or to C) once, on first call.

    Attributes
    ----------
    backend : {"c", "numpy", "casadi"}
        What runs the models now.
    requested_backend : {"auto", "c", "numpy", "casadi"}
        What :meth:`DynamicModel.numeric` was asked for.
    fallback_reason : str or None
        Why ``"auto"`` runs numpy (no compiler, or a compiler error).
    fast_call_fallback : str or None
        Why one-state calls of the C backend go through ctypes rather than
        the extension of :mod:`kanerobot.codegen.extension` (no Python
        headers, say): the last model that could not use it, and the reason.

    Notes
    -----
    With the C backend, one state of :meth:`inverse_dynamics`,
    :meth:`mass_matrix`, :meth:`direct_dynamics`, :meth:`h`,
    :meth:`gravity` and :meth:`coriolis_matrix` (1-D float arrays, lists or
    tuples, no ``wrench``) is evaluated by a CPython extension that calls the
    compiled model directly: about half a microsecond on top of the model's
    own time, against 10-20 us through ctypes and numpy.  Batches, other
    inputs and every error take the general path, with the same numbers.
    """

    def __init__(self, model, values, backend="auto", physical=True, check=True):
        select = select_backend(backend)
        if model.root.nv:  # the base's mass first: its message says what a floating base needs
            check_masses(model.robot, finite_values(model.robot, values))
        self.model = model
        self.check = check
        self.values = bound_values(model.robot, model.parameters, model.robot_symbol_names, values, physical=physical)
        self._given = {str(k): float(v) for k, v in values.items()}  # the kinematics may read symbols no model needs
        # in the order of model.parameters: the compiled models' p (DynamicModel.compiled) and the numpy functions' (_run)
        self._parameter_symbols = [sympy.Symbol(name) for name in model.parameters]
        self._parameter_values = [self.values[s] for s in self._parameter_symbols]
        self._parameter_array = np.array(self._parameter_values, dtype=float)
        self._compiled = {}
        self._fast = {}  # model name -> its one-state call (_fast_function)
        self.requested_backend = backend
        self.backend, self.fallback_reason = select
        self.fast_call_fallback = None

    @property
    def n(self):
        """Number of the joints' speeds (of torques)."""
        return self.model.n

    @property
    def parameter_vector(self) -> np.ndarray:
        """The values bound, in the order of ``model.parameters``: the ``p`` of :meth:`jax_function` (a copy)."""
        return self._parameter_array.copy()

    @property
    def nq(self):
        """Length of a configuration: the root joint's (7 for a free flyer), then each joint's."""
        return self.model.nq

    @property
    def nv(self):
        """Length of a speed: the root joint's (6 for a free flyer), then each joint's."""
        return self.model.nv

    @property
    def parameter_values(self):
        """The values of the model's :attr:`~DynamicModel.parameters`, in that order: shape (len(parameters),)."""
        return self._parameter_array.copy()

    def casadi(self, name, wrench=False):
        """Model ``name`` as a ``casadi.Function`` of one state, these functions' values folded in.

        :meth:`DynamicModel.casadi` with these values (already checked) and ``wrench``; see
        :func:`kanerobot.dynamics.casadi_model.model_function` for the inputs
        and outputs.

        Examples
        --------
        >>> import numpy as np, kanerobot as kr
        >>> from kanerobot.dynamics.parameters import random_parameters
        >>> robot = kr.load(kr.frames_path("rx90"))
        >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="casadi")
        >>> f = fn.casadi("direct_dynamics")
        >>> f
        Function(direct_dynamics:(q[6],qd[6],tau[6])->(qdd[6]) SXFunction)
        >>> q, qd, tau = np.full(6, 0.1), np.full(6, 0.2), np.full(6, 0.3)
        >>> bool(np.allclose(f(q, qd, tau).full().ravel(), fn.direct_dynamics(q, qd, tau)))
        True
        """
        from kanerobot.dynamics.casadi_model import model_function

        return model_function(self.model, name, self.parameter_values, wrench)

    @property
    def state_space(self):
        """The model's :class:`~kanerobot.state_space.StateSpace` bound to these functions (built once):
        the joint models' ``qdot`` and ``integrate`` where a joint's configuration is not a vector space
        (a quaternion, kept unit), and a floating base's pose and monitors."""
        if "_state_space" not in self.__dict__:
            hooks: dict[str, Any] = {}
            if self._curved:
                hooks.update(qdot_map=self._qdot, integrate_map=self.integrate, prepare_map=self._prepared,
                             start_check=self._starting_configuration, monitor_map=self._monitors)  # fmt: skip
            if self.model.root.nv:
                hooks["base_pose"] = self._root_pose
            self._state_space = self.model.state_space.bind(self, values={str(k): v for k, v in self.values.items()}, **hooks)
        return self._state_space

    # ------------------------------------------------------ configurations
    @functools.cached_property
    def _curved(self):
        """``[(joint model, q slice, qd slice)]`` of the joints (the root's included) whose configuration is not a vector space."""
        return [entry for entry in self.model.layout if not entry[0].euclidean]

    @functools.cached_property
    def _quaternions(self):
        """The entries of :attr:`_curved` that hold a unit quaternion, last in their configuration
        (one coordinate more than their speeds: a free flyer, a ball joint)."""
        return [entry for entry in self._curved if entry[0].nq > entry[0].nv]

    def _configuration_and_speeds(self, q, qd):
        """``(q, qd, single)``: a configuration and speeds checked and broadcast to one batch (N, nq), (N, nv)."""
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        N = max(len(q), len(qd))
        return np.broadcast_to(q, (N, self.nq)), np.broadcast_to(qd, (N, self.nv)), single

    @functools.cached_property
    def _flat_columns(self):
        """``(q columns, qd columns)`` of the joints whose ``dq/dt`` is their speeds (nq = nv, a vector space)."""
        flat = [(qs, vs) for joint, qs, vs in self.model.layout if joint.euclidean]
        return [k for qs, _ in flat for k in range(qs.start, qs.stop)], [k for _, vs in flat for k in range(vs.start, vs.stop)]

    def _qdot(self, q, qd):
        """``dq/dt`` of a state a simulation has checked and prepared (one or a batch, no checks): the
        simulation's map (:attr:`state_space`), :meth:`configuration_derivative` without its checks."""
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        out = np.empty(qd.shape[:-1] + (self.nq,))
        columns, rates = self._flat_columns
        out[..., columns] = qd[..., rates]
        for joint, qs, vs in self._curved:
            out[..., qs] = joint.configuration_derivative(q[..., qs], qd[..., vs])
        return out

    def configuration_derivative(self, q, qd):
        """``dq/dt`` at the speeds ``qd``, joint by joint (:meth:`JointModel.configuration_derivative
        <kanerobot.robot.joints.model.JointModel.configuration_derivative>`: ``qd`` itself for one
        speed, a quaternion's ``1/2 Q (w, 0)``), shape (nq,) or (N, nq)."""
        q, qd, single = self._configuration_and_speeds(q, qd)
        parts = [joint.configuration_derivative(q[:, qs], qd[:, vs]) for joint, qs, vs in self.model.layout]
        return self._result(np.concatenate(parts, axis=1), single)

    def integrate(self, q, qd, dt):
        """The configuration after ``dt`` at constant speeds ``qd``, joint by joint (a free flyer and a
        ball joint by the exponential of their twist, quaternions kept unit), shape (nq,) or (N, nq)."""
        q, qd, single = self._configuration_and_speeds(q, qd)
        parts = [joint.integrate(q[:, qs], qd[:, vs], dt) for joint, qs, vs in self.model.layout]
        return self._result(np.concatenate(parts, axis=1), single)

    def difference(self, q0, q1):
        """The speeds ``v`` with ``integrate(q0, v, 1) == q1``, joint by joint, shape (nv,) or (N, nv)."""
        (q0, single), (q1, _) = self._configuration(q0), self._configuration(q1)
        q0, q1 = np.broadcast_arrays(q0, q1)
        return self._result(np.concatenate([joint.difference(q0[:, qs], q1[:, qs]) for joint, qs, _ in self.model.layout], axis=1), single)

    def neutral_configuration(self):
        """The configuration at which every joint is at its origin (unit quaternions), shape (nq,)."""
        return np.concatenate([joint.neutral() for joint in self.model.joint_models])

    def random_configuration(self, rng=None):
        """A configuration drawn joint by joint (:meth:`JointModel.random_configuration
        <kanerobot.robot.joints.model.JointModel.random_configuration>`: unit quaternions), shape (nq,)."""
        rng = np.random.default_rng() if rng is None else rng
        return np.concatenate([joint.random_configuration(rng) for joint in self.model.joint_models])

    def _normalised(self, q):
        """``q`` (N, nq) with each curved joint's configuration brought back on its manifold (a copy when changed)."""
        if not self._quaternions:
            return q
        q = np.array(q, dtype=float)
        for joint, qs, _ in self._quaternions:
            q[:, qs] = joint.normalised(q[:, qs])
        return q

    def _prepared(self, q):
        """One configuration ``q`` (nq,) with its quaternions normalised (a copy): where a simulation evaluates the model."""
        return self._normalised(np.asarray(q, dtype=float)[None])[0]

    def _starting_configuration(self, q, what):
        """A starting configuration with its quaternions normalised; a zero quaternion is refused."""
        for joint, qs, _ in self._quaternions:
            part = q[qs][-4:]  # x y z w
            if not np.linalg.norm(part) > 1e-12:
                where = f"q[{qs.stop - 4}:{qs.stop}]"
                whose = "the base quaternion" if joint is self.model.root else "the quaternion of a ball joint"
                raise KaneRobotError(f"{what}: {whose} {where} (x y z w) is zero; give a unit quaternion such as [0, 0, 0, 1]")
        return self._prepared(q)

    def _monitors(self, q_raw, q, qd):
        """How far each integrated quaternion's norm went from 1 (the largest), and a floating base's pose and momentum."""
        if not len(q):
            return {}
        errors = [np.abs(np.linalg.norm(q_raw[:, qs][:, -4:], axis=1) - 1.0) for _, qs, _ in self._quaternions]
        out = {"quaternion_norm_error": np.max(errors, axis=0)} if errors else {}
        if self.model.root.nv:
            out = {"base_pose": base_pose(q[:, :7]), "momentum": np.atleast_2d(self.momentum(q, qd)), **out}
        return out

    def _root_pose(self, q):
        """``(wR_0, wP_0)`` of a batch of configurations (N, nq): the free flyer's pose."""
        q = self._normalised(q)
        return quaternion_to_rotation(q[:, 3:7]), q[:, :3]

    def _evaluate(self, name, states):
        """Model ``name`` on a batch: (N, n) or (N, n, n).  ``states`` maps the
        keys of ``DynamicModel._state_groups`` to (N, k) arrays; groups left
        out are 0 (wrenches, torques)."""
        if self.backend == "jax":
            from kanerobot.dynamics.jax_model import evaluate

            return evaluate(self, name, states)
        function = self._c_function(name) if self.backend == "c" else None
        if self.backend == "casadi":
            function = self.model.casadi_function(name)  # the C function's arguments and batches
        batch = next(iter(states.values())).shape[0]
        if function is not None:
            arrays = []
            for key, symbols in self.model._state_groups():
                array = states.get(key)
                if array is None:
                    array = np.zeros((batch, len(symbols)))
                elif array.shape[0] != batch:
                    if array.shape[0] != 1:  # as numpy broadcasting would say
                        raise ValueError(f"operands could not be broadcast together: {batch} and {array.shape[0]} states")
                    array = np.broadcast_to(array, (batch, array.shape[1]))
                arrays.append(array)
            return function.batch(batch, arrays + [self._parameter_array])
        given = {
            s: array[:, k]
            for key, symbols in self.model._state_groups() if key in states
            for array in (states[key],)
            for k, s in enumerate(symbols) if isinstance(s, sympy.Symbol)
        }
        flat = self._run(name, given)
        if name in MATRIX_MODELS:
            return self._matrix(name, flat, symmetric=MATRIX_MODELS[name])
        return flat

    def _c_function(self, name):
        """The compiled model, or None after falling back to numpy."""
        from kanerobot.codegen.backend import CodegenError
        from kanerobot.codegen.compiled import CompileError

        try:
            return self.model.compiled(name)
        except (CompileError, CodegenError) as exc:
            if self.requested_backend == "c":
                raise
            self.backend = "numpy"
            self.fallback_reason = f"{name}: {exc}"
            self._fast.clear()  # every model runs numpy from now on, one state too
            return None

    def _fast_function(self, name):
        """The one-state call of model ``name``, made once and kept in ``_fast``.

        ``f(*states, out, check)``, the states being the groups of
        :data:`ONE_STATE_GROUPS` in order, returns the result, or None when
        the general path must answer (a batch, bad input, the numpy
        backend): a ``FastFunction`` of :mod:`kanerobot.codegen.extension`
        with the parameters bound and the other groups zero, or, where it
        cannot be built, a function always giving None (the reason in
        :attr:`fast_call_fallback`).
        """
        fast = None
        # a ball joint's quaternion inside q is normalised by the general path only
        inner_quaternion = any(entry[0] is not self.model.root for entry in self._quaternions)
        if self.backend == "c" and self.model.has_program(name) and not inner_quaternion:
            function = self._c_function(name)
            if function is not None:
                from kanerobot.codegen.compiled import CompileError
                from kanerobot.codegen.extension import fast_function

                layout, sizes, finite_result = self._one_state_layout(name)
                try:
                    fast = fast_function(function, layout + [self._parameter_array], sizes, finite_result)
                except CompileError as exc:
                    self.fast_call_fallback = f"{name}: {exc}"
        self._fast[name] = fast or general_path
        return self._fast[name]

    def _one_state_layout(self, name):
        """``(layout, sizes, finite_result)`` of model ``name``'s one-state call
        (:func:`~kanerobot.codegen.extension.fast_function`), the parameters
        left out: the groups of :data:`ONE_STATE_GROUPS` whole, the others zero;
        with a root joint, each group a slice of ``q``, ``qd``, ``qdd`` or ``tau``
        (the root's quaternion normalised).  A non-finite direct dynamics (or its
        derivatives) is left to the general path, which raises :class:`SingularityError`."""
        given = ONE_STATE_GROUPS[name]
        finite = name in ("direct_dynamics", "direct_dynamics_derivatives")
        if not self.model.root.nv:
            return [None if key in given else np.zeros(len(symbols)) for key, symbols in self.model._state_groups()], None, finite
        sizes = {"q": self.nq, "qd": self.nv, "qdd": self.nv, "tau": self.n}
        slices, quaternion = self.model.group_slices(), self.model._root_groups()["q"][0]
        layout = []
        for key, symbols in self.model._state_groups():
            argument, part = slices.get(key, (None, slice(0)))
            layout.append((given.index(argument), part.start or 0, key == quaternion) if argument in given else np.zeros(len(symbols)))
        return layout, [sizes[key] for key in given], finite

    def _run(self, name, given):
        """Evaluate program ``name`` with numpy on a batch; ``given`` maps state
        symbols to (N,) columns, and state symbols left out are 0 (wrenches, torques)."""
        if name not in self._compiled:
            arguments = self.model.state_symbols + self._parameter_symbols
            # printed once per model and argument list: every numeric() of the model shares it (the
            # unit-parameter models of identification are a hundred of them, 0.1 s of printing each)
            shared = self.model.__dict__.setdefault("_numpy_functions", {})
            key = (name, tuple(arguments))
            if key not in shared:
                shared[key] = self.model.program(name).to_function(args=arguments)
            self._compiled[name] = shared[key]
        batch = len(next(iter(given.values())))
        zeros = np.zeros(batch)
        states = [given.get(s, zeros) for s in self.model.state_symbols]
        out = np.asarray(self._compiled[name](*states, *self._parameter_values), dtype=float)
        return np.broadcast_to(out.reshape(out.shape[0], -1), (out.shape[0], batch)).T

    # ------------------------------------------------------------ states
    def _configuration(self, q):
        """``q`` (nq values: the root joint's, then the joints') as an (N, nq) array, its quaternions
        normalised, and whether one state."""
        detail = None
        if self.model.root.nv:
            joints = " ".join(s.name if isinstance(s, sympy.Symbol) else str(s) for s in self.model.q)
            detail = f"base position x y z, quaternion x y z w, joints {joints}"
        q, single = as_states(q, self.nq, "q", detail, self.check)
        return self._normalised(q), single

    def _velocity(self, qd, what="qd"):
        """A speed or acceleration (nv values) as an (N, nv) array and whether one state."""
        detail = None
        if self.model.root.nv:
            detail = f"base v x y z and w x y z in frame 0, joints {' '.join(str(s) for s in self.model.qd)}"
        return as_states(qd, self.nv, what, detail, self.check)

    def _joints(self, x, what):
        """One value per joint speed (torques) as an (N, n) array and whether one state."""
        detail = f"one per joint {', '.join(self.model.robot.joint_labels)}" if self.model.root.nv else None
        return as_states(x, self.n, what, detail, self.check)

    def _base_states(self, q, qd=None, qdd=None):
        """The programs' state groups of ``q``, ``qd``, ``qdd`` (:meth:`DynamicModel.group_slices`:
        the root joint's part split off where it has one)."""
        given = {"q": q, "qd": qd, "qdd": qdd}
        return {key: given[argument][:, part] for key, (argument, part) in self.model.group_slices().items() if given.get(argument) is not None}

    @staticmethod
    def _result(x, single):
        return x[0] if single else x

    _vector_result = _result

    def _matrix(self, name, flat, symmetric):
        """The (nv, nv) matrix from its outputs (the upper triangle of ``A``, all of ``C``)."""
        N = self.nv
        names = matrix_entry_names(name_prefix(name), (N, N))
        position = {names[i][j]: (i, j) for i in range(N) for j in range(N)}
        M = np.zeros((flat.shape[0], N, N))
        for k, output in enumerate(self.model.program(name).outputs):
            i, j = position[output]
            M[:, i, j] = flat[:, k]
            if symmetric:
                M[:, j, i] = flat[:, k]
        return M

    def _mass_and_bias(self, states):
        """``A`` (N, nv, nv) and ``H`` (N, nv) at the states (q, qd, wrenches), broadcast to one batch."""
        A = self._evaluate("mass_matrix", {key: states[key] for key in ("q", "quaternion") if key in states})
        H = self._evaluate("h", {key: value for key, value in states.items() if key not in ("qdd", "base_acceleration", "tau")})
        batch = max(len(A), len(H))
        return np.broadcast_to(A, (batch,) + A.shape[1:]), np.broadcast_to(H, (batch, H.shape[1]))

    def _solved_direct_dynamics(self, states, tau):
        """``A^-1 ([0; tau] - H)`` (no torque on the root joint's speeds): the direct
        dynamics of an engine without a recursive program (Lagrange, Kane)."""
        A, H = self._mass_and_bias(states)
        rhs = np.concatenate([np.zeros((len(H), self.nv - self.n)), np.broadcast_to(tau, (len(H), self.n))], axis=1) - H
        return solve_dynamics(A, rhs, self.model.robot.name)

    def _finite(self, result):
        """``result``, or a :class:`SingularityError` when it is not finite (a pivot of the articulated inertia was 0)."""
        if not all(np.all(np.isfinite(block)) for block in (result if isinstance(result, tuple) else (result,))):
            raise SingularityError(
                f"robot {self.model.robot.name}: the articulated inertia of the robot is singular (check the masses and inertias)"
            )
        return result

    # ----------------------------------------------------------- the models
    def inverse_dynamics(self, q, qd, qdd, wrench=None, out=None):
        """Generalized forces ``A qdd + H``, shape (nv,) or (N, nv): the joint torques (a floating
        base's wrench ``F_0`` first: pinocchio's ``rnea``).

        ``wrench`` maps a link label to the 6-vector (FX, FY, FZ, CX, CY, CZ)
        the link exerts on the environment, in its own frame; links the robot
        describes with a wrench and that are left out get zero.  ``out``, a
        float array of the result's shape, receives the result and is
        returned (no new array for one state with the C backend).
        """
        if wrench is None:
            fast = self._fast.get("inverse_dynamics") or self._fast_function("inverse_dynamics")
            result = fast(q, qd, qdd, out, self.check)
            if result is not None:
                return result
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._velocity(qdd, "qdd")
        states = self._base_states(q, qd, qdd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        return self._output(self._result(self._evaluate("inverse_dynamics", states), single), out)

    def _wrench_states(self, wrench, batch):
        """``{("wrench", label): (batch, 6) array}`` of every link the robot
        describes with a wrench (0 where ``wrench`` leaves it out)."""
        states = {}
        wrench = {str(label): value for label, value in (wrench or {}).items()}
        for label in self.model.wrench:
            value, _ = as_states(wrench.pop(label, np.zeros(6)), 6, f"wrench of link {label}", "FX FY FZ CX CY CZ", self.check)
            states["wrench", label] = np.broadcast_to(value, (batch, 6))
        if wrench:
            described = ", ".join(self.model.wrench) or "none"
            raise KaneRobotError(
                f"no external wrench is described on link(s) {', '.join(map(str, wrench))} "
                f"(links with FX..CZ in the robot file: {described})"
            )
        return states

    def mass_matrix(self, q, out=None):
        """Inertia matrix A(q), shape (nv, nv) or (N, nv, nv); ``out`` as for :meth:`inverse_dynamics`."""
        result = (self._fast.get("mass_matrix") or self._fast_function("mass_matrix"))(q, out, self.check)
        if result is not None:
            return result
        q, single = self._configuration(q)
        return self._output(self._result(self._evaluate("mass_matrix", self._base_states(q)), single), out)

    def h(self, q, qd, wrench=None, out=None):
        """Centrifugal, Coriolis, gravity and friction torques H(q, qd) (and the external wrenches'),
        shape (nv,) or (N, nv); ``wrench`` and ``out`` as for :meth:`inverse_dynamics`."""
        if wrench is None:
            result = (self._fast.get("h") or self._fast_function("h"))(q, qd, out, self.check)
            if result is not None:
                return result
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        states = self._base_states(q, qd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd))))
        return self._output(self._result(self._evaluate("h", states), single), out)

    def coriolis_matrix(self, q, qd, out=None):
        """Coriolis matrix C(q, qd) (Christoffel form), shape (nv, nv) or (N, nv, nv): ``C qd`` the
        velocity terms of ``H``, ``A' - 2C`` skew-symmetric; ``out`` as for :meth:`inverse_dynamics`."""
        result = (self._fast.get("coriolis_matrix") or self._fast_function("coriolis_matrix"))(q, qd, out, self.check)
        if result is not None:
            return result
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        return self._output(self._result(self._evaluate("coriolis_matrix", self._base_states(q, qd)), single), out)

    def gravity(self, q, out=None):
        """Gravity torques Q(q), shape (nv,) or (N, nv); ``out`` as for :meth:`inverse_dynamics`."""
        result = (self._fast.get("gravity") or self._fast_function("gravity"))(q, out, self.check)
        if result is not None:
            return result
        q, single = self._configuration(q)
        return self._output(self._result(self._evaluate("gravity", self._base_states(q)), single), out)

    def direct_dynamics(self, q, qd, tau, wrench=None, out=None):
        """Accelerations for joint torques ``tau`` (n values; a floating base is not actuated), shape (nv,) or (N, nv).

        By the recursive program (no inertia matrix), or ``A^-1 ([0; tau] - H)``
        with an engine that has none (Lagrange, Kane); ``wrench`` and ``out``
        as for :meth:`inverse_dynamics`.

        Raises
        ------
        SingularityError
            When the articulated inertia (or ``A``) is singular at ``q``.
        """
        if wrench is None:
            result = (self._fast.get("direct_dynamics") or self._fast_function("direct_dynamics"))(q, qd, tau, out, self.check)
            if result is not None:
                return result
        (q, single), (qd, _), (tau, _) = self._configuration(q), self._velocity(qd), self._joints(tau, "tau")
        states = self._base_states(q, qd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(tau))))
        if not self.model.has_program("direct_dynamics"):
            return self._output(self._result(self._solved_direct_dynamics(states, tau), single), out)
        states["tau"] = tau
        return self._output(self._result(self._finite(self._evaluate("direct_dynamics", states)), single), out)

    # ------------------------------------------------------ the kinematics
    def pose(self, frame: str, q) -> np.ndarray:
        """Homogeneous transform of ``frame`` in the world frame, shape (4, 4) or (N, 4, 4).

        ``wT_frame = wT_0 0T_frame``: the root joint's pose (the identity on a
        fixed base, a free flyer's from its position and quaternion) times the
        program of the joints' part (the product of the frames' transforms
        along the path, :func:`~kanerobot.dynamics.kinematic_programs.pose_program`),
        derived on the first call for ``frame`` and kept on the model; it runs
        as the dynamic models do (C or numpy): pinocchio's frame placement
        ``data.oMf``.  ``q`` is a configuration (nq,) or a batch (N, nq).

        The other structures have theirs: closed
        loops and wheeled bases at every joint variable
        (:meth:`ConstrainedDynamics.pose
        <kanerobot.dynamics.constrained.ConstrainedDynamics.pose>`),
        flexible joints at ``z = (q, q_r)`` (:meth:`NumericFlexible.pose
        <kanerobot.dynamics.flexible.NumericFlexible.pose>`).

        Raises
        ------
        KaneRobotError
            An unknown frame, a ``q`` of the wrong length.
        """
        self._program_values(("pose", str(frame)))  # the frame checked before q
        q, single = self._configuration(q)
        T = self._frame_pose(frame, q[:, self.model.root.nq :])
        if self.model.root.nq:
            T = base_pose(q[:, :7]) @ T
        return T[0] if single else T

    def jacobian(self, frame: str, q, projection: str | None = None) -> np.ndarray:
        """Jacobian of the origin of ``frame``, projected into frame ``projection``: (6, nv) or (N, 6, nv).

        ``[V; w] = J qd``, linear rows first and one column per speed of the
        joints of ``robot.joint_labels``, as :func:`kanerobot.kinematics.jacobian`
        (whose matrix it evaluates, through the program of
        :func:`~kanerobot.dynamics.kinematic_programs.jacobian_program`,
        derived once per frame and projection).  With ``projection="0"`` it
        is pinocchio's frame Jacobian in ``LOCAL_WORLD_ALIGNED``; None (the
        default) is frame 0 (the world for a floating base).

        On a floating base, with ``p = 0P_frame`` the frame's origin in frame
        0, the base speeds ``(v, w)`` of ``qd`` (in frame 0) move it by ``v +
        w x p`` and turn it by ``w``; the joints by the fixed-base Jacobian
        ``0J`` of the joints' part.  In the axes of frame r, ``rR_0 = wR_r^T wR_0``::

            J = [ rR_0   -rR_0 [p]x   rR_0 0J_lin ]
                [ 0       rR_0        rR_0 0J_ang ]

        ``projection="world"`` (or None) projects into the world axes
        (pinocchio's ``LOCAL_WORLD_ALIGNED``), a frame label into that frame's axes.

        Raises
        ------
        KaneRobotError
            As :meth:`pose`, and for an unknown projection frame.
        """
        q, single = self._configuration(q)
        joints = q[:, self.model.root.nq :]
        if not self.model.root.nv:
            J = self._frame_jacobian(frame, joints, "0" if projection is None else projection)
            return J[0] if single else J
        if projection is None or str(projection) == "world":
            R = quaternion_to_rotation(q[:, 3:7])
        else:
            R = np.swapaxes(self._frame_pose(projection, joints)[:, :3, :3], 1, 2)  # rR_0 = (0R_r)^T
        p = self._frame_pose(frame, joints)[:, :3, 3]
        J0 = self._frame_jacobian(frame, joints, BASE)
        J = np.zeros((q.shape[0], 6, self.nv))
        J[:, :3, :3] = J[:, 3:, 3:6] = R
        J[:, :3, 3:6] = -R @ _cross_matrices(p)
        J[:, :3, 6:] = R @ J0[:, :3]
        J[:, 3:, 6:] = R @ J0[:, 3:]
        return J[0] if single else J

    def _frame_states(self, q):
        """The joints' part of checked configurations (N, nq - root's nq), and False."""
        return as_states(q, len(self.model.q), "q", check=self.check)

    # ----------------------------------------------------------- balance
    def center_of_mass(self, q: ArrayLike) -> np.ndarray:
        """Centre of mass of the links that move, in the world frame: shape (3,) or (N, 3).

        pinocchio's ``centerOfMass`` (link 0 and the links fixed to it are not
        counted on a fixed base; a floating base's ``p_0 + wR_0 0c``); the program is
        :func:`~kanerobot.dynamics.centroidal.center_of_mass`, derived on the
        first call and run as the dynamic models are (C or numpy).

        Raises
        ------
        KaneRobotError
            As :meth:`pose`, and when the moving links have no mass.

        Examples
        --------
        >>> import numpy as np, kanerobot as kr
        >>> from kanerobot.dynamics.parameters import random_parameters
        >>> robot = kr.load(kr.frames_path("rx90"))
        >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="numpy")
        >>> q, qd = np.zeros(6), np.array([1.0, 0, 0, 0, 0, 0])
        >>> fn.center_of_mass(q).shape, fn.center_of_mass_jacobian(q).shape, fn.centroidal_momentum_matrix(q).shape
        ((3,), (3, 6), (6, 6))
        >>> l = fn.centroidal_momentum(q, qd)[:3]   # the linear momentum is M cdot
        >>> bool(np.allclose(l, fn.total_mass() * fn.center_of_mass_velocity(q, qd)))
        True
        """
        q, flat, single = self._balance("center_of_mass", q)
        c = flat[:, 1:4]
        if self.model.root.nq:
            R, p = self._root_pose(q)
            c = p + np.einsum("nij,nj->ni", R, c)
        return c[0] if single else c

    def center_of_mass_jacobian(self, q: ArrayLike) -> np.ndarray:
        """Jacobian ``J_G`` of the centre of mass, ``cdot = J_G qd``: shape (3, nv) or (N, 3, nv), world axes.

        pinocchio's ``jacobianCenterOfMass``: ``A_G[:3] / M``
        (:func:`~kanerobot.dynamics.centroidal.center_of_mass`; a floating
        base's ``wR_0 0J_G``, its speeds first).
        """
        q, flat, single = self._balance("center_of_mass_jacobian", q)
        J = flat[:, 4:].reshape(len(flat), 3, -1)
        if self.model.root.nq:
            J = self._root_pose(q)[0] @ J
        return J[0] if single else J

    def centroidal_momentum_matrix(self, q: ArrayLike) -> np.ndarray:
        """Centroidal momentum matrix ``A_G``, ``h_G = A_G qd``: shape (6, nv) or (N, 6, nv), world axes.

        Linear rows, then the angular momentum about the centre of mass:
        pinocchio's ``computeCentroidalMap`` (Orin and Goswami's CMM), by the
        program of :func:`~kanerobot.dynamics.centroidal.centroidal_momentum_matrix`
        (a floating base's ``diag(wR_0, wR_0) 0A_G``: the momentum about the
        centre of mass depends on how the base is turned, not where it is).
        """
        q, flat, single = self._balance("centroidal_momentum_matrix", q)
        A = flat[:, 4:].reshape(len(flat), 6, -1)
        if self.model.root.nq:
            R = self._root_pose(q)[0]
            A = np.concatenate([R @ A[:, :3], R @ A[:, 3:]], axis=1)
        return A[0] if single else A

    def total_mass(self) -> float:
        """Mass of the links that move (every link of a floating robot): ``M`` of :meth:`center_of_mass`."""
        return self._moving_mass("center_of_mass")

    def _moving_mass(self, name):
        """The mass of the moving links, found once, after balance program ``name`` found its values
        (every mass is one of them: a missing one gets that program's error, which names it)."""
        self._program_values((name,))
        if "_total_mass" not in self.__dict__:
            numbers = {sympy.Symbol(key): value for key, value in self._given.items()}
            robot = moving_links(self.model.robot)
            self._total_mass = sum(float(sympy.sympify(robot.dynamics[label]["M"]).xreplace(numbers)) for label in robot.links)
        return self._total_mass

    def _balance(self, name, q):
        """``(q, outputs, single)``: ``q`` checked and balance program ``name``'s outputs (MG, PG, matrix)
        on its joints' part, the mass checked first (the programs divide by it)."""
        mass = self._moving_mass(name)
        if not mass > 0:
            raise KaneRobotError(
                f"robot {self.model.robot.name}: the links that move have a total mass of {mass:g}: the centre of "
                f"mass and the centroidal momentum need a positive mass (give the links their masses)"
            )
        q, single = self._configuration(q)
        return q, self._frame_outputs((name,), q[:, self.model.root.nq :])[0], single

    def _speeds(self, qd):
        return self._velocity(qd)

    # ------------------------------------------------------- floating base
    def _refused(self):
        """The methods of :data:`PROTOCOL` this model's root joint cannot give: a fixed base's ``base_acceleration``."""
        return set() if self.model.root.nv else {"base_acceleration"}

    def base_acceleration(self, q, qd, qdd, wrench=None):
        """Free-floating inverse dynamics: the base moves freely (``F_0 = 0``).

        Parameters
        ----------
        q : array_like, shape (nq,) or (N, nq)
        qd : array_like, shape (nv,) or (N, nv)
        qdd : array_like, shape (n,) or (N, n)
            The joint accelerations only.
        wrench : dict, optional
            As in :meth:`inverse_dynamics`.

        Returns
        -------
        acceleration : numpy.ndarray, shape (6,) or (N, 6)
            The derivative of the base speeds (``qdd[:6]`` of the state).
        torques : numpy.ndarray, shape (n,) or (N, n)
            The joint torques that give ``qdd``.

        Raises
        ------
        SingularityError
            When the composite inertia of the robot is singular at ``q``.
        KaneRobotError
            On a fixed base.
        """
        if not self.model.root.nv:
            return NumericProtocol.base_acceleration(self, q, qd, qdd, wrench)
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._joints(qdd, "qdd (joints)")
        states = self._base_states(q, qd)
        states["qdd"] = qdd
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        if self.model.has_program("base_acceleration"):
            out = self._evaluate("base_acceleration", states)
        else:
            out = self._solved_base_acceleration(states, qdd)
        if not np.all(np.isfinite(out)):
            raise SingularityError(
                f"robot {self.model.robot.name}: the composite inertia of the whole robot is singular (check the masses and inertias)"
            )
        nv = self.model.root.nv
        return self._result(out[:, :nv], single), self._result(out[:, nv:], single)

    def _solved_base_acceleration(self, states, qdd):
        """``[vdot_b; GAM]`` with the base free (``F_0 = 0``), from ``A`` and ``H``
        (Kane): ``A11 vdot_b = -(A12 qdd + H1)``, ``GAM = A21 vdot_b + A22 qdd + H2``."""
        A, H = self._mass_and_bias(states)
        b = self.model.root.nv
        qdd = np.broadcast_to(qdd, (len(H), self.n))
        rhs = -(np.einsum("nij,nj->ni", A[:, :b, b:], qdd) + H[:, :b])
        base = solve_dynamics(A[:, :b, :b], rhs, self.model.robot.name, "composite inertia")
        torques = np.einsum("nij,nj->ni", A[:, b:, :b], base) + np.einsum("nij,nj->ni", A[:, b:, b:], qdd) + H[:, b:]
        return np.concatenate([base, torques], axis=1)

    def momentum(self, q, qd):
        """Linear and angular momentum of a floating robot in the world frame.

        ``A(q)[:6] qd`` is the momentum in frame 0 about O_0 ``[L; K]``;
        in the world frame, ``[wR_0 L; wR_0 K + wx_0 x wR_0 L]`` (angular
        momentum about the world origin).  Without gravity, external wrenches
        and joint friction, both are constant along a motion.

        Returns
        -------
        numpy.ndarray, shape (6,) or (N, 6)
        """
        if not self.model.root.nv:
            self._unavailable("momentum", "it is that of a floating base (is_floating = 1); see centroidal_momentum")
        (q, single), (qd, _) = self._configuration(q), self._velocity(qd)
        A = self._evaluate("mass_matrix", self._base_states(q))
        local = np.einsum("nij,nj->ni", A[:, :6, :], qd)
        R, p = self._root_pose(q)
        L = np.einsum("nij,nj->ni", R, local[:, :3])
        K = np.einsum("nij,nj->ni", R, local[:, 3:]) + np.cross(p, L)
        return self._result(np.concatenate([L, K], axis=1), single)

    # -------------------------------------------------- as JAX functions
    def jax_function(self, name: str) -> Callable[..., Any]:
        """Model ``name`` as a pure JAX function of the state and the parameters, for ``jax.jit``, ``jax.vmap``, ``jax.grad``.

        ``f = fn.jax_function("inverse_dynamics")`` is ``f(q, qd, qdd, p=None,
        wrench=None)``: the arguments and results of the method of the same
        name (``jax.Array``, float64), ``p`` the parameters in the order of
        ``fn.model.parameters`` (None: these functions' values), so that
        ``jax.vmap(f, in_axes=(None, None, None, 0))`` runs a batch of
        parameter vectors.  Names: those of
        :data:`~kanerobot.dynamics.jax_model.JAX_FUNCTIONS`, the dynamic
        models and their derivatives (whatever ``backend`` these functions
        run on: JAX is needed, ``pip install 'kanerobot[jax]'``).  See
        :func:`kanerobot.dynamics.jax_model.jax_function`.

        Examples
        --------
        >>> import jax, numpy as np, kanerobot as kr
        >>> from kanerobot.dynamics.parameters import random_parameters
        >>> robot = kr.load(kr.frames_path("planar2"))
        >>> fn = kr.derive(robot).numeric(random_parameters(robot, np.random.default_rng(0)), backend="jax")
        >>> tau = fn.jax_function("inverse_dynamics")
        >>> q, qd, qdd = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.zeros(2)
        >>> bool(np.allclose(tau(q, qd, qdd), fn.inverse_dynamics(q, qd, qdd)))
        True
        >>> dtau_dq = jax.jacfwd(tau)(q, qd, qdd)  # autodiff: the derivative program's dtau/dq
        >>> bool(np.allclose(dtau_dq, fn.inverse_dynamics_derivatives(q, qd, qdd)[0]))
        True
        >>> P = np.stack([fn.parameter_vector * s for s in (1.0, 2.0)])  # two parameter vectors
        >>> jax.vmap(tau, in_axes=(None, None, None, 0))(q, qd, qdd, P).shape
        (2, 2)
        """
        from kanerobot.dynamics.jax_model import jax_function

        return jax_function(self, name)

    # ----------------------------------------------------- the derivatives
    def inverse_dynamics_derivatives(self, q, qd, qdd, wrench=None):
        """``(dtau/dq, dtau/dqd)`` at ``(q, qd, qdd)``: two (nv, nv), or (N, nv, nv), arrays.

        Evaluates the program of
        :func:`~kanerobot.dynamics.derivatives.inverse_dynamics_derivatives`
        (forward mode over the inverse dynamic model; pinocchio's
        ``computeRNEADerivatives``).  Coulomb friction contributes 0 (its
        derivative away from ``qd = 0``); ``wrench`` as in
        :meth:`inverse_dynamics` (held constant).  For a floating base,
        column ``k`` of ``dtau/dq`` is the derivative along ``q (+) e_k``
        (the base moved by ``exp`` of a twist in frame 0), so the three
        translation columns are zero; ``dtau/dqd`` is with respect to the
        speeds of the state.
        """
        if wrench is None:
            fast = self._fast.get("inverse_dynamics_derivatives") or self._fast_function("inverse_dynamics_derivatives")
            result = fast(q, qd, qdd, None, self.check)
            if result is not None:
                return derivatives.split(result[np.newaxis], self.nv, True)
        (q, single), (qd, _), (qdd, _) = self._configuration(q), self._velocity(qd), self._velocity(qdd, "qdd")
        states = self._base_states(q, qd, qdd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(qdd))))
        return self._derivatives("inverse_dynamics_derivatives", states, single)

    def direct_dynamics_derivatives(self, q, qd, tau, wrench=None):
        """``(dqdd/dq, dqdd/dqd, dqdd/dtau)`` at ``(q, qd, tau)``: (nv, nv), (nv, nv) and (nv, n) arrays (or batches).

        Evaluates the program of
        :func:`~kanerobot.dynamics.derivatives.direct_dynamics_derivatives`
        (pinocchio's ``computeABADerivatives``; a floating base is not
        actuated: ``dqdd/dtau`` is its ``Minv`` without the six base
        columns); with an engine that has no direct-dynamics program
        (Lagrange, Kane), ``dqdd/dx = -A^-1 dtau/dx`` at ``qdd =
        direct_dynamics(q, qd, tau)`` and ``dqdd/dtau = A^-1``, solved
        numerically.  ``wrench`` as in :meth:`inverse_dynamics`.

        Raises
        ------
        SingularityError
            When a derivative is not finite: the articulated inertia of the robot is singular at ``q``.
        """
        if wrench is None and self.model.has_program("direct_dynamics_derivatives"):
            fast = self._fast.get("direct_dynamics_derivatives") or self._fast_function("direct_dynamics_derivatives")
            result = fast(q, qd, tau, None, self.check)
            if result is not None:
                return derivatives.split(result[np.newaxis], self.nv, True)
        (q, single), (qd, _), (tau, _) = self._configuration(q), self._velocity(qd), self._joints(tau, "tau")
        states = self._base_states(q, qd)
        states.update(self._wrench_states(wrench, max(len(q), len(qd), len(tau))))
        if self.model.has_program("direct_dynamics_derivatives"):
            states["tau"] = tau
            return self._finite(self._derivatives("direct_dynamics_derivatives", states, single))
        A, _ = self._mass_and_bias(states)
        qdd = self._solved_direct_dynamics(states, tau)
        states.update(self._base_states(q, qd, qdd))
        return self._finite(self._solved_derivatives(A, states, single))

    def _derivatives(self, name, states, single):
        """Derivative model ``name`` on ``states``, split into its blocks."""
        out = self._evaluate(name, states)
        out = out.reshape(out.shape[0], self.nv, -1)
        return derivatives.split(out, self.nv, single)

    def _solved_derivatives(self, A, states, single):
        """``(-A^-1 dtau/dq, -A^-1 dtau/dqd, A^-1 S^T)`` at the accelerations
        ``states["qdd"]``, ``S`` selecting the actuated speeds (the last n)."""
        dtau = self._evaluate("inverse_dynamics_derivatives", states)
        nv = self.nv
        dtau = dtau.reshape(dtau.shape[0], nv, -1)
        solved = np.linalg.solve(A, np.concatenate([-dtau, np.broadcast_to(np.eye(nv)[:, nv - self.n:], A.shape[:1] + (nv, self.n))], axis=2))
        return derivatives.split(solved, nv, single)


def _cross_matrices(p):
    """``[p]x`` of each row of ``p`` (N, 3): (N, 3, 3), ``[p]x b = p x b``."""
    S = np.zeros(p.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -p[..., 2], p[..., 1], -p[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = p[..., 2], -p[..., 1], p[..., 0]
    return S


def matrix_grid(program, n, name, symmetric):
    """Where the outputs of a matrix model go in its (n, n) result.

    Parameters
    ----------
    program : Program
        The model's program; its outputs are named ``<prefix><i><j>``
        (:func:`name_prefix`).
    n : int
        Size of the matrix.
    name : str
        The model's name (``"mass_matrix"``, ``"coriolis_matrix"`` ...).
    symmetric : bool
        Whether an entry missing from the program is the mirror of a present one.

    Returns
    -------
    list of list
        Output name at each place, as :meth:`NumericDynamics._matrix` fills it
        and the C backend lays it out: ``None`` for an entry mirrored from the
        other triangle, ``0`` for an absent (zero) entry.
    """
    names = matrix_entry_names(name_prefix(name), (n, n))
    position = {names[i][j]: (i, j) for i in range(n) for j in range(n)}
    grid: list[list[str | int | None]] = [[0] * n for _ in range(n)]
    placed = set()
    for output in program.outputs:
        i, j = position[output]
        grid[i][j] = output
        placed.add((i, j))
    if symmetric:
        for i, j in list(placed):
            if (j, i) not in placed:
                grid[j][i] = None
    return grid


def name_prefix(model_name):
    """Prefix of the matrix entries a model's outputs are named with."""
    return {"mass_matrix": "A", "coriolis_matrix": "C"}[model_name]


def parameters_without_state(robot, symbols):
    """Names of ``symbols`` in the robot's order (:meth:`~kanerobot.robot.description.Robot.parameter_order`),
    refusing any joint variable of ``robot``.

    The last guard of the invariant that :func:`~kanerobot.dynamics.model.derive` checks on the robot:
    a model never asks for a coordinate as if it were a parameter (the
    numeric functions would then ignore the state they are given).

    Examples
    --------
    >>> import sympy, kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> parameters_without_state(arm, {sympy.Symbol("L1"), sympy.Symbol("th2")})
    Traceback (most recent call last):
      ...
    kanerobot.errors.KaneRobotError: planar2: the models would list the joint variables th2 among their parameters; please report this as a bug of kanerobot
    """
    names = robot.parameter_order(str(s) for s in symbols)
    joints = sorted(set(names) & {str(s) for s in robot.q})
    if joints:
        raise KaneRobotError(
            f"{robot.name}: the models would list the joint variables {', '.join(joints)} among their "
            f"parameters; please report this as a bug of kanerobot"
        )
    return names
