"""Programs of intermediate variables: numbers checked against independent paths."""

import numpy
import pytest
import sympy

from kanerobot.errors import ParameterError
from kanerobot.robot.expressions import parse_expression
from kanerobot.robot.joints import kk_transform, rot_x, rot_z
from kanerobot.symbolic import NameCollisionError, Program, count_ops, format_program, simplify_trig_products

PI = sympy.pi
TH = sympy.symbols("th1:7")
D3, RL4 = sympy.symbols("D3 RL4")
# Staubli RX-90 (OpenSYMORO RX90.par): alpha, d, r of frames 1..6.
RX90 = [(0, 0, 0), (PI / 2, 0, 0), (0, D3, 0), (-PI / 2, 0, RL4), (PI / 2, 0, 0), (-PI / 2, 0, 0)]
ARGS = list(TH) + [D3, RL4]


def rx90_program(trig, compound="products"):
    """0T6 of the RX-90 as a program: T <- T * jT(j+1), every element assigned."""
    p = Program(inputs=ARGS, trig=trig, compound=compound)
    T = None
    for j, (alpha, d, r) in enumerate(RX90, start=1):
        Tj = p.replace_sin_cos(kk_transform(0, 0, alpha, d, TH[j - 1], r))
        T = Tj if T is None else p.assign_matrix(f"U{j}" + "{i}{j}", T * Tj)
    p.set_output_matrix("T{i}{j}", T[:3, :])
    p.prune()
    return p


def rx90_plain():
    T = sympy.eye(4)
    for theta, (alpha, d, r) in zip(TH, RX90):
        T = T * kk_transform(0, 0, alpha, d, theta, r)
    return T[:3, :]


def random_values(rng, n=25):
    angles = rng.uniform(-numpy.pi, numpy.pi, size=(6, n))
    lengths = rng.uniform(0.1, 2.0, size=(2, n))
    return list(angles) + list(lengths)


def total(counts):
    return counts["add"] + counts["mul"] + counts["fn"]


# ---------------------------------------------------------------- (a) numbers


@pytest.mark.parametrize("trig, compound", [(False, "products"), (True, "products"), (True, "angle")])
def test_rx90_program_matches_plain_product(trig, compound):
    p = rx90_program(trig, compound)
    values = random_values(numpy.random.default_rng(4))
    got = p.to_function(ARGS)(*values)
    want = sympy.lambdify(ARGS, list(rx90_plain()), "numpy")(*values)
    want = numpy.array(numpy.broadcast_arrays(*want), dtype=float)
    assert got.shape == (12, 25)
    assert numpy.max(numpy.abs(got - want)) < 1e-12


def test_substitute_back_matches_plain_product():
    p = rx90_program(True)
    back = p.substitute_back()
    plain = list(rx90_plain())
    assert list(back) == [f"T{i}{j}" for i in range(1, 4) for j in range(1, 5)]
    f_back = sympy.lambdify(ARGS, list(back.values()), "numpy")
    f_plain = sympy.lambdify(ARGS, plain, "numpy")
    for values in numpy.random.default_rng(5).uniform(-2, 2, size=(5, 8)):
        assert numpy.allclose(f_back(*values), f_plain(*values), rtol=0, atol=1e-12)


def test_compound_angles_of_the_parallel_joints():
    p = rx90_program(True)
    defs = {sym.name: expr for sym, expr in p.assignments()}
    C2, S2, C3, S3 = sympy.symbols("C2 S2 C3 S3")
    # RX90_jac.txt convention: cos(th2 + th3) = -sin(th2)*sin(th3) + cos(th2)*cos(th3).
    assert defs["C23"] == C2 * C3 - S2 * S3
    assert defs["S23"] == S2 * C3 + C2 * S3
    # Axes 2 and 3 are parallel (alpha3 = 0): the third row of 0T3 is S23, C23
    # themselves, so it needs no assignment of its own.
    assert "U331" not in defs and "U332" not in defs
    assert "C23" in format_program(p) and "C234" not in format_program(p)


