"""Forward-mode derivatives of programs: numbers checked against sympy.diff and finite differences."""

import re

import pytest
import sympy
from conftest import library
from conftest import program_outputs as evaluate

from kanerobot.symbolic import Program
from kanerobot.symbolic.derivative import ForwardMode, differentiate, time_derivative

X, Y, Z, A, B = sympy.symbols("x y z a b")


def sample_program():
    """Sums, products, quotients, powers, sqrt, atan2, trig symbols, a constant part."""
    p = Program(inputs=[X, Y, Z, A, B])
    cx, sx = p.sin_cos(X, "x")
    cy, sy = p.sin_cos(Y, "y")
    u = p.assign("U", A * cx * sy + B * sx)
    v = p.assign("V", u**2 / (1 + Z**2))
    w = p.assign("W", sympy.sqrt(v + A**2) * cy)
    k = p.assign("K", A * B + 3)
    r = p.assign("R", sympy.atan2(w, 1 + v) - u * k)
    p.set_output("Y1", p.assign("Y1", w * k + u))
    p.set_output("Y2", v - Z * k)
    p.set_output("Y3", k)
    p.set_output("Y4", r * cx + sympy.cos(X + Y))
    return p


def random_point(rng, names=("x", "y", "z", "a", "b")):
    return {name: float(rng.uniform(-1.5, 1.5)) for name in names}


def derivative_names(program, suffix):
    return {s.name for s, _ in program.assignments() if s.name.startswith("d") and s.name.endswith(suffix)}


# ------------------------------------------------------------------ numbers


def test_partial_derivatives_match_sympy_diff(rng):
    p = sample_program()
    d = differentiate(p, [X, Y, Z, A])
    plain = p.substitute_back()
    want = {f"d{name}_d{x}": sympy.diff(expr, x) for name, expr in plain.items() for x in (X, Y, Z, A)}
    assert list(d.outputs) == list(want)
    for _ in range(5):
        point = random_point(rng)
        got = evaluate(d, point)
        for name, expr in want.items():
            assert got[name] == pytest.approx(float(expr.subs(point)), rel=1e-10, abs=1e-12), name


def test_partial_derivatives_match_finite_differences(rng):
    p = sample_program()
    d = differentiate(p, ["x", "z", "b"])  # names are accepted too
    h = 1e-6
    for _ in range(3):
        point = random_point(rng)
        got = evaluate(d, point)
        for x in ("x", "z", "b"):
            up, down = dict(point), dict(point)
            up[x] += h
            down[x] -= h
            fu, fd = evaluate(p, up), evaluate(p, down)
            for name in p.outputs:
                assert got[f"d{name}_d{x}"] == pytest.approx((fu[name] - fd[name]) / (2 * h), rel=1e-6, abs=1e-7)


def test_time_derivative_matches_chain_rule_and_finite_differences(rng):
    p = sample_program()
    qd = sympy.symbols("QPx QPy QPz")
    d = time_derivative(p, [X, Y, Z], qd)
    assert list(d.outputs) == [f"d{name}_dt" for name in p.outputs]
    assert [s.name for s in d.inputs[-3:]] == ["QPx", "QPy", "QPz"]
    plain = p.substitute_back()
    h = 1e-6
    for _ in range(3):
        point = random_point(rng)
        rates = {"QPx": 0.7, "QPy": -1.3, "QPz": 0.4}
        got = evaluate(d, {**point, **rates})
        up = {**point, **{k: point[k] + h * rates[f"QP{k}"] for k in "xyz"}}
        down = {**point, **{k: point[k] - h * rates[f"QP{k}"] for k in "xyz"}}
        fu, fd = evaluate(p, up), evaluate(p, down)
        for name, expr in plain.items():
            chain = sum(sympy.diff(expr, s) * r for s, r in zip((X, Y, Z), qd))
            want = float(chain.subs(point).subs({sympy.Symbol(k): v for k, v in rates.items()}))
            assert got[f"d{name}_dt"] == pytest.approx(want, rel=1e-10, abs=1e-12)
            assert got[f"d{name}_dt"] == pytest.approx((fu[name] - fd[name]) / (2 * h), rel=1e-6, abs=1e-7)


