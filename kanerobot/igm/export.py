"""Export of a closed-form inverse geometric model as code returning all solutions.

The generated function follows the steps of the
:class:`~kanerobot.igm.program.SolutionProgram`: a list of branches (joint
vectors) grows step by step, each step's coefficients are computed from the
pose, the geometric parameters and the joints already known, the equation
type gives 0, 1 or 2 values, and at the end every branch is checked with the
direct geometric model (so that a spurious branch never leaks).  Languages:
``python`` (math only), ``c`` (C99, math.h), ``matlab`` (MATLAB/Octave) and
``julia`` (Base only).

Signatures (``NJ`` joints, ``NP`` geometric parameters in the robot's order,
:meth:`~kanerobot.robot.description.Robot.parameter_order`, listed in the
generated header):

- python: ``name(T, p, tol=1e-9) -> list of lists`` (T a 4x4 nested sequence);
- c: ``int name(const double T[16], const double p[NP], double q[][NJ])``
  (T row by row; returns the number of solutions, at most ``NAME_MAX_SOLUTIONS``);
- matlab: ``Q = name(T, p)`` with one solution per row;
- julia: ``name(T, p; tol=1e-9) -> Vector{Vector{Float64}}`` (T a 4x4 matrix).
"""

import sympy

from kanerobot.errors import KaneRobotError
from kanerobot.geometry import transform
from kanerobot.igm.paul import POSE_NAMES
from kanerobot.robot.joints import Revolute

LANGS = ("python", "c", "matlab", "julia")

_PY_HELPERS = '''
def _type1(X, Y):
    if abs(X) <= 1e-10 * max(abs(X), abs(Y), 1.0):
        return [0.0] if abs(Y) <= 1e-8 * max(abs(Y), 1.0) else []
    return [Y / X]


def _type2(X, Y, Z):
    rho = math.hypot(X, Y)
    if rho <= 1e-10 * max(rho, abs(Z), 1.0):
        return [0.0] if abs(Z) <= 1e-8 * max(abs(Z), 1.0) else []
    c = Z / rho
    if abs(c) > 1.0 + 1e-9:
        return []
    c = max(-1.0, min(1.0, c))
    phi, delta = math.atan2(X, Y), math.acos(c)
    return [phi] if delta < 1e-12 else [phi + delta, phi - delta]


def _type3(rows):
    # least squares on all the rows X S + Y C = Z; dependent rows: a type 2
    a = sum(r[0] * r[0] for r in rows); b = sum(r[0] * r[1] for r in rows)
    d = sum(r[1] * r[1] for r in rows)
    e = sum(r[0] * r[2] for r in rows); f = sum(r[1] * r[2] for r in rows)
    det = a * d - b * b
    if det > 1e-14 * max(a * d, 1e-300):
        return [math.atan2((d * e - b * f) / det, (a * f - b * e) / det)]
    return _type2(*max(rows, key=lambda r: math.hypot(r[0], r[1])))


def _type4(X1, Y1, Z1, X2, Y2, Z2):
    r = math.sqrt((Z1 * Z1 + Z2 * Z2) / (X1 * X1 + Y1 * Y1))
    if r <= 1e-12 * max(1.0, abs(Z1) + abs(Z2)):
        return [(0.0, 0.0)]
    return [(s, t) for s in (r, -r) for t in _type3([(X1 * s, Y1 * s, Z1), (X2 * s, Y2 * s, Z2)])]


def _type5(X1, Y1, Z1, W1, X2, Y2, Z2, W2):
    a = W1 * W1 + W2 * W2; b = 2 * (Z1 * W1 + Z2 * W2); c = Z1 * Z1 + Z2 * Z2 - X1 * X1 - Y1 * Y1
    if abs(a) <= 1e-10 * max(abs(b), abs(c), 1.0):
        roots = _type1(b, -c)
    else:
        disc = b * b - 4 * a * c
        if disc < -1e-9 * max(b * b, abs(4 * a * c), 1.0):
            return []
        disc = math.sqrt(max(disc, 0.0))
        roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    return [(r, t) for r in roots for t in _type3([(X1, Y1, Z1 + W1 * r), (X2, Y2, Z2 + W2 * r)])]
'''


