"""Programs of the numeric kinematics: a frame's pose and Jacobian.

:meth:`~kanerobot.dynamics.dynamic_model.NumericDynamics.pose` and
:meth:`~kanerobot.dynamics.dynamic_model.NumericDynamics.jacobian` run the
programs built here through the same machinery as the dynamic models (numpy
source, or C compiled on first use), for one configuration or a batch.

Pose
    ``0T_n`` is the fast geometric model of
    :func:`kanerobot.geometry.fast_geometric_model` (the product of the
    frames' ``a(k)T_k`` along the path, each partial product named).
Jacobian
    ``0J_n`` column by column (SYMORO+ eq. 5 with i = j = 0): for a joint f
    on the path, with ``0a_f = 0A_f a_f`` its axis in the base frame,
    ``[sigma_f 0a_f + sigmabar_f 0a_f x (0P_n - 0P_f); sigmabar_f 0a_f]``;
    zero for the joints that do not move ``n``.  Projected into frame r by
    ``[rA_0 0; 0 rA_0]`` with ``rA_0 = (0A_r)^T`` when r is not the base.
    Linear rows first, as :func:`kanerobot.kinematics.jacobian`, which gives
    the same matrix symbolically.

Centre of mass, its Jacobian, centroidal momentum matrix
    The programs of :mod:`~kanerobot.dynamics.centroidal` (composite
    links carried to the centre of mass), in the axes of frame 0.

The programs read the joint vector ``robot.q`` (each joint's ``nq``
entries, in the order of ``robot.joint_labels``; a Jacobian has a column
per speed) and give frames relative to frame 0: serial and
tree robots with a fixed base (flexible joints are served, their link side
is the configuration), and floating robots, whose numeric functions
(:class:`~kanerobot.dynamics.dynamic_model.NumericDynamics` on a free flyer) compose them
with the base pose and speeds.  Closed loops and a wheeled base get one
:class:`KaneRobotError` saying so: their numeric functions
(:class:`~kanerobot.dynamics.constrained.ConstrainedDynamics`) run the
programs of their tree (the loops opened, the wheels free), at every joint
variable, and multiply the Jacobian by ``G = dq/dq_a``.  Flexible joints'
(:class:`~kanerobot.dynamics.flexible.NumericFlexible`) run those of the
tree of links and rotors, at ``z = (q, q_r)``.
"""

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy

from kanerobot.dynamics import centroidal
from kanerobot.dynamics.common import BasePlacements, program_inputs
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.geometry import fast_geometric_model
from kanerobot.robot.description import BASE
from kanerobot.symbolic.program import Program

__all__ = ["PROGRAMS", "FrameKinematics", "KinematicPrograms", "jacobian_program", "pose_program"]


def _program(robot, what):
    """An empty program whose inputs are q and the geometric parameters (their names protected).

    ``trig``: the products of the chain name compound angles (``C23 = C2*C3 - S2*S3``)
    where that saves operations (6 of the RX-90's 56 multiplications of 0T_6).
    """
    kind = "closed loops" if robot.loops else "a wheeled mobile base" if robot.wheeled else None
    if kind:
        raise KaneRobotError(
            f"{what} of {robot.name}: the numeric kinematics serve serial and tree robots, and "
            f"{robot.name} has {kind}; kanerobot.geometry.transform and kanerobot.kinematics.jacobian give its "
            f"frames' transforms and Jacobians (relative to frame 0) symbolically, and the numeric functions of "
            f"kr.derive({robot.name}) (fn.pose, fn.jacobian) numerically, through its tree"
        )
    return Program(inputs=program_inputs(robot, [robot.q], names=()), trig=True)


def _frame_label(robot, frame, what):
    """``frame`` as a label of ``robot`` (the base included), or one clear error."""
    label = str(frame)
    if label != BASE and label not in robot.labels:
        raise KaneRobotError(
            f"{what}: robot {robot.name} has no frame {label!r}; frames are {BASE}, {', '.join(robot.labels)}"
        )
    return label