def test_planar_chain_gives_nested_compound_angles():
    n = 8
    th, L = sympy.symbols(f"q1:{n + 1}"), sympy.symbols(f"L1:{n + 1}")
    p = Program(inputs=list(th) + list(L), trig=True)
    T = None
    for j in range(n):
        Tj = p.replace_sin_cos(kk_transform(0, 0, 0, L[j], th[j], 0))
        T = Tj if T is None else p.assign_matrix(f"U{j + 1}_" + "{i}{j}", T * Tj)
    p.set_output("X", T[0, 3])
    p.set_output("C", T[0, 0])
    p.prune()
    assert p.outputs["C"] == sympy.Symbol("C12345678")
    values = numpy.random.default_rng(6).uniform(-2, 2, size=2 * n)
    q, lengths = values[:n], values[n:]
    x = sum(lengths[k] * numpy.cos(q[:k].sum()) for k in range(n))
    got = p.to_function()(*values)
    assert abs(got[0] - x) < 1e-12 and abs(got[1] - numpy.cos(q.sum())) < 1e-12


# ------------------------------------------------------------ (b) op counts

a, b, c, d, e, x = sympy.symbols("a b c d e x")
FS1, FV1, IA1, QP1, QDP1, N31 = sympy.symbols("FS1 FV1 IA1 QP1 QDP1 N31")

# Counted by hand: (adds, muls, functions).
HAND_COUNTS = [
    (a * b * c, (0, 2, 0)),
    (a / b, (0, 1, 0)),
    (1 / (a * b), (0, 2, 0)),
    (a - b, (1, 0, 0)),
    (-a - b, (1, 0, 0)),
    (-a * b, (0, 1, 0)),
    (2 * a, (0, 1, 0)),
    (a / 2, (0, 1, 0)),
    (x**2, (0, 1, 0)),
    (x**3, (0, 2, 0)),
    (x**-2, (0, 2, 0)),
    (a * b + c * d - e, (2, 2, 0)),
    (sympy.cos(a) * sympy.sin(b), (0, 1, 2)),
    (sympy.sqrt(a + b), (1, 0, 1)),
    # GAM1 of RX90_idm.txt: FS1*sign(QP1) + FV1*QP1 + IA1*QDP1 + N31.
    (FS1 * sympy.sign(QP1) + FV1 * QP1 + IA1 * QDP1 + N31, (3, 3, 1)),
]


@pytest.mark.parametrize("expr, expected", HAND_COUNTS, ids=[str(h[0]) for h in HAND_COUNTS])
def test_count_ops_by_hand(expr, expected):
    counts = count_ops(expr)
    assert (counts["add"], counts["mul"], counts["fn"]) == expected


def test_program_counts_the_recorded_lines_not_the_expansion():
    p = Program(inputs=[a, b, c])
    u = p.assign("U", a + b)  # 1 add
    v = p.assign("V", u * c)  # 1 mul
    p.set_output("Y", v**2 + v)  # 1 mul, 1 add
    assert p.op_count() == {"add": 2, "mul": 2, "fn": 0}
    # The same thing written out once costs more.
    assert count_ops(p.substitute_back()["Y"]) == {"add": 3, "mul": 4, "fn": 0}


def test_program_counts_newton_euler_lines():
    th2, QP2, WI22 = sympy.symbols("th2 QP2 WI22")
    p = Program(inputs=[th2, QP1, QDP1, QP2, WI22])
    _C2, S2 = p.sin_cos(th2, "2")  # 2 functions
    wi12 = p.assign("WI12", QP1 * S2)  # 1 mul
    p.set_output("WP12", QDP1 * S2 + QP2 * WI22)  # 1 add, 2 mul
    p.set_output("DV12", wi12**2)  # 1 mul
    assert p.op_count() == {"add": 1, "mul": 4, "fn": 1}  # C2 is dead code


# ------------------------------------------------- (c) trig rules save work


def test_trig_rules_make_the_rx90_program_shorter():
    naive, trig = rx90_program(False).op_count(), rx90_program(True).op_count()
    message = f"with trig rules {trig}, naive product {naive}"
    assert trig["mul"] < naive["mul"] and trig["add"] < naive["add"], message
    assert total(trig) < total(naive), message
    # Both are far below the product written as one expression per element.
    plain = sum(total(count_ops(expr)) for expr in rx90_plain())
    assert total(naive) < plain, f"naive program {naive}, plain product {plain} operations"