def generate_igm(igm, lang, name=None):
    """Source text of the IGM of ``igm`` (an :class:`~kanerobot.igm.api.InverseGeometricModel`).

    Parameters
    ----------
    igm : InverseGeometricModel
    lang : {'python', 'c', 'matlab', 'julia'}
    name : str, optional
        Function name, default ``igm_<robot>``.

    Returns
    -------
    str

    Examples
    --------
    >>> import kanerobot as kr
    >>> from kanerobot.igm.api import derive_igm
    >>> arm = kr.load(kr.frames_path("planar2"))
    >>> namespace = {}
    >>> exec(generate_igm(derive_igm(arm), "python"), namespace)
    >>> import math
    >>> T = [[math.cos(0.9), -math.sin(0.9), 0, 2 * math.cos(0.3)], [math.sin(0.9), math.cos(0.9), 0, 2 * math.sin(0.3)],
    ...      [0, 0, 1, 0], [0, 0, 0, 1]]
    >>> [[round(v, 9) for v in q] for q in namespace["igm_planar2"](T, [2.0])]
    [[0.3, 0.6]]
    """
    if lang not in LANGS:
        raise KaneRobotError(f"the IGM is exported in {', '.join(LANGS)}, not {lang!r}")
    robot = igm.robot
    name = name or f"igm_{robot.name.lower()}"
    if not name.isidentifier():
        raise KaneRobotError(f"{name!r} is not a valid function name")
    joints = [robot.frame(label).q for label in robot.joint_labels]
    steps = list(igm.program.steps) + (list(igm.loop_program.steps) if igm.loop_program is not None else [])
    fk = transform(robot, "0", igm.end)[:3, :]
    params = {s for st in steps for c in st.candidates for e in c for s in sympy.sympify(e).free_symbols} | fk.free_symbols
    params = robot.parameter_order(s for s in params if s not in set(joints) and str(s) not in POSE_NAMES)
    writer = {"python": _Python, "c": _C, "matlab": _Matlab, "julia": _Julia}[lang](robot, name, joints, params, steps, fk)
    return writer.text()


class _Writer:
    def text(self) -> str:
        """The generated file (each language's writer)."""
        raise NotImplementedError

    def __init__(self, robot, name, joints, params, steps, fk):
        self.robot, self.name, self.joints, self.params, self.steps, self.fk = robot, name, joints, params, steps, fk
        self.nj = len(joints)
        self.max = 1
        for st in steps:
            self.max *= {"type1": 1, "type3": 2}.get(st.kind, 4 if st.kind in ("type4", "type5") else 2)

    def header_lines(self):
        labels = ", ".join(map(str, self.joints))
        pars = ", ".join(map(str, self.params)) or "none"
        return [
            f"Inverse geometric model of {self.robot.name}: every joint vector ({labels})",
            "placing the terminal frame at the pose T (4x4, in frame 0).",
            f"Geometric parameters p = [{pars}].  Generated by kanerobot (Paul's method).",
        ]

    def revolute_indices(self, first=0):
        """Indices of the revolute joints in the joint vector, counted from ``first`` (1 for Matlab and Julia)."""
        return [k + first for k, label in enumerate(self.robot.joint_labels)
                if isinstance(self.robot.frame(label).joint, Revolute)]


