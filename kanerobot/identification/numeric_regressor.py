"""Numeric regressors of the identification models, for one robot with bound geometry.

The dynamic model is linear in the standard dynamic parameters ``K`` (per
link ``XX XY XZ YY YZ ZZ MX MY MZ M IA FV FS``, SYMORO+ section 6):

    Gamma = D(q, qd, qdd) K                          dynamic model (39)
    Gamma = d/dt (D1(q, qd) K) + D2(q, qd) K         Lagrange form (41)-(43)
    H = T + U = h(q, qd) K                           total energy (48)

:class:`Regressors` evaluates them on batches of states:

- ``D`` by the regressor program of
  :func:`kanerobot.identification.regressor.identification_model` (the
  forward recursion shared by every column); its columns, the standard
  parameters of that model, are the columns of ``D1``, ``D2`` and ``h`` too;
- ``D1``, ``D2`` and ``h`` by the unit-parameter rule of SYMORO+ 6.1 on the
  numeric dynamic model (column j: the model with ``K_j = 1`` and every
  other dynamic parameter 0):
  ``D1 K = dT/dqd = A(q) qd`` from the inertia matrix;
  ``D2 K = -dT/dq + dU/dq + friction = Q + FV qd + FS sign(qd) - C^T qd``
  (``C`` the Christoffel Coriolis matrix: ``dT/dq = C^T qd``), computed as
  ``Gamma(q, qd, 0) - (C + C^T) qd``;
  ``h``: ``1/2 qd^T A qd`` plus the potential of gravity of eq. (52),
  ``h_Mj = -g.P_j``, ``h_MXj = -g.s_j``, ``h_MYj = -g.n_j``,
  ``h_MZj = -g.a_j`` by forward kinematics; friction parameters have 0
  there (friction is not energy; :mod:`.energy_model` integrates its power).

The base parameters come from
:func:`kanerobot.identification.base_parameters.base_parameter_set` (numeric
method, the geometry and gravity bound): :meth:`Regressors.base_columns`
puts them on the regressor's columns, matching the standard parameters by name.
"""

from collections import namedtuple
from typing import Any

import numpy as np
import sympy

from kanerobot.dynamics.model import DynamicModel, derive
from kanerobot.errors import KaneRobotError, ParameterError
from kanerobot.identification.base_parameters import base_parameter_set
from kanerobot.identification.regressor import STANDARD_NAMES, IdentificationModel, identification_model
from kanerobot.robot.description import BASE, Robot

__all__ = ["BaseColumns", "Regressors"]

#: The base parameters on a regressor's columns (:meth:`Regressors.base_columns`):
#: ``names`` (nb), ``columns`` (nb indices of :attr:`Regressors.parameters`, ``D_b = D[..., columns]``)
#: and ``T`` (nb, p), ``K_b = T K`` with K in the order of :attr:`Regressors.parameters`.
BaseColumns = namedtuple("BaseColumns", ["names", "columns", "T"])


def _standard_owners(robot):
    """``{parameter name: (link label, kind)}`` of the standard parameters given as
    symbols in ``robot.dynamics`` (kind in ``STANDARD_NAMES``; a symbol used twice
    belongs to its first occurrence, link by link)."""
    owners: dict[str, tuple[str, str]] = {}
    for label in robot.links:
        for kind in STANDARD_NAMES:
            expr = robot.dynamics[label][kind]
            if isinstance(expr, sympy.Symbol):
                owners.setdefault(str(expr), (label, kind))
    return owners


def _as_batch(x, n, what):
    array = np.asarray(x, dtype=float)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != n:
        raise KaneRobotError(f"{what} must have shape ({n},) or (N, {n}), got {np.shape(x)}")
    return array


