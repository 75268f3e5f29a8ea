"""A dynamic model as a ``casadi.Function`` of one state, for optimisation.

:func:`model_function` wraps the SX graph of a model's program (built once
per model by :meth:`DynamicModel.casadi_function
<kanerobot.dynamics.dynamic_model.DynamicModel.casadi_function>`, one node
per assignment: :mod:`kanerobot.codegen.casadi`) in a function with the
inputs of the numeric functions (``model.numeric(values)``): ``q`` the whole
configuration (a floating base's position and quaternion first), ``qd`` and
``qdd`` the speeds and their derivatives, ``tau`` the joint torques; then,
when asked (``wrench=True``) and for the models whose numeric function takes
``wrench=``, one input per external wrench the robot describes
(``wrench_<link>``, the six ``FX .. CZ`` the link exerts on the
environment, in its frame; zero otherwise, as the numeric functions'
default); then ``p``, the parameters in the order of ``model.parameters``,
unless they are bound to numbers (folded into the graph: a product with 0
vanishes).

The root joint's state enters as the generated programs read it: a floating
base's position is unused, its quaternion (``x y z w``) must be a unit one
(the numeric functions normalise it first; an optimisation keeps it unit by
a constraint or by integrating on the manifold).

Outputs, named after the numeric functions' results:

======================================  =====================================================
model                                   outputs
======================================  =====================================================
inverse_dynamics                        ``tau`` (nv)
mass_matrix, coriolis_matrix            ``A``, ``C`` (nv, nv)
h, gravity                              ``H``, ``Q`` (nv)
direct_dynamics                         ``qdd`` (nv)
base_acceleration                       ``base_acceleration`` (6), ``tau`` (n); ``qdd`` holds the joints' n
inverse_dynamics_derivatives            ``dtau_dq``, ``dtau_dqd`` (nv, nv)
direct_dynamics_derivatives             ``dqdd_dq``, ``dqdd_dqd`` (nv, nv), ``dqdd_dtau`` (nv, n)
======================================  =====================================================

As for the numeric functions, the derivatives with respect to ``q`` are in
the tangent space (nv columns: a floating base's are along the twist of its
frame 0), Coulomb friction contributes 0 to them, and ``casadi.jacobian`` of
``tau`` with respect to ``q`` gives the same matrix on a fixed base.

Examples
--------
>>> import numpy as np, casadi, kanerobot as kr
>>> robot = kr.load(kr.frames_path("rx90"))
>>> model = kr.derive(robot)
>>> f = model.casadi("inverse_dynamics")
>>> q, qd, qdd, p = (casadi.SX.sym(name, f.size1_in(k)) for k, name in enumerate(f.name_in()))
>>> tau = f(q, qd, qdd, p)
>>> dtau_dq = casadi.jacobian(tau, q)   # CasADi's own derivative of the graph
>>> dtau_dq.shape
(6, 6)
"""

from typing import Any

import numpy as np

from kanerobot.dynamics.common import MODEL_INPUTS
from kanerobot.errors import KaneRobotError

__all__ = ["INPUTS", "OUTPUTS", "WRENCH_MODELS", "model_function"]

#: The inputs of each model's function (before the wrenches and ``p``), as its numeric function takes them.
INPUTS = MODEL_INPUTS
#: The names of each model's outputs (the blocks its numeric function returns).
OUTPUTS = {
    "inverse_dynamics": ("tau",),
    "mass_matrix": ("A",),
    "h": ("H",),
    "coriolis_matrix": ("C",),
    "gravity": ("Q",),
    "direct_dynamics": ("qdd",),
    "base_acceleration": ("base_acceleration", "tau"),
    "inverse_dynamics_derivatives": ("dtau_dq", "dtau_dqd"),
    "direct_dynamics_derivatives": ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"),
}
#: The models whose numeric function takes external wrenches (``wrench=``).
WRENCH_MODELS = frozenset(
    {"inverse_dynamics", "h", "direct_dynamics", "base_acceleration", "inverse_dynamics_derivatives", "direct_dynamics_derivatives"}
)