class _Python(_Writer):
    def code(self, e):
        return sympy.pycode(sympy.sympify(e), fully_qualified_modules=True)

    def text(self):
        out = ['"""' + "\n".join(self.header_lines()) + '"""', "", "import math", _PY_HELPERS, ""]
        out.append(f"def {self.name}(T, p, tol=1e-9):")
        out.append('    """All solutions: a list of joint vectors."""')
        for r in range(3):
            out.append("    " + ", ".join(POSE_NAMES[4 * r:4 * r + 4]) + f" = (float(v) for v in T[{r}][:4])")
        if self.params:
            out.append("    " + ", ".join(map(str, self.params)) + ", = (float(v) for v in p)")
        out.append(f"    branches = [[0.0] * {self.nj}]")
        unpack = "        " + ", ".join(map(str, self.joints)) + ", = q"
        for n, st in enumerate(self.steps, 1):
            idx = [self.joints.index(u) for u in st.unknowns]
            out.append(f"    # step {n}: {', '.join(map(str, st.unknowns))} by {st.kind}")
            out += ["    grown = []", "    for q in branches:", unpack]
            cands = "[" + ", ".join("(" + ", ".join(self.code(c) for c in cand) + ",)" for cand in st.candidates) + "]"
            out.append(f"        cands = {cands}")
            off = f" - {st.offset}" if st.offset is not None else ""
            if st.kind == "type3":
                out.append("        for v in _type3(cands):")
                out.append(f"            r = list(q); r[{idx[0]}] = v{off}; grown.append(r)")
            elif st.kind == "type1":
                out.append("        for v in _type1(*max(cands, key=lambda c: abs(c[0]))):")
                out.append(f"            r = list(q); r[{idx[0]}] = v; grown.append(r)")
            elif st.kind in ("type4", "type5"):
                out.append(f"        for a, b in _{st.kind}(*max(cands, key=lambda c: c[0] ** 2 + c[1] ** 2)):")
                out.append(f"            r = list(q); r[{idx[0]}] = a; r[{idx[1]}] = b; grown.append(r)")
            else:
                out.append("        for v in _type2(*max(cands, key=lambda c: math.hypot(c[0], c[1]))):")
                out.append(f"            r = list(q); r[{idx[0]}] = v{off}; grown.append(r)")
            out.append("    branches = grown")
        out += ["    solutions = []", "    for q in branches:", unpack]
        entries = [self.code(self.fk[r, c]) + f" - {POSE_NAMES[4 * r + c]}" for r in range(3) for c in range(4)]
        out.append("        err = max(abs(e) for e in (" + ", ".join(entries) + "))")
        out.append("        if err <= tol:")
        out.append("            solutions.append([math.remainder(v, 2 * math.pi) if k in REVOLUTE else v for k, v in enumerate(q)])")
        out.append("    return _unique(solutions)")
        revolute = set(self.revolute_indices())
        out += ["", "", f"REVOLUTE = {revolute or 'set()'}", "", "",
                "def _unique(solutions):",
                "    kept = []",
                "    for q in solutions:",
                "        if all(max(abs(math.remainder(a - b, 2 * math.pi)) if k in REVOLUTE else abs(a - b)",
                "                   for k, (a, b) in enumerate(zip(q, s))) > 1e-7 for s in kept):",
                "            kept.append(q)",
                "    return kept"]
        return "\n".join(out) + "\n"


