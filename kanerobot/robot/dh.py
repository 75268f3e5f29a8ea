"""Standard Denavit-Hartenberg tables with centre-of-mass inertias, as robots.

Robotics Toolbox models and data sheets give a serial arm as a standard-DH
table: link j carries frame j at its far end, placed in frame j-1 by ::

    T_j = Rz(theta_j) Tz(d_j) Tx(a_j) Rx(alpha_j)

(joint j turns about, or slides along, z_{j-1}), and its mass m_j, centre of
mass c_j and inertia I_j about the centre of mass, both in the axes of frame
j.  kanerobot's frame j sits at joint j instead, on the joint's axis
(Khalil-Kleinfinger's modified DH).  Regrouping the product around the
joints (Tx and Rx commute) gives, for every serial chain, ::

    alpha_j^KK = alpha_{j-1}    d_j^KK = a_{j-1}    theta_j^KK = theta_j    r_j^KK = d_j

with alpha_0 = a_0 = 0 (frame 0 is DH frame 0), the joint variable plus its
offset in theta_j (revolute) or r_j (prismatic), and DH frame j equal to
Khalil-Kleinfinger frame j moved by Tx(a_j) Rx(alpha_j).  The last link's
Tx(a_n) Rx(alpha_n), when not zero, becomes a fixed end frame.

Link j's inertial data are moved into Khalil-Kleinfinger frame j exactly,
with R = Rx(alpha_j) and p = (a_j, 0, 0): the centre of mass is
``c = p + R c_j``, the inertia about it ``R I_j R^T``, and SYMORO's
parameters are the inertia about the frame origin
``J = R I_j R^T + m (|c|^2 1 - c c^T)`` (XX XY XZ YY YZ ZZ) and the first
moments ``m c`` (MX MY MZ).  Values stay as written: integers and rationals
exact, floats as floats, names and expressions symbolic (write ``pi/2``, not
1.5708, for the sines and cosines to be exact zeros and ones); a number mixing
floats with an exact irrational (``sqrt(3)/2`` of a twist ``pi/3``) becomes
the float it is.

:func:`standard_dh_robot` builds the robot; ``.toml`` files with
``convention = "standard-dh"`` are read through it
(:mod:`kanerobot.robot.frames_toml`, docs/frames-format.md).

Examples
--------
A planar arm of two links of length L, each a point mass m at its far end:

>>> import sympy
>>> L, m = sympy.symbols("L m")
>>> arm = standard_dh_robot("planar2", [DHLink("1", a=L, mass=m, com=[0, 0, 0], inertia=[0, 0, 0]),
...                                     DHLink("2", a=L, mass=m, com=[0, 0, 0], inertia=[0, 0, 0])])
>>> [f.label for f in arm.frames], arm.frame("2").placement.d
(['1', '2', '3'], L)
>>> {k: v for k, v in arm.dynamics["1"].items() if k in ("MX", "YY", "ZZ", "M")}
{'YY': L**2*m, 'ZZ': L**2*m, 'MX': L*m, 'M': m}
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy
import sympy

from kanerobot.errors import DescriptionError
from kanerobot.robot import joints
from kanerobot.robot.description import (
    DYNAMIC_NAMES,
    INERTIAL_NAMES,
    JOINT_NAMES,
    Base,
    Frame,
    KKPlacement,
    Robot,
)
from kanerobot.robot.expressions import format_expression, parse_expression

__all__ = ["DHLink", "DH_DYNAMIC_NAMES", "inertia_about_origin", "standard_dh_robot"]

#: Dynamic parameters a DH link may give directly (rotor inertia, friction,
#: external wrench); its inertia comes from ``mass``, ``com`` and ``inertia``.
DH_DYNAMIC_NAMES = tuple(name for name in DYNAMIC_NAMES if name not in INERTIAL_NAMES or name == "IA")
#: SYMORO names of the parameters computed from mass, centre of mass and inertia.
_MOVED = {
    "XX": "inertia",
    "XY": "inertia",
    "XZ": "inertia",
    "YY": "inertia",
    "YZ": "inertia",
    "ZZ": "inertia",
    "MX": "com",
    "MY": "com",
    "MZ": "com",
    "M": "mass",
}
#: Relative size of a negative eigenvalue taken for rounding in the table, not a mistake.
_EIGEN_TOLERANCE = 1e-12


def _value(value, key, label):
    try:
        return parse_expression(value)
    except Exception as exc:  # ExpressionError, or sympy failing on odd input
        raise DescriptionError(f"{key} of joint {label}: {exc}", key=key, label=label) from None


def _flat(value):
    if isinstance(value, sympy.MatrixBase):
        return list(value)
    return [v for row in value for v in row] if value and isinstance(value[0], (list, tuple)) else list(value)


@dataclass(frozen=True)
class DHLink:
    """One row of a standard-DH table and the link it moves.

    Parameters
    ----------
    label : str
        Label of joint j and of its link (frame j).
    sigma : int
        0 revolute (theta is the joint variable), 1 prismatic (d is).
    theta, d : expression, optional
        The joint variable's entry (theta of a revolute joint, d of a
        prismatic one) is its symbol, possibly plus an offset; None names it
        ``q<label>``.  The other entry is a constant (None: 0).
    a, alpha : expression
        Link length and twist (0 by default).
    offset : expression
        Constant added to the joint variable: the DH angle (or length) is
        ``q + offset``.
    mass, com, inertia : optional
        Mass, centre of mass (3 values) and inertia about the centre of mass
        (3 x 3, or its 3 diagonal values), in the axes of DH frame j.  All
        three or none: none leaves SYMORO's symbols (``XX3``, ``MX3`` ...).
    dynamics : mapping, optional
        Other dynamic parameters by SYMORO name (:data:`DH_DYNAMIC_NAMES`:
        ``IA``, ``FV``, ``FS``, external wrench).
    """

    label: str
    sigma: int = joints.REVOLUTE
    theta: Any = None
    d: Any = None
    a: Any = 0
    alpha: Any = 0
    offset: Any = 0
    mass: Any = None
    com: Any = None
    inertia: Any = None
    dynamics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        label = str(self.label)
        object.__setattr__(self, "label", label)
        if isinstance(self.sigma, bool) or self.sigma not in (joints.REVOLUTE, joints.PRISMATIC):
            raise DescriptionError(
                f"sigma of joint {label} is {self.sigma!r}: a standard-DH row is a revolute (0) or prismatic (1) joint",
                key="sigma",
                label=label,
            )
        variable = self.variable_key
        for key in ("theta", "d"):
            value = getattr(self, key)
            if value is None:
                value = sympy.Symbol(f"q{label}") if key == variable else sympy.S.Zero
            object.__setattr__(self, key, _value(value, key, label))
        for key in ("a", "alpha", "offset"):
            object.__setattr__(self, key, _value(getattr(self, key), key, label))
        self._inertial(label)
        dynamics = {}
        for key, value in dict(self.dynamics).items():
            if key in _MOVED:
                raise DescriptionError(
                    f"{key} of link {label} is computed from its mass, centre of mass and inertia: give those instead", key=key, label=label
                )
            if key not in DH_DYNAMIC_NAMES:
                raise DescriptionError(
                    f"unknown dynamic parameter {key!r} of link {label}: use {', '.join(DH_DYNAMIC_NAMES)}", key=key, label=label
                )
            dynamics[key] = _value(value, key, label)
        object.__setattr__(self, "dynamics", MappingProxyType(dynamics))

    def _inertial(self, label):
        given = {key: getattr(self, key) is not None for key in ("mass", "com", "inertia")}
        if not any(given.values()):
            return
        for key, present in given.items():
            if not present:
                raise DescriptionError(
                    f"link {label} has no {key}: give mass, com and inertia together (or none, for SYMORO's symbols)", key=key, label=label
                )
        mass = _value(self.mass, "mass", label)
        if mass.is_number and mass < 0:
            raise DescriptionError(
                f"mass of link {label} is {format_expression(mass)}: a mass is positive or zero (kg)", key="mass", label=label
            )
        com = _flat(self.com)
        if len(com) != 3:
            raise DescriptionError(
                f"com of link {label} needs 3 values (x, y, z in DH frame {label}), got {len(com)}", key="com", label=label
            )
        com = sympy.ImmutableMatrix([_value(v, "com", label) for v in com])
        entries = _flat(self.inertia)
        if len(entries) == 3:
            entries = [entries[0], 0, 0, 0, entries[1], 0, 0, 0, entries[2]]
        if len(entries) != 9:
            raise DescriptionError(
                f"inertia of link {label} needs 3 rows of 3 values, or its 3 diagonal values [Ixx, Iyy, Izz]; got {len(entries)} values",
                key="inertia",
                label=label,
            )
        inertia = sympy.ImmutableMatrix(3, 3, [_value(v, "inertia", label) for v in entries])
        _check_inertia(inertia, label)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)

    @property
    def variable_key(self):
        """``"theta"`` (revolute) or ``"d"`` (prismatic): the entry holding the joint variable."""
        return "theta" if self.sigma == joints.REVOLUTE else "d"

    @property
    def joint_expression(self):
        """The joint variable plus the offset: theta (revolute) or d (prismatic) of the table."""
        return getattr(self, self.variable_key) + self.offset

    @property
    def constants(self):
        """``{key: value}`` of every entry that must not use a joint variable or rate."""
        constant = "d" if self.variable_key == "theta" else "theta"
        values = {constant: getattr(self, constant), "a": self.a, "alpha": self.alpha}
        if self.mass is not None:
            values.update(mass=self.mass, com=self.com, inertia=self.inertia)
        values.update(self.dynamics)
        return values


def _check_inertia(inertia, label):
    """Symmetric, and positive semi-definite when numeric (zero moments are kept:
    published tables give point masses and, for the PUMA's first link, a single
    moment about the joint axis)."""
    for i, j in ((0, 1), (0, 2), (1, 2)):
        if sympy.expand(inertia[i, j] - inertia[j, i]) != 0:
            names = "xyz"
            raise DescriptionError(
                f"inertia of link {label} is not symmetric: I{names[i]}{names[j]} = {format_expression(inertia[i, j])} but "
                f"I{names[j]}{names[i]} = {format_expression(inertia[j, i])}; an inertia matrix equals its transpose",
                key="inertia",
                label=label,
            )
    if all(entry.is_number for entry in inertia):
        values = numpy.array(inertia.evalf(), dtype=float)
        smallest = numpy.linalg.eigvalsh(values)[0]
        if smallest < -_EIGEN_TOLERANCE * numpy.max(numpy.abs(values)):
            raise DescriptionError(
                f"inertia of link {label} about its centre of mass is not positive semi-definite (eigenvalue "
                f"{smallest:.6g}): no body has it; check the signs and the units of the moments and products",
                key="inertia",
                label=label,
            )


def inertia_about_origin(mass: Any, com: Sequence[Any], inertia: Any, rotation: Any, position: Sequence[Any]) -> dict[str, sympy.Expr]:
    """SYMORO's inertial parameters of a body, in a frame K.

    Parameters
    ----------
    mass : expression
    com : 3-vector
        Centre of mass, in a frame F.
    inertia : 3 x 3
        Inertia about the centre of mass, in the axes of F.
    rotation, position : 3 x 3, 3-vector
        Orientation and origin of F in K.

    Returns
    -------
    dict
        ``XX XY XZ YY YZ ZZ`` (inertia about the origin of K, in its axes),
        ``MX MY MZ`` (first moments) and ``M``.

    Examples
    --------
    A 2 kg body centred 3 m along x of K, spinning freely (no inertia of its own):

    >>> inertia_about_origin(2, [0, 0, 0], [[0, 0, 0]] * 3, sympy.eye(3), [3, 0, 0])["ZZ"]
    18
    """
    R = sympy.Matrix(rotation)
    c = sympy.Matrix(position) + R * sympy.Matrix(com)
    Ic = R * sympy.Matrix(inertia) * R.T
    m = sympy.sympify(mass)
    x, y, z = c
    # The parallel-axis terms written out: |c|^2 - x^2 computed as y^2 + z^2
    # rounds no float and leaves no cancelling terms in a symbolic value.
    return {
        "XX": Ic[0, 0] + m * (y**2 + z**2),
        "XY": Ic[0, 1] - m * x * y,
        "XZ": Ic[0, 2] - m * x * z,
        "YY": Ic[1, 1] + m * (x**2 + z**2),
        "YZ": Ic[1, 2] - m * y * z,
        "ZZ": Ic[2, 2] + m * (x**2 + y**2),
        "MX": m * x,
        "MY": m * y,
        "MZ": m * z,
        "M": m,
    }


def _check_table(links, end):
    """Labels used once, a variable of its own per joint, no state in a constant (in DH terms)."""
    labels = set()
    for link in links:
        if link.label in labels or link.label == "0":
            raise DescriptionError(
                f"joint label {link.label} is used twice (0 is the base): give each joint its own", key="label", label=link.label
            )
        labels.add(link.label)
    if end in labels:
        raise DescriptionError(
            f"end frame label {end} is the label of a joint: give the fixed frame at the end of the last link a label "
            f'of its own (end = "tool")',
            key="end",
            label=end,
        )
    variables = _joint_variables(links)
    state = {variable: label for label, variable in variables.items()}
    for link in links:
        for rate in ("QP", "QDP", "GAM"):
            state[sympy.Symbol(f"{rate}{link.label}")] = link.label
    for link in links:
        _check_state(link, variables[link.label], state)
        try:
            variable, _ = joints.split_joint_variable(link.joint_expression, link.label)
        except joints.JointVariableError:
            variable = None
        if variable != variables[link.label]:
            # The frames split theta + offset by the same rule: a name in the
            # offset must leave the joint variable recognisable.
            raise DescriptionError(
                f"offset of joint {link.label} ({format_expression(link.offset)}) hides which symbol of {format_expression(link.joint_expression)} is the joint "
                f'variable: name the variable after the joint ({link.variable_key} = "q{link.label}")',
                key="offset",
                label=link.label,
            )


def _joint_variables(links):
    """``{label: joint variable}``: each joint's theta (or d) is a symbol plus a constant.

    That two joints share no variable is the check of :meth:`Robot.create`,
    run on the frames this table becomes (its error names the line too).
    """
    variables = {}
    for link in links:
        key = link.variable_key
        entry = getattr(link, key)
        if not sympy.sympify(entry).free_symbols:
            kind = "revolute" if key == "theta" else "prismatic"
            raise DescriptionError(
                f"{key} of {kind} joint {link.label} is {format_expression(entry)}, but it holds the joint variable: leave it out "
                f'(the variable is then q{link.label}) or name it ({key} = "q{link.label}"), and put a constant shift in offset',
                key=key,
                label=link.label,
            )
        try:
            # The entry alone: a state symbol in the offset is reported as such by _check_state.
            variable, _ = joints.split_joint_variable(entry, link.label)
        except joints.JointVariableError as exc:
            raise DescriptionError(f"{key} of joint {link.label}: {exc}", key=key, label=link.label) from None
        variables[link.label] = variable
    return variables


def _check_state(link, own, state):
    """No joint variable or rate (``state``: symbol -> its joint) in a value of ``link``
    but its own variable ``own`` in its theta (or d)."""
    entries = {link.variable_key: getattr(link, link.variable_key), "offset": link.offset}
    entries.update(link.constants)
    for key, value in entries.items():
        allowed = {own} if key == link.variable_key else set()
        used = sorted(sympy.sympify(value).free_symbols & set(state) - allowed, key=str)
        if used:
            raise DescriptionError(
                f"{key} of joint {link.label} uses {used[0]}, the state of joint {state[used[0]]}: a joint variable "
                f"or rate belongs to its joint alone; give this value a parameter of its own",
                key=key,
                label=link.label,
            )


def _frames(links, end):
    """Khalil-Kleinfinger frames of the chain, and the fixed end frame ``end`` (None: none)."""
    frames, previous = [], None
    for link in links:
        alpha, d = (previous.alpha, previous.a) if previous is not None else (0, 0)
        if link.sigma == joints.REVOLUTE:
            theta, r = link.joint_expression, link.d
        else:
            theta, r = link.theta, link.joint_expression
        antecedent = previous.label if previous is not None else "0"
        frames.append(Frame(link.label, antecedent, link.sigma, 1, KKPlacement(alpha=alpha, d=d, theta=theta, r=r)))
        previous = link
    if end is not None:
        assert previous is not None, "a chain has a link at least"
        frames.append(Frame(end, previous.label, joints.FIXED, 0, KKPlacement(alpha=previous.alpha, d=previous.a)))
    return frames


def _dynamics(link):
    values = {}
    if link.mass is not None:
        moved = inertia_about_origin(link.mass, link.com, link.inertia, joints.rot_x(link.alpha), [link.a, 0, 0])
        values.update({key: _settled(value) for key, value in moved.items()})
    values.update(link.dynamics)
    return values


def _settled(value):
    """A number computed from floats and exact irrationals (0.7 (0.005 sqrt(3) + 0.01)^2,
    from a twist of pi/3) as the float it is: the floats of the table were
    never exact, and a float reads back from a file where the mixed form may not."""
    if value.is_number and value.has(sympy.Float) and not isinstance(value, sympy.Float):
        return sympy.Float(float(value))
    return value


def _dh_terms(exc, links, end):
    """A description error about the Khalil-Kleinfinger frames, pointed back at the DH entry it comes from."""
    labels = [link.label for link in links]
    key, label = exc.key, exc.label
    if label == end and label not in labels:
        return {"d": "a", "alpha": "alpha"}.get(key, "end"), labels[-1] if key in ("d", "alpha") else end
    if label not in labels:
        return key, label
    index = labels.index(label)
    previous = labels[index - 1] if index else label
    if key in ("d", "alpha"):
        return ("a" if key == "d" else "alpha"), previous
    if key in ("theta", "r"):
        # theta holds the DH theta (with the offset, if revolute), r the DH d.
        return ("theta" if key == "theta" else "d"), label
    if key in _MOVED:
        return _MOVED[key], label
    if key in JOINT_NAMES:
        return "label", label
    return key, label


def standard_dh_robot(name: str, links: Sequence[DHLink], base: Base | None = None, end: str | None = None) -> Robot:
    """A robot from its standard-DH table with centre-of-mass inertias.

    Parameters
    ----------
    name : str
    links : sequence of DHLink
        The rows of the table, from the base out; joint j hangs on joint j-1.
    base : Base, optional
        Placement, motion and gravity of frame 0 (DH frame 0).
    end : str, optional
        Label of a fixed frame at DH frame n (the end of the last link).
        Without it, that frame is added only when a_n or alpha_n is not 0,
        labelled ``str(n + 1)`` (otherwise DH frame n is frame n itself).

    Returns
    -------
    Robot
        Khalil-Kleinfinger frames on the joint axes (``theta = q + offset``),
        link j's inertia about the origin of frame j.

    Raises
    ------
    DescriptionError
        ``key`` and ``label`` name the DH entry at fault: ``theta``, ``d``,
        ``a``, ``alpha``, ``offset``, ``mass``, ``com``, ``inertia``, a name
        of :data:`DH_DYNAMIC_NAMES`, ``label`` or ``end``.
    """
    links = tuple(links)
    if not links:
        raise DescriptionError("a standard-DH table needs at least one joint", key="joint", label=None)
    for link in links:
        if not isinstance(link, DHLink):
            raise DescriptionError(f"expected a DHLink, got {link!r}")
    last = links[-1]
    if end is None and (last.a != 0 or last.alpha != 0):
        end = str(len(links) + 1)
    end = None if end is None else str(end)
    _check_table(links, end)
    frames = _frames(links, end)
    dynamics = {link.label: _dynamics(link) for link in links}
    try:
        return Robot.create(name, frames, dynamics=dynamics, base=base)
    except DescriptionError as exc:
        key, label = _dh_terms(exc, links, end)
        raise DescriptionError(str(exc), key=key, label=label) from None