def pose_program(robot, frame):
    """The program of 0T_frame: outputs ``T11 .. T34``, the upper three rows.

    Parameters
    ----------
    robot : Robot
        A serial or tree robot (a floating one: relative to frame 0).
    frame : str
        Label of the frame (``'0'``, the base, gives the identity).

    Returns
    -------
    Program
        :func:`kanerobot.geometry.fast_geometric_model` from the base to
        ``frame`` (SYMORO's fast geometric model: outputs ``T0T<frame>_11 ..
        _34``, row by row), after the structure and the frame are checked.
        Inputs q (``robot.q``) and the geometric parameters.

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> list(pose_program(arm, "2").outputs)[:4]
    ['T0T2_11', 'T0T2_12', 'T0T2_13', 'T0T2_14']
    """
    label = _frame_label(robot, frame, "pose")
    _program(robot, f"the pose of frame {label}")  # the structure's check
    return fast_geometric_model(robot, BASE, label)


def jacobian_program(robot, frame, projection=BASE):
    """The program of rJ_n, n = ``frame``, r = ``projection``: outputs ``J{row}_{joint}``.

    Parameters
    ----------
    robot : Robot
        A serial or tree robot (a floating one: relative to frame 0).
    frame : str
        n: the Jacobian maps the joint rates to the twist ``[V; w]`` of its origin.
    projection : str, optional
        r: the frame the twist is projected into, default the base.

    Returns
    -------
    Program
        Outputs row by row (6 rows, linear first, then one column per speed
        of the joints of ``robot.joint_labels``: a column of the joint's motion
        subspace ``S_f`` in frame 0), named ``J{row}_{column}`` (1-based).

    Examples
    --------
    >>> import kanerobot as kr
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> program = jacobian_program(arm, "2")
    >>> [(name, expr) for name, expr in program.outputs.items() if expr != 0]
    [('J1_1', -TP2_2), ('J2_1', TP1_2), ('J6_1', 1), ('J6_2', 1)]
    """
    stem = robot.stems
    n = _frame_label(robot, frame, "jacobian")
    r = _frame_label(robot, projection, "jacobian projection")
    program = _program(robot, f"the Jacobian of frame {n}")
    chain = BasePlacements(robot, program)
    _, P_n = chain(n)
    columns = []
    moving = set(robot.root_path(n)) if n != BASE else set()
    for label in robot.joint_labels:
        frame_f = robot.frame(label)
        if label not in moving:
            columns += [sympy.zeros(6, 1)] * frame_f.joint.nv
            continue
        A_f, P_f = chain(label)
        S, L = frame_f.motion_subspace(), None
        for k in range(S.cols):  # one column per speed of the joint
            linear, angular = A_f * sympy.Matrix(S[:3, k]), A_f * sympy.Matrix(S[3:, k])
            if any(e != 0 for e in angular):
                # the lever arm O_f -> O_n, named once: its three differences are read by the cross product
                L = L if L is not None else program.assign_matrix(f"L{{i}}_{stem[label]}", P_n - P_f)
                linear = linear + angular.cross(L)
            columns.append(linear.col_join(angular))
    J = sympy.Matrix.hstack(*columns) if columns else sympy.zeros(6, 0)
    if r != BASE:
        A_r, _ = chain(r)
        J = sympy.diag(A_r.T, A_r.T) * J
    for i in range(6):
        for j in range(J.cols):
            program.set_output(f"J{i + 1}_{j + 1}", J[i, j])
    program.prune()
    return program


#: The programs :class:`KinematicPrograms` keeps, by the first entry of a key:
#: ``(what it computes, build(robot, *key[1:]))``.
PROGRAMS: dict[str, tuple[str, Callable[..., Program]]] = {
    "pose": ("the pose of frame {}", pose_program),
    "jacobian": ("the Jacobian of frame {}", jacobian_program),
    "center_of_mass": ("the centre of mass", lambda robot: centroidal.center_of_mass(robot, jacobian=False)),
    "center_of_mass_jacobian": ("the Jacobian of the centre of mass", centroidal.center_of_mass),
    "centroidal_momentum_matrix": ("the centroidal momentum matrix", centroidal.centroidal_momentum_matrix),
}