_C_HELPERS = r'''
static inline int kr_type1(double X, double Y, double *v) {
    double s = fmax(fmax(fabs(X), fabs(Y)), 1.0);
    if (fabs(X) <= 1e-10 * s) { v[0] = 0.0; return fabs(Y) <= 1e-8 * s; }
    v[0] = Y / X; return 1;
}
static inline int kr_type2(double X, double Y, double Z, double *v) {
    double rho = hypot(X, Y), s = fmax(fmax(rho, fabs(Z)), 1.0), c, phi, delta;
    if (rho <= 1e-10 * s) { v[0] = 0.0; return fabs(Z) <= 1e-8 * s; }
    c = Z / rho;
    if (fabs(c) > 1.0 + 1e-9) return 0;
    c = fmax(-1.0, fmin(1.0, c));
    phi = atan2(X, Y); delta = acos(c);
    if (delta < 1e-12) { v[0] = phi; return 1; }
    v[0] = phi + delta; v[1] = phi - delta; return 2;
}
static inline int kr_type3(int n, const double (*r)[3], double *v) {
    double a = 0, b = 0, d = 0, e = 0, f = 0, det, best = -1; int k, kb = 0;
    for (k = 0; k < n; k++) {
        a += r[k][0] * r[k][0]; b += r[k][0] * r[k][1]; d += r[k][1] * r[k][1];
        e += r[k][0] * r[k][2]; f += r[k][1] * r[k][2];
        if (hypot(r[k][0], r[k][1]) > best) { best = hypot(r[k][0], r[k][1]); kb = k; }
    }
    det = a * d - b * b;
    if (det > 1e-14 * fmax(a * d, 1e-300)) { v[0] = atan2((d * e - b * f) / det, (a * f - b * e) / det); return 1; }
    return kr_type2(r[kb][0], r[kb][1], r[kb][2], v);
}
static inline int kr_type4(const double *c, double (*v)[2]) {
    double r = sqrt((c[2] * c[2] + c[5] * c[5]) / (c[0] * c[0] + c[1] * c[1])), t[2], rows[2][3];
    int n = 0, k, m, s;
    if (r <= 1e-12 * fmax(1.0, fabs(c[2]) + fabs(c[5]))) { v[0][0] = 0.0; v[0][1] = 0.0; return 1; }
    for (s = 0; s < 2; s++) {
        double rs = s ? -r : r;
        rows[0][0] = c[0] * rs; rows[0][1] = c[1] * rs; rows[0][2] = c[2];
        rows[1][0] = c[3] * rs; rows[1][1] = c[4] * rs; rows[1][2] = c[5];
        m = kr_type3(2, (const double (*)[3])rows, t);
        for (k = 0; k < m; k++) { v[n][0] = rs; v[n][1] = t[k]; n++; }
    }
    return n;
}
static inline int kr_type5(const double *c, double (*v)[2]) {
    double a = c[3] * c[3] + c[7] * c[7], b = 2 * (c[2] * c[3] + c[6] * c[7]);
    double cc = c[2] * c[2] + c[6] * c[6] - c[0] * c[0] - c[1] * c[1], roots[2], t[2], rows[2][3], disc;
    int nr = 0, n = 0, k, m, i;
    if (fabs(a) <= 1e-10 * fmax(fmax(fabs(b), fabs(cc)), 1.0)) nr = kr_type1(b, -cc, roots);
    else {
        disc = b * b - 4 * a * cc;
        if (disc < -1e-9 * fmax(fmax(b * b, fabs(4 * a * cc)), 1.0)) return 0;
        disc = sqrt(fmax(disc, 0.0));
        roots[0] = (-b + disc) / (2 * a); roots[1] = (-b - disc) / (2 * a); nr = 2;
    }
    for (i = 0; i < nr; i++) {
        rows[0][0] = c[0]; rows[0][1] = c[1]; rows[0][2] = c[2] + c[3] * roots[i];
        rows[1][0] = c[4]; rows[1][1] = c[5]; rows[1][2] = c[6] + c[7] * roots[i];
        m = kr_type3(2, (const double (*)[3])rows, t);
        for (k = 0; k < m; k++) { v[n][0] = roots[i]; v[n][1] = t[k]; n++; }
    }
    return n;
}
'''