def model_function(model, name, parameters=None, wrench=False):
    """Model ``name`` of ``model`` as a ``casadi.Function`` of one state (see the module's notes).

    Parameters
    ----------
    model : DynamicModel
        Of a serial, tree or floating robot.
    name : str
        A model of :data:`INPUTS` that ``model`` has a program for, or
        ``direct_dynamics`` of an engine without one (Lagrange, Kane):
        ``A^-1 ([0; tau] - H)`` solved in the graph (``casadi.solve``).
    parameters : array_like, optional
        The values of ``model.parameters``, in that order, folded into the
        graph; None (the default): the last input, ``p``.
    wrench : bool, optional
        Whether the external wrenches the robot describes are inputs (zero
        when not, the default).

    Returns
    -------
    casadi.Function
        Inputs :data:`INPUTS` of ``name`` (columns: ``q`` (nq), ``qd`` (nv),
        ``qdd`` (nv, n for ``base_acceleration``), ``tau`` (n)), the
        wrenches (6 each) with ``wrench``, ``p``; outputs :data:`OUTPUTS`.

    Raises
    ------
    KaneRobotError
        For a model that is not one of :data:`INPUTS`, or that the engine
        solves numerically (Lagrange's and Kane's direct dynamics derivatives); for
        parameters of the wrong length; when CasADi is not installed.

    Examples
    --------
    >>> import numpy as np, kanerobot as kr
    >>> from kanerobot.dynamics.parameters import random_parameters
    >>> model = kr.derive(kr.load(kr.frames_path("satellite")))
    >>> f = model_function(model, "base_acceleration", wrench=True)
    >>> f.name_in(), [f.size1_in(k) for k in range(4)], f.name_out()
    (['q', 'qd', 'qdd', 'wrench_3', 'p'], [10, 9, 3, 6], ['base_acceleration', 'tau'])
    """
    if name not in INPUTS:
        raise KaneRobotError(f"model {name!r} has no casadi function: choose among {', '.join(INPUTS)}")
    solved = name == "direct_dynamics" and name in model.models and not model.has_program(name)
    if not solved:
        model.casadi_function(name)  # checks the model, builds the graph once
    import casadi

    sizes = {"q": model.nq, "qd": model.nv, "qdd": model.n if name == "base_acceleration" else model.nv, "tau": model.n}
    inputs = {key: casadi.SX.sym(key, sizes[key]) for key in INPUTS[name]}
    slices = model.group_slices()
    if name == "base_acceleration":  # qdd holds the joints only; the base's is the output
        slices = {key: value for key, value in slices.items() if value[0] != "qdd"} | {"qdd": ("qdd", slice(None))}
    groups, wrenches = [], {}
    for key, symbols in model._state_groups():
        if isinstance(key, tuple):  # ("wrench", link label)
            if wrench and name in WRENCH_MODELS:
                wrenches[f"wrench_{_identifier(key[1])}"] = group = casadi.SX.sym(f"wrench_{_identifier(key[1])}", 6)
            else:
                group = casadi.SX(6, 1)
        elif key in slices and slices[key][0] in inputs:
            argument, part = slices[key]
            group = inputs[argument][part]
        else:
            group = casadi.SX(len(symbols), 1)  # a state the model does not read: structural zeros
        groups.append(group)
    arguments = {**inputs, **wrenches}
    count = len(model.parameters)
    p: Any  # a symbol, or constants
    if parameters is None:
        arguments["p"] = p = casadi.SX.sym("p", count)
    else:
        values = np.asarray(parameters, dtype=float)
        if values.shape != (count,):
            raise KaneRobotError(f"robot {model.robot.name}: {count} parameter values are needed ({', '.join(model.parameters)}), got shape {values.shape}")
        p = casadi.DM(values)  # constants: the graph is folded around them
    if solved:  # A qdd = [0; tau] - H, solved in the graph (Lagrange, Kane: no recursive program)
        A, H = (model.casadi_function(program).function(*groups, p) for program in ("mass_matrix", "h"))
        out = casadi.solve(A, casadi.vertcat(casadi.SX(model.nv - model.n, 1), inputs["tau"]) - H)
    else:
        out = model.casadi_function(name).function(*groups, p)
    return casadi.Function(name, list(arguments.values()), _blocks(model, name, out), list(arguments), list(OUTPUTS[name]))


def _blocks(model, name, out):
    """The outputs of model ``name`` from its program's result ``out``: the derivatives' column
    blocks, the base acceleration's rows; the result itself otherwise."""
    nv = model.nv
    if name in ("inverse_dynamics_derivatives", "direct_dynamics_derivatives"):
        blocks = [out[:, :nv], out[:, nv:2 * nv]]
        return blocks + ([out[:, 2 * nv:]] if name == "direct_dynamics_derivatives" else [])
    if name == "base_acceleration":
        base = model.root.nv
        return [out[:base], out[base:]]
    return [out]


def _identifier(label):
    """A link label as part of an input name (letters, digits and ``_``)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in str(label))