def _c_name(text):
    """``text`` as part of a C identifier."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


class KinematicPrograms:
    """The pose and Jacobian programs of one robot, derived once per (frame, projection) and kept.

    Parameters
    ----------
    robot : Robot
    c_prefix : str, optional
        Prefix of the compiled C functions' names.
    """

    def __init__(self, robot, c_prefix="kr_"):
        self.robot = robot
        self.c_prefix = c_prefix
        self._programs = {}
        self._parameters = {}
        self._compiled = {}

    def program(self, key):
        """The program of ``("pose", frame)``, ``("jacobian", frame, projection)`` or a
        balance quantity's (``("centroidal_momentum_matrix",)``...: :data:`PROGRAMS`)."""
        if key not in self._programs:
            self._programs[key] = PROGRAMS[key[0]][1](self.robot, *key[1:])
        return self._programs[key]

    def parameters(self, key):
        """Sorted symbols the program of ``key`` reads besides the joint variables (found once)."""
        if key not in self._parameters:
            used = self.program(key).used_inputs() - set(self.robot.joint_symbols)
            self._parameters[key] = self.robot.parameter_order(used)
        return self._parameters[key]

    def arguments(self, key):
        """The argument symbols of the program of ``key``: q, then its parameters."""
        q = [s if isinstance(s, sympy.Symbol) else sympy.Symbol(f"kr_unused_q_{k}") for k, s in enumerate(self.robot.q)]
        return q + self.parameters(key)

    def values(self, key, given):
        """The parameters of ``key`` as a list of floats from ``given`` ({name: float}).

        Raises
        ------
        ParameterError
            Naming the parameters ``given`` has no value for.
        """
        names = [str(s) for s in self.parameters(key)]
        missing = [name for name in names if name not in given]
        if missing:
            what = PROGRAMS[key[0]][0].format(*key[1:])
            raise ParameterError(
                f"robot {self.robot.name}: no value for {', '.join(missing)}, which {what} needs: "
                f"give {'it' if len(missing) == 1 else 'them'} in the values of numeric()"
            )
        return [given[name] for name in names]

    def numpy_function(self, key):
        """The program of ``key`` as a numpy function of q's entries then the parameters."""
        if ("numpy",) + key not in self._compiled:
            self._compiled[("numpy",) + key] = self.program(key).to_function(args=self.arguments(key))
        return self._compiled[("numpy",) + key]

    def compiled(self, key):
        """The program of ``key`` compiled to C: arguments ``q`` (per state) and ``p`` (constant).

        Raises
        ------
        kanerobot.codegen.compiled.CompileError
            No C compiler, or compilation failed.
        """
        if ("c",) + key not in self._compiled:
            from kanerobot.codegen.compiled import compile_program

            arguments = self.arguments(key)
            nq = len(self.robot.q)
            name = "_".join(_c_name(str(part)) for part in key)
            self._compiled[("c",) + key] = compile_program(
                self.program(key), f"{self.c_prefix}{name}", [("q", arguments[:nq]), ("p", arguments[nq:])],
                constant=("p",), doc=f"{' '.join(map(str, key))}, robot {self.robot.name}",
            )
        return self._compiled[("c",) + key]

    def casadi_function(self, key):
        """The program of ``key`` as a :class:`~kanerobot.codegen.casadi.CasadiFunction` of the
        arguments of :meth:`compiled` (``backend="casadi"``)."""
        if ("casadi",) + key not in self._compiled:
            from kanerobot.codegen.casadi import casadi_program

            arguments = self.arguments(key)
            nq = len(self.robot.q)
            name = "_".join(_c_name(str(part)) for part in key)
            self._compiled[("casadi",) + key] = casadi_program(
                self.program(key), f"{self.c_prefix}{name}", [("q", arguments[:nq]), ("p", arguments[nq:])],
                constant=("p",), doc=f"{' '.join(map(str, key))}, robot {self.robot.name}",
            )
        return self._compiled[("casadi",) + key]