class _C(_Writer):
    def code(self, e):
        return sympy.ccode(sympy.sympify(e), standard="C99")

    def text(self):
        nj, M, up = self.nj, self.max, self.name.upper()
        out = ["/* " + "\n * ".join(self.header_lines()) + "\n * Returns the number of solutions written in q (at most "
               f"{up}_MAX_SOLUTIONS). */", "#include <math.h>", "#include <string.h>",
               "#define KR_PI 3.14159265358979323846",
               f"#define {up}_MAX_SOLUTIONS {M}", _C_HELPERS]
        out.append(f"int {self.name}(const double T[16], const double *p, double q[][{nj}]) {{")
        out.append(f"    static double br[{M}][{nj}], nb[{M}][{nj}];")
        out.append("    double v[4], w[4][2], c[16][3], cf[8];")
        out.append("    int n = 1, m, i, k, j, ns = 0;")
        for k, nm in enumerate(POSE_NAMES):
            out.append(f"    const double {nm} = T[{k}];")
        for k, s in enumerate(self.params):
            out.append(f"    const double {s} = p[{k}];")
        out.append("    (void)v; (void)w; (void)c; (void)cf; (void)j;")
        out.append("    memset(br, 0, sizeof br);")
        unpack = " ".join(f"double {s} = br[i][{k}];" for k, s in enumerate(self.joints))
        voids = " ".join(f"(void){s};" for s in self.joints)
        for n, st in enumerate(self.steps, 1):
            idx = [self.joints.index(u) for u in st.unknowns]
            off = f" - br[i][{self.joints.index(st.offset)}]" if st.offset is not None else ""
            out.append(f"    /* step {n}: {', '.join(map(str, st.unknowns))} by {st.kind} */")
            out.append("    m = 0;")
            out.append("    for (i = 0; i < n; i++) {")
            out.append(f"        {unpack} {voids}")
            if st.kind == "type3":
                for r, cand in enumerate(st.candidates[:16]):
                    out.append("        " + " ".join(f"c[{r}][{t}] = {self.code(x)};" for t, x in enumerate(cand)))
                out.append(f"        k = kr_type3({min(len(st.candidates), 16)}, (const double (*)[3])c, v);")
                out.append(f"        for (j = 0; j < k; j++) {{ memcpy(nb[m], br[i], sizeof br[i]); nb[m][{idx[0]}] = v[j]{off}; m++; }}")
            elif st.kind in ("type4", "type5"):
                cand = st.candidates[0]
                out.append("        " + " ".join(f"cf[{t}] = {self.code(x)};" for t, x in enumerate(cand)))
                out.append(f"        k = kr_{st.kind}(cf, w);")
                out.append(f"        for (j = 0; j < k; j++) {{ memcpy(nb[m], br[i], sizeof br[i]); "
                           f"nb[m][{idx[0]}] = w[j][0]; nb[m][{idx[1]}] = w[j][1]; m++; }}")
            else:
                width = 2 if st.kind == "type1" else 3
                cands = st.candidates[:8]
                for r, cand in enumerate(cands):
                    out.append("        " + " ".join(f"c[{r}][{t}] = {self.code(x)};" for t, x in enumerate(cand)))
                norm = "fabs(c[j][0])" if width == 2 else "hypot(c[j][0], c[j][1])"
                out.append(f"        {{ int b = 0; double bn = -1; for (j = 0; j < {len(cands)}; j++) "
                           f"if ({norm} > bn) {{ bn = {norm}; b = j; }}")
                call = "kr_type1(c[b][0], c[b][1], v)" if width == 2 else "kr_type2(c[b][0], c[b][1], c[b][2], v)"
                out.append(f"          k = {call}; }}")
                out.append(f"        for (j = 0; j < k; j++) {{ memcpy(nb[m], br[i], sizeof br[i]); nb[m][{idx[0]}] = v[j]{off}; m++; }}")
            out.append("    }")
            out.append("    memcpy(br, nb, sizeof br); n = m;")
        out.append("    for (i = 0; i < n; i++) {")
        out.append(f"        {unpack} {voids}")
        out.append("        double err = 0, e;")
        for r in range(3):
            for cc in range(4):
                out.append(f"        e = fabs({self.code(self.fk[r, cc])} - {POSE_NAMES[4 * r + cc]}); if (e > err) err = e;")
        out.append("        if (err > 1e-9) continue;")
        revolute = self.revolute_indices()
        for k in revolute:
            out.append(f"        br[i][{k}] = remainder(br[i][{k}], 2 * KR_PI);")
        out.append("        for (j = 0; j < ns; j++) { double d = 0; for (k = 0; k < "
                   f"{nj}; k++) d = fmax(d, fabs(remainder(q[j][k] - br[i][k], 2 * KR_PI))); if (d < 1e-7) break; }}")
        out.append("        if (j == ns) { memcpy(q[ns], br[i], sizeof br[i]); ns++; }")
        out.append("    }")
        out.append("    return ns;")
        out.append("}")
        return "\n".join(out) + "\n"