def test_sin_squared_plus_cos_squared():
    th1 = sympy.Symbol("th1")
    p = Program(inputs=[th1, a, b])
    C1, S1 = p.sin_cos(th1, "1")
    assert simplify_trig_products(C1**2 + S1**2, p) == 1
    assert simplify_trig_products(a * b * C1**2 + a * b * S1**2 + a, p) == a * b + a
    assert simplify_trig_products(-2 * C1**2 - 2 * S1**2, p) == -2
    # Only equal coefficients merge: 2*C1**2 + S1**2 stays.
    assert simplify_trig_products(2 * C1**2 + S1**2, p) == 2 * C1**2 + S1**2


def test_rotation_times_its_transpose_is_exactly_identity():
    th1, th2 = sympy.symbols("th1 th2")
    p = Program(inputs=[th1, th2], trig=True)
    R = p.replace_sin_cos(rot_z(th1) * rot_x(PI / 2) * rot_z(th2))
    R = p.assign_matrix("R", R)
    assert p.assign_matrix("Q", R.T * R) == sympy.eye(3)


def test_negated_compound_patterns():
    th1, th2 = sympy.symbols("th1 th2")
    p = Program(inputs=[th1, th2, a])
    C1, S1 = p.sin_cos(th1, "1")
    C2, S2 = p.sin_cos(th2, "2")
    C12, S12 = sympy.symbols("C12 S12")
    assert simplify_trig_products(-C1 * C2 + S1 * S2, p) == -C12
    assert simplify_trig_products(-a * S1 * C2 - a * C1 * S2, p) == -a * S12
    # Differences of angles are not recognised.
    assert simplify_trig_products(C1 * C2 + S1 * S2, p) == C1 * C2 + S1 * S2


# ------------------------------------------------------------ (d) dead code


def test_dead_code_is_dropped():
    p = Program(inputs=[a, b, c])
    u = p.assign("U", a * b)
    dead = p.assign("DEAD", a + c)
    p.assign("DEADER", dead * b)  # only used by nothing
    p.set_output("Y", u + c)
    assert len(p) == 3 and [s.name for s, _ in p.assignments()] == ["U"]
    text = format_program(p)
    assert "DEAD" not in text and "Y = U + c" in text
    assert "DEAD" not in p.to_function().source
    assert p.op_count() == {"add": 1, "mul": 1, "fn": 0}
    assert p.prune() == 2 and len(p) == 1
    with pytest.raises(ValueError, match="prune"):
        p.assign("Z", dead * 2)


def test_rx90_program_has_no_dead_assignment():
    p = rx90_program(True)
    used = set()
    for _, expr in p.assignments():
        used |= expr.free_symbols
    for expr in p.outputs.values():
        used |= expr.free_symbols
    assert all(sym in used for sym, _ in p.assignments())


# ---------------------------------------------- (e) zeros and ones propagate


def test_alpha_quarter_turn_gives_exact_zeros_and_ones():
    p = Program(inputs=[TH[1]])
    T = p.replace_sin_cos(kk_transform(0, 0, PI / 2, 0, TH[1], 0))
    C2, S2 = sympy.symbols("C2 S2")
    assert T == sympy.Matrix([[C2, -S2, 0, 0], [0, 0, -1, 0], [S2, C2, 0, 0], [0, 0, 0, 1]])
    assert [s.name for s, _ in p.assignments()] == ["C2", "S2"]
    assert p.sin_cos(PI / 2, "A2") == (0, 1) and p.sin_cos(-PI / 2, "A4") == (0, -1)
    assert p.sin_cos(TH[1] + PI, "x") == (-C2, -S2) and len(p) == 2


def test_zero_terms_vanish_while_generating():
    p = Program(inputs=ARGS)
    assert p.assign("Z", 0 * D3 + RL4 * 0) == 0
    assert p.assign("O", sympy.cos(0) * 1) == 1
    assert p.assign("M", -D3 * 1) == -D3
    assert len(p) == 0
    # The RX-90 program never sees pi, nor a sin or cos of an alpha.
    for _, expr in rx90_program(True).assignments():
        assert not expr.has(PI)
        assert all(fn.args[0] in TH for fn in expr.atoms(sympy.sin, sympy.cos))


def test_same_expression_is_assigned_once():
    p = Program(inputs=[a, b])
    u = p.assign("U", a * b + 1)
    assert p.assign("V", a * b + 1) == u
    assert p.assign("W", -a * b - 1) == -u
    assert len(p) == 1