def test_time_derivative_with_a_customised_zero_velocity(rng):
    p = sample_program()
    d = time_derivative(p, [X, Y], [sympy.Symbol("QPx"), 0])
    assert "QPy" not in {s.name for s in d.inputs}
    plain = p.substitute_back()
    point = random_point(rng)
    got = evaluate(d, {**point, "QPx": 0.9})
    for name, expr in plain.items():
        assert got[f"d{name}_dt"] == pytest.approx(float((sympy.diff(expr, X) * 0.9).subs(point)), rel=1e-10, abs=1e-12)


# ---------------------------------------------------------- zero propagation


def test_a_program_not_depending_on_x_has_no_derivative_lines():
    p = Program(inputs=[X, A, B])
    u = p.assign("U", A * B + 1)
    p.set_output("Y", p.assign("Y", u * sympy.cos(A)))
    p.set_output("Z", u**2)
    d = differentiate(p, [X])
    assert d.outputs == {"dY_dx": 0, "dZ_dx": 0}
    assert d.assignments() == []
    assert d.op_count() == {"add": 0, "mul": 0, "fn": 0}
    assert differentiate(p, [X], zeros=False).outputs == {}
    # A symbol the program never reads behaves the same.
    assert differentiate(p, [sympy.Symbol("w")]).outputs == {"dY_dw": 0, "dZ_dw": 0}


def test_only_the_variables_that_depend_on_x_get_a_line():
    p = Program(inputs=[X, Y, A, B])
    cy, sy = p.sin_cos(Y, "y")
    k = p.assign("K", A * B * cy)  # y only
    u = p.assign("U", A * X**2)  # x only
    v = p.assign("V", u * k + sy)  # both
    w = p.assign("W", k**2 + B)  # y only
    p.set_output("V", v)
    p.set_output("W", w)
    d = differentiate(p, [X, Y])
    assert derivative_names(d, "_dx") == {"dU_dx", "dV_dx"}
    assert derivative_names(d, "_dy") == {"dK_dy", "dV_dy", "dW_dy"}
    assert d.outputs["dW_dx"] == 0
    assert d.definition(sympy.Symbol("dK_dy")) == -A * B * sympy.Symbol("Sy")


def test_cancelling_derivatives_are_not_recorded():
    p = Program(inputs=[X, A])
    u = p.assign("U", A * X)
    p.set_output("Y", p.assign("Y", u - A * X + A**2 * u))
    d = differentiate(p, [X])
    # dU/dx = a is trivial; dY/dx = a - a + a**2*a: only one line.
    assert [s.name for s, _ in d.assignments()] == ["dY_dx"]
    assert sympy.simplify(d.substitute_back()["dY_dx"] - A**3) == 0


# ------------------------------------------------------------- trig symbols


def test_derivatives_of_sin_cos_reuse_the_partner_symbol():
    th1, L = sympy.symbols("th1 L")
    p = Program(inputs=[th1, L])
    c1, s1 = p.sin_cos(th1, "1")
    p.set_output("PX", p.assign("PX", L * c1))
    p.set_output("PY", p.assign("PY", L * s1))
    d = differentiate(p, [th1])
    # -L*S1 and L*C1 are the program's own PY and PX: nothing to compute.
    px, py = sympy.symbols("PX PY")
    assert d.outputs == {"dPX_dth1": -py, "dPY_dth1": px}
    assert d.op_count() == {"add": 0, "mul": 2, "fn": 2}
    assert str(differentiate(p, [th1], outputs=["PX"])) == "S1 = sin(th1)\nPY = L*S1\ndPX_dth1 = -PY"


def test_a_sin_cos_pair_half_pruned_is_completed():
    th1, L = sympy.symbols("th1 L")
    p = Program(inputs=[th1, L])
    c1, _ = p.sin_cos(th1, "1")
    p.set_output("PX", L * c1)
    p.prune()  # drops S1, and the angle record with it
    d = differentiate(p, [th1])
    assert str(d) == "S1 = sin(th1)\ndPX_dth1 = -L*S1"