class _Matlab(_Writer):
    def code(self, e):
        return sympy.octave_code(sympy.sympify(e))

    def text(self):
        nj = self.nj
        out = [f"function Q = {self.name}(T, p)"] + ["% " + line for line in self.header_lines()]
        out.append("% Q: one solution per row.")
        for k, nm in enumerate(POSE_NAMES):
            out.append(f"{nm} = T({k // 4 + 1}, {k % 4 + 1});")
        for k, s in enumerate(self.params):
            out.append(f"{s} = p({k + 1});")
        out.append(f"B = zeros(1, {nj});")
        unpack = " ".join(f"{s} = B(i, {k + 1});" for k, s in enumerate(self.joints))
        for n, st in enumerate(self.steps, 1):
            idx = [self.joints.index(u) + 1 for u in st.unknowns]
            off = f" - B(i, {self.joints.index(st.offset) + 1})" if st.offset is not None else ""
            out.append(f"% step {n}: {', '.join(map(str, st.unknowns))} by {st.kind}")
            out.append(f"N = zeros(0, {nj});")
            out.append("for i = 1:size(B, 1)")
            out.append(f"  {unpack}")
            rows = "; ".join(", ".join(self.code(x) for x in cand) for cand in st.candidates)
            out.append(f"  C = [{rows}];")
            if st.kind == "type3":
                out.append("  V = kr_type3(C);")
            elif st.kind == "type1":
                out.append("  [~, b] = max(abs(C(:, 1))); V = kr_type1(C(b, 1), C(b, 2));")
            elif st.kind in ("type4", "type5"):
                out.append(f"  W = kr_{st.kind}(C(1, :));")
                out.append(f"  for j = 1:size(W, 1), r = B(i, :); r({idx[0]}) = W(j, 1); r({idx[1]}) = W(j, 2); N(end + 1, :) = r; end")
            else:
                out.append("  [~, b] = max(hypot(C(:, 1), C(:, 2))); V = kr_type2(C(b, 1), C(b, 2), C(b, 3));")
            if st.kind not in ("type4", "type5"):
                out.append(f"  for j = 1:numel(V), r = B(i, :); r({idx[0]}) = V(j){off}; N(end + 1, :) = r; end")
            out.append("end")
            out.append("B = N;")
        out.append(f"Q = zeros(0, {nj});")
        out.append("for i = 1:size(B, 1)")
        out.append(f"  {unpack}")
        fk = "; ".join(", ".join(self.code(self.fk[r, c]) for c in range(4)) for r in range(3))
        out.append(f"  E = [{fk}] - T(1:3, :);")
        out.append("  if max(abs(E(:))) > 1e-9, continue; end")
        out.append("  q = B(i, :);")
        revolute = self.revolute_indices(first=1)
        if revolute:
            out.append(f"  q([{' '.join(map(str, revolute))}]) = atan2(sin(q([{' '.join(map(str, revolute))}])), "
                       f"cos(q([{' '.join(map(str, revolute))}])));")
        out.append("  if isempty(Q) || min(max(abs(Q - q), [], 2)) > 1e-7, Q(end + 1, :) = q; end")
        out.append("end")
        out.append("end")
        out += _MATLAB_HELPERS.strip().splitlines()
        return "\n".join(out) + "\n"


_MATLAB_HELPERS = r'''
function v = kr_type1(X, Y)
s = max([abs(X), abs(Y), 1]);
if abs(X) <= 1e-10 * s, if abs(Y) <= 1e-8 * s, v = 0; else, v = []; end, return, end
v = Y / X;
end
function v = kr_type2(X, Y, Z)
rho = hypot(X, Y); s = max([rho, abs(Z), 1]);
if rho <= 1e-10 * s, if abs(Z) <= 1e-8 * s, v = 0; else, v = []; end, return, end
c = Z / rho;
if abs(c) > 1 + 1e-9, v = []; return, end
c = max(-1, min(1, c)); phi = atan2(X, Y); delta = acos(c);
if delta < 1e-12, v = phi; else, v = [phi + delta, phi - delta]; end
end
function v = kr_type3(C)
A = C(:, 1:2); sv = svd(A);
if sv(1) > 0 && sv(end) > 1e-7 * sv(1), x = A \ C(:, 3); v = atan2(x(1), x(2)); return, end
[~, b] = max(hypot(C(:, 1), C(:, 2))); v = kr_type2(C(b, 1), C(b, 2), C(b, 3));
end
function W = kr_type4(c)
r = sqrt((c(3)^2 + c(6)^2) / (c(1)^2 + c(2)^2)); W = zeros(0, 2);
if r <= 1e-12 * max(1, abs(c(3)) + abs(c(6))), W = [0, 0]; return, end
for s = [r, -r], t = kr_type3([c(1) * s, c(2) * s, c(3); c(4) * s, c(5) * s, c(6)]); W = [W; repmat(s, numel(t), 1), t(:)]; end
end
function W = kr_type5(c)
a = c(4)^2 + c(8)^2; b = 2 * (c(3) * c(4) + c(7) * c(8)); cc = c(3)^2 + c(7)^2 - c(1)^2 - c(2)^2; W = zeros(0, 2);
if abs(a) <= 1e-10 * max([abs(b), abs(cc), 1]), roots_ = kr_type1(b, -cc);
else, d = b^2 - 4 * a * cc; if d < -1e-9 * max([b^2, abs(4 * a * cc), 1]), return, end
  d = sqrt(max(d, 0)); roots_ = [(-b + d) / (2 * a), (-b - d) / (2 * a)]; end
for r = roots_, t = kr_type3([c(1), c(2), c(3) + c(4) * r; c(5), c(6), c(7) + c(8) * r]); W = [W; repmat(r, numel(t), 1), t(:)]; end
end
'''