# --------------------------------------------------- (f) name collisions


def test_names_of_inputs_are_not_reused():
    th1, user_C1 = sympy.symbols("th1 C1")
    p = Program(inputs=[th1, user_C1])
    c, s = p.sin_cos(th1, "1")
    assert c.name == "C1_1" and s.name == "S1"
    p.set_output("Y", c + user_C1)
    assert "C1_1 = cos(th1)" in format_program(p)
    assert p.to_function()(0.0, 5.0)[0] == pytest.approx(6.0)
    strict = Program(inputs=[th1, user_C1], on_collision="raise")
    with pytest.raises(NameCollisionError, match="C1"):
        strict.sin_cos(th1, "1")


def test_reserved_and_invalid_names():
    p = Program(inputs=[a], reserved=["T11"])
    assert p.assign("pi", a * 3).name == "pi_1"
    assert p.assign("T11", a * 2).name == "T11_1"
    assert p.set_output("a", a + 1) == "a_1"
    with pytest.raises(NameCollisionError):
        p.assign("1x", a + 2)
    with pytest.raises(NameCollisionError):
        Program(inputs=[a], on_collision="raise").set_output("a", a + 1)


def test_python_keywords_and_odd_inputs_still_evaluate():
    odd = sympy.Symbol("q(t)")
    p = Program(inputs=[odd, a])
    lam = p.assign("lambda", odd * a)
    p.set_output("abs", lam + 1)
    assert p.to_function()(2.0, 3.0)[0] == pytest.approx(7.0)


# --------------------------------------------------------------- evaluation


def test_printed_equations_read_back_to_the_same_numbers():
    p = rx90_program(True)
    text = format_program(p, title="Fast geometric model of RX90")
    lines = text.splitlines()
    assert lines[:3] == ["Fast geometric model of RX90", "", "Equations:"]
    assert lines[3] == "C1 = cos(th1)" and lines[-1].startswith("Number of operations : 21 '+' or '-'")
    values = dict(zip(ARGS, numpy.random.default_rng(7).uniform(-2, 2, size=8)))
    env = {sympy.Symbol(str(k)): v for k, v in values.items()}
    for line in lines[3:-2]:
        name, rhs = line.split(" = ")
        env[sympy.Symbol(name)] = float(parse_expression(rhs).xreplace(env))
    got = p.to_function(ARGS)(*values.values())
    assert numpy.allclose(got, [env[sympy.Symbol(f"T{i}{j}")] for i in range(1, 4) for j in range(1, 5)], atol=1e-12)


def test_to_function_checks_its_arguments():
    p = Program(inputs=[a, b])
    p.set_output("Y", p.assign("U", a * b) + 1)
    with pytest.raises(ParameterError, match="b"):
        p.to_function([a])
    f = p.to_function([b, a])
    assert f.args == (b, a) and f.outputs == ("Y",)
    assert f(2.0, numpy.array([1.0, 3.0])).tolist() == [[3.0, 7.0]]


def test_vectors_build_the_expressions_sympy_builds():
    """product, summed, negated and matmul skip sympy's general flattening for plain products: the
    objects they return must be sympy's own (same type, arguments in the same order, same hash), or
    the programs' common subexpressions would be missed."""
    from kanerobot.symbolic.vectors import matmul, negated, product, summed

    rng = numpy.random.default_rng(0)
    pool = list(sympy.symbols("a b c XX1 S2 C2 E11 N3_2 QP4 zz")) + [sympy.Dummy("d")]
    numbers = [sympy.S.NegativeOne, sympy.S(2), sympy.Rational(1, 2), sympy.Float(1.5), sympy.S.Zero, sympy.S.One]

    def same(ours, theirs):
        assert type(ours) is type(theirs) and ours == theirs and ours.args == theirs.args and hash(ours) == hash(theirs)

    def term():
        factors = [pool[k] for k in rng.choice(len(pool), size=rng.integers(1, 4))]
        if rng.random() < 0.4:
            factors.append(numbers[rng.integers(len(numbers))])
        return sympy.Mul(*factors)

    for _ in range(400):
        a, b = (pool + numbers)[rng.integers(len(pool) + len(numbers))], (pool + numbers)[rng.integers(len(pool) + len(numbers))]
        same(product(a, b), a * b)
        terms = [term() for _ in range(rng.integers(1, 5))]
        if rng.random() < 0.2:
            terms.append(-terms[0])  # alike terms: collected by sympy
        same(summed(terms), sympy.Add(*terms))
        same(negated(terms[0]), -terms[0])
    A = sympy.Matrix(3, 3, lambda r, c: [0, 1, -1, pool[r + c]][(r * c) % 4])
    B = sympy.Matrix(3, 2, lambda r, c: pool[r + 3 * c] if (r + c) % 3 else 0)
    for ours, theirs in zip(matmul(A, B), A * B):
        same(ours, theirs)