def test_compound_angles_are_differentiated_through_their_angle(rng):
    th = sympy.symbols("th2 th3 th4")
    L = sympy.Symbol("L")
    p = Program(inputs=list(th) + [L], trig=True)
    c2, s2 = p.sin_cos(th[0], "2")
    c3, s3 = p.sin_cos(th[1], "3")
    c4, s4 = p.sin_cos(th[2], "4")
    u = p.assign("U", L * (c2 * c3 - s2 * s3))  # L*C23
    v = p.assign("V", u * c4 - L * (s2 * c3 + c2 * s3) * s4)  # L*C234 after the rules
    p.set_output("PX", v + L * s2)
    label = re.search(r"^C(\d{3}) =", str(p), re.M).group(1)  # the compound of th2, th3, th4
    qd = sympy.symbols("QP2 QP3 QP4")
    d = time_derivative(p, th, qd)
    assert f"dC{label}_dt = -S{label}*(QP2 + QP3 + QP4)" in str(d)
    assert d.op_count()["fn"] == 6  # no new sin or cos
    partial = differentiate(p, [th[1]])
    assert partial.op_count()["fn"] == 6
    # Numbers against the plain expressions.
    plain = p.substitute_back()["PX"]
    point = {s.name: float(rng.uniform(-3, 3)) for s in th} | {"L": 1.3}
    rates = {"QP2": 0.3, "QP3": -0.8, "QP4": 1.1}
    chain = sum(sympy.diff(plain, s) * r for s, r in zip(th, qd))
    values = {sympy.Symbol(k): v for k, v in (point | rates).items()}
    assert evaluate(d, point | rates)["dPX_dt"] == pytest.approx(float(chain.xreplace(values)), rel=1e-12)
    assert evaluate(partial, point)["dPX_dth3"] == pytest.approx(float(sympy.diff(plain, th[1]).xreplace(values)), rel=1e-12)


# ------------------------------------------------------------ names, options


def test_names_follow_the_pattern_and_collisions_get_a_suffix():
    th2, m = sympy.symbols("th2 m")
    p = Program(inputs=[th2, m])
    c2, _ = p.sin_cos(th2, "2")
    p.set_output("A11", p.assign("A11", m * c2 + m**2 * c2**2))
    d = differentiate(p, [th2])
    assert "dA11_dth2" in {s.name for s, _ in d.assignments()}
    assert list(d.outputs) == ["dA11_dth2"]
    d = differentiate(p, [th2], name="D{var}{wrt}")
    assert list(d.outputs) == ["DA11th2"]
    # An input name that is not a program name is cleaned.
    q1 = sympy.Symbol("q[1]")
    p = Program(inputs=[q1, m])
    p.set_output("Y", p.assign("Y", m * q1**3))
    d = differentiate(p, [q1])
    assert list(d.outputs) == ["dY_dq1"]
    # A name already used by the program gets a suffix.
    p = Program(inputs=[X, A])
    u = p.assign("dU_dx", A * X**2)
    p.set_output("U", p.assign("U", u * A + X**3))
    d = differentiate(p, [X])
    assert [s.name for s, _ in d.assignments()] == ["ddU_dx_dx", "dU_dx_1"]
    assert list(d.outputs) == ["dU_dx_1"]
    assert sympy.expand(d.substitute_back()["dU_dx_1"] - (2 * A**2 * X + 3 * X**2)) == 0


def test_options_outputs_keep_outputs_and_errors():
    p = sample_program()
    d = differentiate(p, X, outputs=["Y2"], keep_outputs=True)
    assert list(d.outputs) == ["Y2", "dY2_dx"]
    with pytest.raises(ValueError, match="not outputs"):
        differentiate(p, [X], outputs=["nope"])
    with pytest.raises(ValueError, match="assignment"):
        differentiate(p, [sympy.Symbol("U")])
    with pytest.raises(TypeError):
        differentiate(p, [X + Y])
    with pytest.raises(ValueError, match="entries"):
        time_derivative(p, [X, Y], [1])
    with pytest.raises(ValueError, match="twice"):
        time_derivative(p, [X, X], [1, 2])
    before = str(p)
    differentiate(p, [X, Y])
    assert str(p) == before  # the source program is not modified