_JULIA_HELPERS = """
function kr_type1(X, Y)
    if abs(X) <= 1e-10 * max(abs(X), abs(Y), 1.0)
        return abs(Y) <= 1e-8 * max(abs(Y), 1.0) ? [0.0] : Float64[]
    end
    return [Y / X]
end

function kr_type2(X, Y, Z)
    rho = hypot(X, Y)
    if rho <= 1e-10 * max(rho, abs(Z), 1.0)
        return abs(Z) <= 1e-8 * max(abs(Z), 1.0) ? [0.0] : Float64[]
    end
    c = Z / rho
    if abs(c) > 1.0 + 1e-9
        return Float64[]
    end
    c = max(-1.0, min(1.0, c))
    phi, delta = atan(X, Y), acos(c)
    return delta < 1e-12 ? [phi] : [phi + delta, phi - delta]
end

# least squares on all the rows X S + Y C = Z; dependent rows: a type 2
function kr_type3(rows)
    a = sum(r[1] * r[1] for r in rows); b = sum(r[1] * r[2] for r in rows)
    d = sum(r[2] * r[2] for r in rows)
    e = sum(r[1] * r[3] for r in rows); f = sum(r[2] * r[3] for r in rows)
    dt = a * d - b * b
    if dt > 1e-14 * max(a * d, 1e-300)
        return [atan((d * e - b * f) / dt, (a * f - b * e) / dt)]
    end
    return kr_type2(kr_best(rows, r -> hypot(r[1], r[2]))...)
end

function kr_type4(X1, Y1, Z1, X2, Y2, Z2)
    r = sqrt((Z1 * Z1 + Z2 * Z2) / (X1 * X1 + Y1 * Y1))
    if r <= 1e-12 * max(1.0, abs(Z1) + abs(Z2))
        return [(0.0, 0.0)]
    end
    return Tuple{Float64, Float64}[(s, t) for s in (r, -r) for t in kr_type3([(X1 * s, Y1 * s, Z1), (X2 * s, Y2 * s, Z2)])]
end

function kr_type5(X1, Y1, Z1, W1, X2, Y2, Z2, W2)
    a = W1 * W1 + W2 * W2; b = 2 * (Z1 * W1 + Z2 * W2); c = Z1 * Z1 + Z2 * Z2 - X1 * X1 - Y1 * Y1
    if abs(a) <= 1e-10 * max(abs(b), abs(c), 1.0)
        roots = kr_type1(b, -c)
    else
        disc = b * b - 4 * a * c
        if disc < -1e-9 * max(b * b, abs(4 * a * c), 1.0)
            return Tuple{Float64, Float64}[]
        end
        disc = sqrt(max(disc, 0.0))
        roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    end
    return Tuple{Float64, Float64}[(r, t) for r in roots for t in kr_type3([(X1, Y1, Z1 + W1 * r), (X2, Y2, Z2 + W2 * r)])]
end

# the first candidate of largest key(c), as Python's max(cands, key=key)
kr_best(cands, key) = cands[argmax([key(c) for c in cands])]

# solutions apart by more than 1e-7 (revolute joints modulo 2 pi)
function kr_unique(solutions, revolute)
    kept = Vector{Vector{Float64}}()
    gap(q, s) = maximum(k in revolute ? abs(rem2pi(q[k] - s[k], RoundNearest)) : abs(q[k] - s[k]) for k in eachindex(q))
    for q in solutions
        if all(s -> gap(q, s) > 1e-7, kept)
            push!(kept, q)
        end
    end
    return kept
end
"""

