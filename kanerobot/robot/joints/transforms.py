"""Elementary transforms, Khalil-Kleinfinger's ``iT_j`` and the joint variable of an expression.

Khalil-Kleinfinger parameters give (SYMORO+ eq. 1-b)::

    iT_j = Rot(z, gamma) Trans(z, b) Rot(x, alpha) Trans(x, d) Rot(z, theta) Trans(z, r)

with the joint variable q = theta (revolute) or r (prismatic).  A general
frame gives ``iT_j = [R0, P; 0 1] * M(q)``: R0 and P its placement at
q = 0 (the form of the Krang report, seed 001) and ``M(q)`` the motion of
its joint model (:mod:`kanerobot.robot.joints`).
"""

import sympy


def rot_x(angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(angle):
    c, s = sympy.cos(angle), sympy.sin(angle)
    return sympy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rot_axis(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues).

    Axes along a coordinate direction give the plain elementary rotation,
    without the (1 - cos) terms that Rodrigues' formula would leave in.
    """
    e = sympy.Matrix(axis)
    c, s = sympy.cos(angle), sympy.sin(angle)
    skew = hat(e)
    return sympy.eye(3) * c + skew * s + (e * e.T) * (1 - c)


def hat(v):
    """Skew-symmetric matrix of a 3-vector: ``hat(a) * b == a x b``."""
    return sympy.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def homogeneous(R, P):
    """4x4 homogeneous transform from a 3x3 rotation and a 3-vector."""
    T = sympy.eye(4)
    T[:3, :3] = R
    T[:3, 3] = sympy.Matrix(P)
    return T


def kk_transform(gamma, b, alpha, d, theta, r):
    """Khalil-Kleinfinger transform iT_j (SYMORO+ eq. 1-b)."""
    cg, sg = sympy.cos(gamma), sympy.sin(gamma)
    ca, sa = sympy.cos(alpha), sympy.sin(alpha)
    ct, st = sympy.cos(theta), sympy.sin(theta)
    return sympy.Matrix(
        [
            [cg * ct - sg * ca * st, -cg * st - sg * ca * ct, sg * sa, d * cg + r * sg * sa],
            [sg * ct + cg * ca * st, -sg * st + cg * ca * ct, -cg * sa, d * sg - r * cg * sa],
            [sa * st, sa * ct, ca, r * ca + b],
            [0, 0, 0, 1],
        ]
    )


class JointVariableError(ValueError):
    """The joint's theta, r or q is not ``variable + constant``."""


def split_joint_variable(expr, label="", known=()):
    """``(q, offset)`` of a joint expression ``q + offset``.

    Published Denavit-Hartenberg tables written as Khalil-Kleinfinger
    parameters carry constant shifts (``th2 - pi/2``, ``th3 + 0.3``,
    ``r2 + L0``).  The joint variable is the symbol that appears alone with
    coefficient +1; the offset is what remains and may not contain it.  When
    several symbols appear alone (``r2 + L0``), the one named after the joint
    (``th2``, ``r2``, ``q2``, ``theta2``) wins, then one not in ``known`` (the
    names of the robot's other parameters, if the caller knows them).

    Parameters
    ----------
    expr : sympy.Expr
        theta of a revolute KK frame, r of a prismatic one, q of a general frame.
    label : str
        The frame's label, for the naming rule.
    known : iterable of str, optional
        Names that are certainly not this joint's variable.

    Returns
    -------
    tuple
        ``(sympy.Symbol, sympy.Expr)``.

    Raises
    ------
    JointVariableError
        With a message saying what the expression must look like.

    Examples
    --------
    >>> import sympy
    >>> th2, r2, L0 = sympy.symbols("th2 r2 L0")
    >>> split_joint_variable(th2 - sympy.pi / 2, "2")
    (th2, -pi/2)
    >>> split_joint_variable(r2 + L0, "2")
    (r2, L0)
    """
    if isinstance(expr, sympy.Symbol):
        return expr, sympy.S.Zero
    alone = [term for term in sympy.Add.make_args(expr) if isinstance(term, sympy.Symbol)]
    if len(alone) > 1:
        named = [s for s in alone if s.name in {f"{p}{label}" for p in ("th", "r", "q", "theta", "q_")}]
        unknown = [s for s in alone if s.name not in set(known)]
        alone = named if len(named) == 1 else unknown
    if len(alone) != 1:
        what = "no symbol appears alone" if not alone else "several symbols could be it: " + ", ".join(map(str, alone))
        raise JointVariableError(
            f"{expr} is not 'joint variable + constant' ({what}); write it as the joint's own symbol plus an "
            f"offset, e.g. th{label} - pi/2 or r{label} + L0"
        )
    variable = alone[0]
    offset = expr - variable
    if variable in offset.free_symbols:
        raise JointVariableError(f"{expr}: the joint variable {variable} appears in its offset {offset}; the offset must be a constant")
    return variable, offset