class FrameKinematics:
    """The pose and Jacobian of a robot's frames for numeric functions (a mixin).

    The numeric class gives its configurations' robot and the C prefix of
    the programs (:meth:`_frame_robot`), its configurations as an (N, nq)
    array (:meth:`_frame_states`) and the values given (``_given``, {name:
    float}: the programs may read symbols no dynamic model needs), with the
    ``backend``, ``requested_backend`` and ``fallback_reason`` of its models:
    the programs run as its models do, C, CasADi or numpy, and fall back the same way.
    The programs are derived once per frame and kept on ``self.model``.
    """

    # set by the numeric class (see above)
    model: Any
    _given: dict[str, float]
    backend: str
    requested_backend: str
    fallback_reason: str | None

    def _frame_robot(self):
        """``(robot, c_prefix)``: the robot whose joint vector the configurations are."""
        return self.model.robot, self.model.c_prefix

    def _frame_states(self, q):
        """``q`` as an (N, nq) array and whether it was one configuration."""
        raise NotImplementedError

    def _frame_pose(self, frame, q):
        """0T_frame, (4, 4) or (N, 4, 4)."""
        flat, single = self._frame_outputs(("pose", str(frame)), q)
        T = np.zeros((flat.shape[0], 4, 4))
        T[:, :3, :] = flat.reshape(-1, 3, 4)
        T[:, 3, 3] = 1.0
        return T[0] if single else T

    def _frame_jacobian(self, frame, q, projection):
        """rJ_frame, (6, nv) or (N, 6, nv): one column per speed of the joints."""
        flat, single = self._frame_outputs(("jacobian", str(frame), str(projection)), q)
        J = flat.reshape(flat.shape[0], 6, len(self.model._kinematics.robot.qd))
        return J[0] if single else J

    def _program_values(self, key):
        """``(programs, parameter values)`` of kinematic program ``key``: derived and its values found once.

        Raises
        ------
        ParameterError
            Naming the parameters the program needs that the values left out.
        """
        model = self.model
        if "_kinematics" not in model.__dict__:  # kept on the model: every numeric() of it shares the programs
            model._kinematics = KinematicPrograms(*self._frame_robot())
        programs = model._kinematics
        bound = self.__dict__.setdefault("_kinematic_values", {})
        if key not in bound:  # derives the program: structure and frame checked before q
            bound[key] = np.array(programs.values(key, self._given), dtype=float)
        return programs, bound[key]

    def _frame_outputs(self, key, q):
        """The outputs of kinematic program ``key`` on ``q``, (N, m), and whether ``q`` was one state."""
        programs, parameters = self._program_values(key)
        q, single = self._frame_states(q)
        if self.backend == "casadi":
            return programs.casadi_function(key).batch(q.shape[0], [q, parameters]), single
        if self.backend == "jax":
            from kanerobot.dynamics.jax_model import frame_outputs

            return frame_outputs(programs, key, q, parameters), single
        if self.backend == "c":
            from kanerobot.codegen.backend import CodegenError
            from kanerobot.codegen.compiled import CompileError

            try:
                function = programs.compiled(key)
            except (CompileError, CodegenError) as exc:
                if self.requested_backend == "c":
                    raise
                self.backend, self.fallback_reason = "numpy", f"{' '.join(key)}: {exc}"
            else:
                return function.batch(q.shape[0], [q, parameters]), single
        out = programs.numpy_function(key)(*q.T, *parameters.tolist())
        out = np.asarray(np.broadcast_arrays(*out, np.zeros(q.shape[0])), dtype=float)[:-1]  # constants as columns
        return out.T, single