#: How each step's candidates are reduced to one call, in Julia: (pick a row by, solver, values it gives).
_JULIA_STEPS = {
    "type1": ("abs(c[1])", "kr_type1", "v"),
    "type2": ("hypot(c[1], c[2])", "kr_type2", "v"),
    "type4": ("c[1]^2 + c[2]^2", "kr_type4", "(a, b)"),
    "type5": ("c[1]^2 + c[2]^2", "kr_type5", "(a, b)"),
}


class _Julia(_Writer):
    """The Python writer's steps in Julia (1-based indices), helpers prefixed ``kr_``."""

    def code(self, e):
        from kanerobot.codegen.julia import JuliaPrinter

        return JuliaPrinter().doprint(sympy.sympify(e))

    def text(self):
        from kanerobot.codegen.julia import docstring_line

        out = ['"""', f"    {self.name}(T, p; tol=1e-9)", ""]
        out += [docstring_line(line) for line in self.header_lines()]
        out += ["T: 4x4 matrix; returns a Vector of joint vectors.", '"""', f"function {self.name}(T, p; tol=1e-9)"]
        out += [f"    {nm} = Float64(T[{k // 4 + 1}, {k % 4 + 1}])" for k, nm in enumerate(POSE_NAMES)]
        out += [f"    {s} = Float64(p[{k + 1}])" for k, s in enumerate(self.params)]
        out.append(f"    branches = [zeros({self.nj})]")
        unpack = "        " + "; ".join(f"{s} = q[{k + 1}]" for k, s in enumerate(self.joints))
        for n, st in enumerate(self.steps, 1):
            idx = [self.joints.index(u) + 1 for u in st.unknowns]
            off = f" - {st.offset}" if st.offset is not None else ""
            out.append(f"    # step {n}: {', '.join(map(str, st.unknowns))} by {st.kind}")
            out += ["    grown = Vector{Vector{Float64}}()", "    for q in branches", unpack]
            out.append("        cands = [" + ", ".join("(" + ", ".join(self.code(c) for c in cand) + ",)" for cand in st.candidates) + "]")
            if st.kind == "type3":
                values, call = "v", "kr_type3(cands)"
            else:
                key, solver, values = _JULIA_STEPS.get(st.kind, _JULIA_STEPS["type2"])
                call = f"{solver}(kr_best(cands, c -> {key})...)"
            out.append(f"        for {values} in {call}")
            if values == "v":
                out.append(f"            r = copy(q); r[{idx[0]}] = v{off if st.kind != 'type1' else ''}; push!(grown, r)")
            else:
                out.append(f"            r = copy(q); r[{idx[0]}] = a; r[{idx[1]}] = b; push!(grown, r)")
            out += ["        end", "    end", "    branches = grown"]
        revolute = self.revolute_indices(first=1)
        out.append(f"    revolute = ({', '.join(map(str, revolute))}{',' if len(revolute) == 1 else ''})")
        out += ["    solutions = Vector{Vector{Float64}}()", "    for q in branches", unpack]
        entries = [self.code(self.fk[r, c]) + f" - {POSE_NAMES[4 * r + c]}" for r in range(3) for c in range(4)]
        out.append("        err = maximum(abs, (" + ", ".join(entries) + "))")
        out.append("        if err <= tol")
        out.append("            push!(solutions, [k in revolute ? rem2pi(v, RoundNearest) : v for (k, v) in enumerate(q)])")
        out += ["        end", "    end", "    return kr_unique(solutions, revolute)", "end"]
        return "\n".join(out) + "\n" + _JULIA_HELPERS
