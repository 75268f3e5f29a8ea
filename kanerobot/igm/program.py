"""A solved inverse geometric model: the steps of Paul's method and their
numeric evaluation into every branch.

:class:`SolutionProgram` holds the :class:`~kanerobot.igm.paul.Step` list of
a robot (symbolic in the geometric parameters); :meth:`SolutionProgram.compile`
binds the geometric values once and returns a function of the pose giving
all candidate joint vectors, each with the joints that are free (a singular
case: a family of solutions).
"""

import math

import numpy
import sympy

from kanerobot.errors import ParameterError
from kanerobot.igm import equations as eq
from kanerobot.igm.paul import POSE_NAMES

METHOD_NAMES = {"paul": "Paul's", "pieper": "Pieper's"}

_MEASURES = {
    # how well a candidate is conditioned: its best is used numerically
    "type1": lambda c: abs(c[0]),
    "type2": lambda c: math.hypot(c[0], c[1]),
    "type4": lambda c: c[0] ** 2 + c[1] ** 2,
    "type5": lambda c: c[0] ** 2 + c[1] ** 2,
}
_MEASURES.update({k: _MEASURES["type2"] for k in ("type6", "type7", "type8")})

_WORDS = {
    "type1": "type 1  X r = Y",
    "type2": "type 2  X S + Y C = Z",
    "type3": "type 3  X1 S + Y1 C = Z1, X2 S + Y2 C = Z2",
    "type4": "type 4  r (X1 S + Y1 C) = Z1, r (X2 S + Y2 C) = Z2",
    "type5": "type 5  X1 S + Y1 C = Z1 + W1 r, X2 S + Y2 C = Z2 + W2 r",
    "type6": "type 6  W Sj = X Ci + Y Si + Z1, W Cj = X Si - Y Ci + Z2",
    "type7": "type 7  W1 Cj + W2 Sj = X Ci + Y Si + Z1, W1 Sj - W2 Cj = X Si - Y Ci + Z2",
    "type8": "type 8  X Ci + Y C(i+j) = Z1, X Si + Y S(i+j) = Z2",
}

_BRANCHES = {
    "type1": "one solution; none (or any value: a family) when X = 0",
    "type2": "two solutions th = atan2(X, Y) +- acos(Z / sqrt(X^2 + Y^2)) when Z^2 < X^2 + Y^2 (one when "
             "equal, th and th + pi when Z = 0); none when Z^2 > X^2 + Y^2; singular, any value (a family), "
             "when X = Y = Z = 0",
    "type3": "one solution th = atan2(Z1 Y2 - Z2 Y1, X1 Z2 - X2 Z1) when X1 Y2 - X2 Y1 != 0 (all the "
             "equations of the unknown by least squares); when they are dependent, the type-2 solutions of one",
    "type4": "r = +-sqrt(Z1^2 + Z2^2) / sqrt(X1^2 + Y1^2), then th by type 3; th any when r = 0",
    "type5": "r from a quadratic (0, 1 or 2 real roots), then th by type 3",
}
for _k in ("type6", "type7", "type8"):
    _BRANCHES[_k] = "after squaring and adding, a type 2: two solutions, or none, or a family"