def test_vectors_products_with_a_sum_and_sums_with_zeros_are_sympys():
    """A plain product times a sum (the Coriolis matrix's ``HQP1*(dN_a - dN_b)``), sums of such products
    and sums with exact zeros (a chain rule's zero products) skip sympy's flattening too: they must be
    sympy's own expressions, argument for argument, distributed where sympy distributes (a number times
    a sum), collected where it collects, and with a Float left to sympy."""
    from kanerobot.symbolic.vectors import product, sum_of_products, summed

    rng = numpy.random.default_rng(3)
    pool = list(sympy.symbols("a b c HQP1 dN31_2 S2")) + [sympy.Symbol("p", positive=True), sympy.Dummy("d")]
    numbers = [sympy.S.One, sympy.S.NegativeOne, sympy.S(2), sympy.Rational(-1, 3)]

    def same(ours, theirs):
        assert type(ours) is type(theirs) and ours == theirs and ours.args == theirs.args and hash(ours) == hash(theirs)

    def plain(size):
        return numbers[rng.integers(len(numbers))] * sympy.Mul(*(pool[k] for k in rng.choice(len(pool), size=size)))

    sums = 0
    for _ in range(400):
        total = sympy.Add(*(plain(rng.integers(1, 3)) for _ in range(rng.integers(2, 4)))) + [0, 0, 1, sympy.Float(0.5)][rng.integers(4)]
        sums += total.is_Add
        for a in (plain(rng.integers(0, 3)), total):
            same(product(a, total), a * total)
            same(product(total, a), total * a)
        pairs = [(plain(rng.integers(0, 3)), [total, plain(1), sympy.S.Zero][rng.integers(3)]) for _ in range(rng.integers(1, 5))]
        same(sum_of_products(pairs), sympy.Add(*(a * b for a, b in pairs)))
        terms = [product(a, b) for a, b in pairs] + [sympy.S.Zero] * int(rng.integers(0, 2))
        same(summed(terms), sympy.Add(*terms))
    assert sums > 300  # the sums are sums, not numbers or single terms
    x, y = sympy.symbols("x y")
    same(product(sympy.S(2), x + y), sympy.Add(2 * x, 2 * y))  # a number is distributed, as sympy does
    same(product(-x, x + y), sympy.Mul(sympy.S.NegativeOne, x, sympy.Add(x, y), evaluate=False))


def test_programs_display_as_latex_in_notebooks(monkeypatch):
    """Program._repr_latex_ (what Jupyter shows): one aligned line per assignment and output,
    in LaTeX with SYMORO's names whole, and a count of what is left out past LATEX_LINES."""
    import kanerobot as kr
    from kanerobot.robot.expressions import latex_expression

    program = kr.derive(kr.load(kr.frames_path("planar2"))).program("h")
    text = program._repr_latex_()
    assert text.startswith("$\\begin{aligned}") and text.endswith("\\end{aligned}$")
    lines = text[len("$\\begin{aligned}") : -len("\\end{aligned}$")].split(" \\\\\n")
    expected = list(program.assignments()) + [(sympy.Symbol(name), expr) for name, expr in program.output_lines()]
    assert lines == [f"{latex_expression(s)} &= {latex_expression(e)}" for s, e in expected]
    assert "\\mathrm{QP1}" in text and "QP_{1}" not in text
    monkeypatch.setattr(Program, "LATEX_LINES", 2)
    short = program._repr_latex_().split(" \\\\\n")
    assert len(short) == 3 and short[2].startswith(f"&\\text{{... {len(expected) - 2} more lines")