def test_forward_mode_shares_work_between_requests():
    p = sample_program()
    fm = ForwardMode(p)
    fm.add_direction("x", {X: 1})
    first = fm.derivative(sympy.Symbol("Y1"), "x")
    count = len(fm.target)
    assert fm.derivative(sympy.Symbol("Y1"), "x") == first
    fm.derivative(sympy.Symbol("W") + sympy.Symbol("U"), "x")
    assert len(fm.target) == count  # W and U were differentiated already
    with pytest.raises(ValueError, match="already"):
        fm.add_direction("x", {X: 2})


# --------------------------------------------- structural partial derivatives


def _every_node(expr):
    yield expr
    for arg in expr.args:
        yield from _every_node(arg)


def structural_partials_equal_sympy_diff(program):
    """Every partial ForwardMode takes, of every node of every line, is
    :func:`sympy.diff`'s expression (not only the same function)."""
    fm = ForwardMode(program)
    checked = 0
    for _, expr in program.assignments(include_dead=True):
        for node in set(_every_node(expr)):
            for x in sorted(node.free_symbols, key=lambda s: s.name):
                assert fm._diff(node, x) == sympy.diff(node, x), (node, x)
                checked += 1
    return checked


def test_partials_are_sympy_diffs_node_for_node():
    p = sample_program()
    # Sums, products, integer, rational and negative powers, sqrt, atan2, cos of a sum, exp.
    p.set_output("Y5", p.assign("Y5", sympy.exp(X) * (A * X - B) ** 3 / sympy.sqrt(Z**2 + 1) + A**-2 * X))
    assert structural_partials_equal_sympy_diff(p) > 50


def test_partials_of_a_dynamic_model_are_sympy_diffs():
    """The velocity forces of the RX-90 by Kane's method (what the Coriolis matrix differentiates)."""
    from kanerobot.dynamics.kane import KaneSystem

    hv = KaneSystem(library("rx90")).velocity_forces()
    assert structural_partials_equal_sympy_diff(hv) > 1000


def test_shared_subexpressions_are_differentiated_once():
    p = Program(inputs=[X, A, B])
    shared = A * sympy.cos(X) + B * X**2
    p.set_output("Y", p.assign("Y", shared * A + shared**2))
    p.set_output("Z", p.assign("Z", shared * B))
    fm = ForwardMode(p)
    fm.add_direction("x", {X: 1})
    calls = []
    diff = sympy.diff

    def counted(expr, *symbols):
        calls.append(expr)
        return diff(expr, *symbols)

    sympy.diff = counted
    try:
        dy = fm.derivative(sympy.Symbol("Y"), "x")
        dz = fm.derivative(sympy.Symbol("Z"), "x")
    finally:
        sympy.diff = diff
    assert calls == [sympy.cos(X)]  # only the function node goes to sympy.diff, once
    target = fm.target
    target.set_output("dY", dy)
    target.set_output("dZ", dz)
    got, plain = target.substitute_back(), p.substitute_back()
    for name in ("Y", "Z"):
        assert sympy.expand(got[f"d{name}"] - sympy.diff(plain[name], X)) == 0


def test_the_chain_rule_sums_are_sympys_sums_of_products(rng):
    """``sum_of_products`` (the chain rule's ``sum df/du * du/dx``) builds sympy's own expression: the same
    arguments in the same order as ``sympy.Add(*[a*b ...])``, for plain products (symbols, with and without
    assumptions, and rational coefficients), products sharing a symbol (powers), sums and ones."""
    from kanerobot.symbolic.vectors import product, sum_of_products

    s = sympy.symbols("C2 S2 dJP1 dJP2 th10 th2 QP1")
    t = sympy.symbols("th1 L", real=True) + (sympy.Symbol("M", positive=True),)
    pool = list(s + t) + [sympy.S.One, sympy.S.NegativeOne, sympy.S(2), sympy.Rational(1, 2), -s[0] * s[2], 2 * s[1] * t[0], s[3] * t[2], s[4] + t[1], s[5] ** 2]
    for _ in range(3000):
        pairs = [(pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]) for _ in range(rng.integers(0, 5))]
        want = sympy.Add(*[a * b for a, b in pairs])
        got = sum_of_products(pairs)
        assert got == want and got.args == want.args and str(got) == str(want), pairs
        for a, b in pairs:
            assert product(a, b).args == (a * b).args