class SolutionProgram:
    """The steps that solve a chain (and its loops) for its joints.

    Parameters
    ----------
    robot : Robot
    steps : list of Step
    method : str
        ``'paul'`` or ``'pieper'``.
    """

    def __init__(self, robot, steps, method):
        self.robot = robot
        self.steps = list(steps)
        self.method = method
        self.joints = [robot.frame(label).q for label in robot.joint_labels]
        self.pose = [sympy.Symbol(n) for n in POSE_NAMES]

    def __str__(self):
        lines = [f"Inverse geometric model of {self.robot.name} ({METHOD_NAMES[self.method]} method)",
                 "U0 = [[sx, nx, ax, Px], [sy, ny, ay, Py], [sz, nz, az, Pz]]", ""]
        for n, step in enumerate(self.steps, 1):
            names = ", ".join(map(str, step.unknowns))
            lines.append(f"step {n}: {names} by {_WORDS[step.kind]}")
            lines.append(f"    {step.equation}")
            if step.note:
                lines.append(f"    ({step.note})")
            lines.append(f"    branches: {_BRANCHES[step.kind]}")
            if step.offset is not None:
                lines.append(f"    the angle solved is {names} + {step.offset}")
        lines.append("")
        lines.append(f"at most {self.max_solutions()} solutions; each is checked by the direct geometric model")
        return "\n".join(lines)

    def max_solutions(self):
        """Product of the branch counts of the steps."""
        count = 1
        for step in self.steps:
            count *= {"type1": 1, "type3": 1, "type5": 2}.get(step.kind, 2)
        return count

    def compile(self, values):
        """Bind the geometric values; return ``f(pose, start=None) -> list of (q, free)``.

        ``pose`` is the 4x4 numeric pose (the target of the chain), ``start``
        the branches to continue (joints known before these steps), ``q`` a
        joint vector in ``robot.joint_labels`` order and ``free`` the labels
        of the joints left at 0 because any value fits (a singular case).
        """
        names = {str(k): float(v) for k, v in (values or {}).items()}
        bound = set(self.pose) | set(self.joints)
        compiled = []
        for step in self.steps:
            funcs = []
            for cand in step.candidates:
                exprs = [sympy.sympify(c) for c in cand]
                free = set().union(*(e.free_symbols for e in exprs)) - bound
                missing = sorted(str(s) for s in free if str(s) not in names)
                if missing:
                    raise ParameterError(
                        f"robot {self.robot.name}: no value for {', '.join(missing)}; give them in values"
                    )
                mapping = {s: sympy.Float(names[str(s)]) for s in free}
                funcs.append(sympy.lambdify([self.pose, self.joints], [e.xreplace(mapping) for e in exprs], "math"))
            index = [self.joints.index(u) for u in step.unknowns]
            offset = None if step.offset is None else self.joints.index(step.offset)
            compiled.append((step.kind, funcs, index, offset))
        labels = self.robot.joint_labels

        def solve(T, start=None):
            pose = [float(x) for x in numpy.asarray(T, dtype=float)[:3, :4].reshape(-1)]
            branches = list(start) if start is not None else [(numpy.zeros(len(self.joints)), ())]
            for kind, funcs, index, offset in compiled:
                grown = []
                for q, free in branches:
                    ql = q.tolist()
                    if kind == "type3":  # all the rows, solved together
                        coeffs = [f(pose, ql) for f in funcs]
                    else:
                        coeffs = max((f(pose, ql) for f in funcs), key=_MEASURES[kind])
                    for values_, idle in _roots(kind, coeffs):
                        child = q.copy()
                        for i, v in zip(index, values_):
                            child[i] = v - (q[offset] if offset is not None and i == index[-1] else 0.0)
                        grown.append((child, free + tuple(labels[index[k]] for k in idle)))
                branches = grown
            return branches

        return solve


def _roots(kind, c):
    """Numeric solutions of one step: list of (values, indices of free ones)."""
    if kind == "type1":
        return [((0.0 if r is None else r,), (0,) if r is None else ()) for r in eq.solve_type1(*c)]
    if kind in ("type2", "type6", "type7", "type8"):
        return [((0.0 if t is None else t,), (0,) if t is None else ()) for t in eq.solve_type2(*c)]
    if kind == "type3":
        return [((0.0 if t is None else t,), (0,) if t is None else ()) for t in eq.solve_type3(c)]
    pairs = eq.solve_type4(*c) if kind == "type4" else eq.solve_type5(*c)
    return [((r, 0.0 if t is None else t), (1,) if t is None else ()) for r, t in pairs]