class Regressors:
    """Regressors ``D``, ``D1``, ``D2`` and ``h`` of a robot with bound geometry.

    Parameters
    ----------
    model : Robot, DynamicModel or IdentificationModel
        The robot (fixed-base serial or tree), its dynamic model
        (:func:`kanerobot.derive`), or its identification model
        (:func:`kanerobot.identification.regressor.identification_model`,
        whose ``friction`` and ``rotor`` options are then used).
    values : mapping
        ``{name: float}`` for the geometric and gravity symbols the model
        needs (``L1``, ``D3``, ``G3`` ...); values of dynamic parameters
        in it are ignored.
    friction, rotor : bool, optional
        Columns for ``FV, FS`` and ``IA`` (for a Robot or a DynamicModel).
    backend : {"auto", "c", "numpy"}, optional
        Of the numeric dynamic models behind ``D1``, ``D2`` and ``h``.

    Attributes
    ----------
    identification : IdentificationModel
        Gives ``D``.
    parameters : list of str
        The standard parameters, columns of every regressor: those of
        :attr:`identification`.
    owners : list of (str, str)
        ``(link label, kind)`` of each parameter, kind in ``XX .. FS``.
    values : dict
        The geometric and gravity values the dynamic model needs.
    n : int
        Number of joints.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> reg = Regressors(kr.load(kr.frames_path("planar2")), {"L1": 1.0, "G3": -9.81}, backend="numpy")
    >>> D = reg.regressor([0.0, 0.0], [0.0, 0.0], [1.0, 0.0])
    >>> D.shape, float(D[0, 0, reg.parameters.index("ZZ1")])
    ((1, 2, 26), 1.0)
    """

    def __init__(self, model, values, friction=True, rotor=True, backend="auto"):
        identification = dynamic = None
        if isinstance(model, Robot):
            robot = model
        elif isinstance(model, DynamicModel):
            robot, dynamic = model.robot, model
        elif isinstance(model, IdentificationModel):
            robot, identification = model.robot, model
            friction, rotor = model.friction, model.rotor
        else:
            raise KaneRobotError(f"identification needs a Robot, a DynamicModel or an IdentificationModel, got {type(model).__name__}")
        if robot.loops or robot.floating or robot.wheeled:
            raise KaneRobotError(f"robot {robot.name}: numeric identification is for fixed-base serial and tree robots ({robot.structure} given)")
        self.robot = robot
        self.dynamic = dynamic if dynamic is not None else derive(robot)
        if type(self.dynamic) is not DynamicModel:
            raise KaneRobotError(f"robot {robot.name}: numeric identification needs rigid joints on a fixed base")
        self.friction, self.rotor = bool(friction), bool(rotor)
        self.identification = identification or identification_model(robot, friction=self.friction, rotor=self.rotor)
        self.parameters = list(self.identification.parameters)
        owners = _standard_owners(robot)
        unknown = [name for name in self.parameters if name not in owners]
        if unknown:
            raise KaneRobotError(f"robot {robot.name}: {', '.join(unknown)} are not standard parameters of its description")
        self.owners = [owners[name] for name in self.parameters]
        needed = [name for name in self.dynamic.parameters if name not in owners]
        values = {str(k): v for k, v in (values or {}).items()}
        missing = [name for name in needed if name not in values]
        if missing:
            raise ParameterError(f"robot {robot.name}: no value for {', '.join(missing)} (geometric and gravity symbols the model needs)")
        self.values = {name: float(values[name]) for name in needed}
        self._extra = {k: float(v) for k, v in values.items() if k not in owners and k not in self.values}
        self.n = len(robot.joint_labels)
        self.backend = backend
        self._numeric = self.identification.numeric(self.bound_values)
        self._zero = dict(self.values, **{name: 0.0 for name in self.dynamic.parameters if name in owners})
        self._units = self._zero_fn = None
        self._base = None
        self._kinematics = None

    @property
    def bound_values(self):
        """Every non-dynamic value given: the geometry and gravity (``{name: float}``)."""
        return dict(self._extra, **self.values)

    def _unit_models(self):
        """``(units, zero)``: per parameter the numeric dynamic model with that
        parameter 1 and the other dynamic parameters 0 (None when the dynamic
        model does not have it), and the one with all 0; built once.  A unit
        parameter is no body (MX = 1 with M = 0): ``physical=False``."""
        if self._units is None:
            self._units = [
                self.dynamic.numeric(dict(self._zero, **{name: 1.0}), backend=self.backend, physical=False)
                if name in self.dynamic.parameters else None
                for name in self.parameters
            ]
            self._zero_fn = self.dynamic.numeric(self._zero, backend=self.backend, physical=False)
        return self._units, self._zero_fn

    # ------------------------------------------------------------ base parameters
    def base_parameter_set(self):
        """The base parameters of the robot with :attr:`bound_values`:
        :func:`~kanerobot.identification.base_parameters.base_parameter_set`,
        ``method="numeric"``, with this regressor's ``friction`` and
        ``rotor``; computed once.

        Returns
        -------
        BaseParameterSet
        """
        if self._base is None:
            self._base = base_parameter_set(self.robot, method="numeric", values=self.bound_values, friction=self.friction,
                                            rotor=self.rotor)  # fmt: skip
        return self._base

    def base_columns(self, base=None):
        """A base parameter set on this regressor's columns.

        Parameters
        ----------
        base : BaseParameterSet, optional
            Default :meth:`base_parameter_set`; one computed with the same
            ``friction`` and ``rotor`` (the same standard parameters).

        Returns
        -------
        BaseColumns
            ``(names, columns, T)``: ``D @ K == D[..., columns] @ (T @ K)``,
            ``T = base.matrix(values)`` (values: :attr:`bound_values`).

        Raises
        ------
        KaneRobotError
            When ``base`` has other standard parameters than this regressor.

        Examples
        --------
        >>> import kanerobot as kr
        >>> reg = Regressors(kr.load(kr.frames_path("planar2")), {"L1": 0.5, "G3": -9.81}, rotor=False, backend="numpy")
        >>> b = reg.base_columns()
        >>> b.names, [reg.parameters[c] for c in b.columns]
        (['ZZR1', 'ZZ2', 'MX2', 'MY2', 'FV1', 'FS1', 'FV2', 'FS2'], ['ZZ1', 'ZZ2', 'MX2', 'MY2', 'FV1', 'FS1', 'FV2', 'FS2'])
        """
        base = self.base_parameter_set() if base is None else base
        theirs = [str(name) for name in base.parameters]
        if theirs != self.parameters:
            differ = sorted(set(theirs) ^ set(self.parameters)) or ["their order"]
            raise KaneRobotError(
                f"robot {self.robot.name}: the base parameter set and the regressor differ in {', '.join(differ)}: "
                f"compute it with friction={self.friction}, rotor={self.rotor}"
            )
        return BaseColumns(list(base.names), list(base.columns), base.matrix(self.bound_values))

    # ------------------------------------------------------------ regressors
    def regressor(self, q, qd, qdd):
        """The dynamic identification model ``D(q, qd, qdd)``, eq. (39).

        Parameters
        ----------
        q, qd, qdd : array_like, shape (n,) or (N, n)

        Returns
        -------
        numpy.ndarray, shape (N, n, p)
            ``Gamma = D @ K`` for the standard parameters ``K`` in the order
            of :attr:`parameters`.
        """
        q, qd, qdd = (_as_batch(x, self.n, w) for x, w in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
        return np.asarray(self._numeric.regressor(q, qd, qdd), dtype=float).reshape(len(q), self.n, len(self.parameters))

    def lagrangian(self, q, qd):
        """``D1(q, qd)`` and ``D2(q, qd)`` of the Lagrange form (41)-(43).

        Returns
        -------
        D1, D2 : numpy.ndarray, shape (N, n, p)
            ``D1 K = A(q) qd`` (momentum, dE/dqd) and ``D2 K = -dE/dq +
            dU/dq`` plus friction ``FV qd + FS sign(qd)``, so that
            ``Gamma = d/dt(D1 K) + D2 K``.
        """
        q, qd = _as_batch(q, self.n, "q"), _as_batch(qd, self.n, "qd")
        N, p = len(q), len(self.parameters)
        D1, D2 = np.zeros((N, self.n, p)), np.zeros((N, self.n, p))
        zeros = np.zeros_like(q)
        units, zero = self._unit_models()
        A0, C0, H0 = zero.mass_matrix(q), zero.coriolis_matrix(q, qd), zero.inverse_dynamics(q, qd, zeros)
        for k, fn in enumerate(units):
            if fn is None:
                continue
            A = fn.mass_matrix(q) - A0
            C = fn.coriolis_matrix(q, qd) - C0
            D1[:, :, k] = np.einsum("nij,nj->ni", A, qd)
            H = fn.inverse_dynamics(q, qd, zeros) - H0
            D2[:, :, k] = H - np.einsum("nij,nj->ni", C + np.swapaxes(C, 1, 2), qd)
        return D1, D2

    def energy(self, q, qd):
        """The energy regressor ``h(q, qd)`` of eq. (48): ``T + U = h K``.

        Returns
        -------
        numpy.ndarray, shape (N, p)
            Kinetic energy ``1/2 qd^T A_j qd`` (rotor inertias ``1/2 IA qd^2``
            included) plus the potential of gravity of eq. (52); 0 for the
            friction parameters.
        """
        q, qd = _as_batch(q, self.n, "q"), _as_batch(qd, self.n, "qd")
        N = len(q)
        h = np.zeros((N, len(self.parameters)))
        units, zero = self._unit_models()
        A0 = zero.mass_matrix(q)
        for k, fn in enumerate(units):
            if fn is not None:
                A = fn.mass_matrix(q) - A0
                h[:, k] = 0.5 * np.einsum("ni,nij,nj->n", qd, A, qd)
        R, P, g = self._placements(q)
        for k, (label, kind) in enumerate(self.owners):
            if kind == "M":
                h[:, k] -= P[label] @ g
            elif kind in ("MX", "MY", "MZ"):
                h[:, k] -= R[label][:, :, "XYZ".index(kind[1])] @ g
        return h

    # ------------------------------------------------------------ geometry
    def _placements(self, q):
        """``({label: (N, 3, 3) 0R_j}, {label: (N, 3) 0P_j}, g)`` by forward kinematics."""
        if self._kinematics is None:
            symbols = {sympy.Symbol(k): sympy.Float(v) for k, v in self.bound_values.items()}

            def number(expr):
                value = sympy.sympify(sympy.sympify(expr).xreplace(symbols))
                value = value.xreplace({s: 0 for s in value.free_symbols})
                return float(value)

            index = {label: k for k, label in enumerate(self.robot.joint_labels)}
            # (label, antecedent, joint column or None, T as a function of q or the fixed 3x4 array)
            frames: list[tuple[str, str, int | None, Any]] = []
            for frame in self.robot.frames:
                T = sympy.Matrix(frame.transform())[:3, :].xreplace(symbols)
                if frame.is_joint:
                    x = frame.q
                    T = T.xreplace({s: 0 for s in T.free_symbols if s != x})
                    frames.append((frame.label, frame.antecedent, index[frame.label], sympy.lambdify([x], list(T), modules="numpy")))
                else:
                    frames.append((frame.label, frame.antecedent, None, np.array([number(e) for e in T]).reshape(3, 4)))
            gravity = np.array([number(e) for e in self.robot.base.G])
            self._kinematics = frames, gravity
        frames, gravity = self._kinematics

        N = len(q)
        R, P = {BASE: np.broadcast_to(np.eye(3), (N, 3, 3))}, {BASE: np.zeros((N, 3))}
        for label, antecedent, column, f in frames:
            if column is None:
                local = np.broadcast_to(f, (N, 3, 4))
            else:
                entries = f(q[:, column])
                local = np.stack([np.broadcast_to(np.asarray(e, dtype=float), (N,)) for e in entries], axis=1).reshape(N, 3, 4)
            R[label] = R[antecedent] @ local[:, :, :3]
            P[label] = P[antecedent] + np.einsum("nij,nj->ni", R[antecedent], local[:, :, 3])
        return R, P, gravity
