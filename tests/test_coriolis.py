"""Coriolis matrix in Christoffel form: closed forms, brute-force Christoffel
symbols, and A' - 2C skew-symmetric with A' from finite differences of A;
with a free-flyer root, its Hamel terms against explicit spatial cross
products and C nu against Newton-Euler's velocity terms."""

import re

import numpy
import pytest
import sympy
from conftest import assert_close, corpus_file, derived, library
from conftest import program_outputs as evaluate

from kanerobot.dynamics import newton_euler
from kanerobot.dynamics.composite import mass_matrix
from kanerobot.dynamics.coriolis import coriolis_matrix, half_a_s, hamel_terms
from kanerobot.dynamics.free_flyer import BASE_VELOCITY, QUATERNION
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError
from kanerobot.robot.expressions import parse_expression
from kanerobot.symbolic import Program

# ------------------------------------------------------------------ helpers


def name(prefix, i, j, n):
    return f"{prefix}{i}{j}" if n <= 9 else f"{prefix}{i}_{j}"


def matrix(outputs, prefix, n, symmetric=False):
    M = numpy.zeros((n, n))
    for i in range(n):
        for j in range(n):
            key = name(prefix, min(i, j) + 1, max(i, j) + 1, n) if symmetric else name(prefix, i + 1, j + 1, n)
            M[i, j] = outputs[key]
    return M


def adot_by_finite_differences(A, q, qd_values, values, h=1e-6):
    """d/dt A(q + t qd) at t = 0, central differences of the numeric program."""
    n = len(q)
    up, down = dict(values), dict(values)
    for x, v in zip(q, qd_values):
        up[x.name] = values[x.name] + h * v
        down[x.name] = values[x.name] - h * v
    return (matrix(evaluate(A, up), "A", n, True) - matrix(evaluate(A, down), "A", n, True)) / (2 * h)


def christoffel(A, q, qd):
    """C_ij = sum_k 1/2 (dA_ij/dq_k + dA_ik/dq_j - dA_jk/dq_i) qd_k from the expanded A (brute force)."""
    n = len(q)
    plain = A.substitute_back()
    M = sympy.Matrix(n, n, lambda i, j: plain[name("A", min(i, j) + 1, max(i, j) + 1, n)])
    return sympy.Matrix(
        n,
        n,
        lambda i, j: sum(
            sympy.Rational(1, 2) * (M[i, j].diff(q[k]) + M[i, k].diff(q[j]) - M[j, k].diff(q[i])) * qd[k]
            for k in range(n)
        ),
    )


def random_values(program, rng, low=0.2, high=1.2):
    return {s.name: float(rng.uniform(low, high)) for s in program.inputs}


def check_skew(A, C, q, qd, rng, tol=1e-6):
    """A' - 2C is skew-symmetric, A' by finite differences of A along q + t qd."""
    n = len(q)
    values = random_values(C, rng)
    for x in q:
        values[x.name] = float(rng.uniform(-numpy.pi, numpy.pi))
    for v in qd:
        if v != 0:
            values[v.name] = float(rng.uniform(-2, 2))
    qd_values = [values[v.name] if v != 0 else 0.0 for v in qd]
    Cn = matrix(evaluate(C, values), "C", n)
    N = adot_by_finite_differences(A, q, qd_values, values) - 2 * Cn
    scale = 1 + numpy.abs(N).max()
    assert numpy.abs(N + N.T).max() < tol * scale
    return values, Cn


def four_joint_program():
    """A symmetric A(q) of 4 joints (the last one enters polynomially, like a prismatic joint)."""
    th = sympy.symbols("th1:4")
    r4 = sympy.Symbol("r4")
    p = sympy.symbols("p1:12")
    A = Program(inputs=list(th) + [r4] + list(p), trig=True)
    c1, _s1 = A.sin_cos(th[0], "1")
    c2, s2 = A.sin_cos(th[1], "2")
    c3, s3 = A.sin_cos(th[2], "3")
    u = A.assign("U", p[0] * c2 + p[1] * s3 * c3)
    v = A.assign("V", u * c3 + p[2] * r4)
    w = A.assign("W", v**2 + p[3] * s2 * r4)
    k = A.assign("K", p[4] * r4**2 + 1)
    entries = {
        "A11": A.assign("A11", w + k + p[5]),
        "A12": u * v,
        "A13": p[6] * c1 * s2,  # depends on th1 too
        "A14": v,
        "A22": A.assign("A22", k * w + p[7]),
        "A23": u + p[8] * r4,
        "A24": 0,
        "A33": p[9] + s3**2 * k,
        "A34": c2 * u,
        "A44": p[10] + r4**2,
    }
    for key, value in entries.items():
        A.set_output(key, value)
    return A, list(th) + [r4], list(sympy.symbols("QP1:5"))


# ------------------------------------------------------------ closed forms


def test_planar_2r_matches_the_textbook_christoffel_form():
    robot = library("planar2")
    th1, th2 = robot.q
    QP1, QP2 = robot.qd
    m1, m2, l1, lc1, lc2, I1, I2 = sympy.symbols("m1 m2 l1 lc1 lc2 I1 I2")
    A = Program(inputs=[th1, th2, m1, m2, l1, lc1, lc2, I1, I2])
    c2, _ = A.sin_cos(th2, "2")
    k = A.assign("K", m2 * l1 * lc2)
    d22 = A.assign("D22", m2 * lc2**2 + I2)
    A.set_output("A11", m1 * lc1**2 + m2 * l1**2 + I1 + d22 + 2 * k * c2)
    A.set_output("A12", A.assign("A12", d22 + k * c2))
    A.set_output("A22", d22)
    C = coriolis_matrix(robot, A)
    assert list(C.outputs) == ["C11", "C12", "C21", "C22"]
    assert [s.name for s in C.inputs][-2:] == ["QP1", "QP2"]
    h = -m2 * l1 * lc2 * sympy.sin(th2)
    want = {"C11": h * QP2, "C12": h * (QP1 + QP2), "C21": -h * QP1, "C22": 0}
    got = C.substitute_back()
    for key, value in want.items():
        assert sympy.expand(got[key] - value) == 0, key
    # C qd is the textbook centrifugal and Coriolis vector.
    Cm = sympy.Matrix(2, 2, [got[k] for k in ("C11", "C12", "C21", "C22")])
    vector = Cm * sympy.Matrix([QP1, QP2])
    assert sympy.expand(vector[0] - h * (2 * QP1 * QP2 + QP2**2)) == 0
    assert sympy.expand(vector[1] + h * QP1**2) == 0
    # Only sin(th2) is computed (cos(th2) is not needed by the derivatives).
    assert C.op_count()["fn"] == 1
    assert C.op_count() == coriolis_matrix(None, A, q=[th1, th2], qd=[QP1, QP2]).op_count()


@pytest.mark.parametrize("adot", ["partials", "time"])
def test_four_joints_against_brute_force_christoffel_symbols(adot, rng):
    A, q, qd = four_joint_program()
    C = coriolis_matrix(None, A, q=q, qd=qd, adot=adot)
    assert len(C.outputs) == 16
    brute = sympy.lambdify(list(C.inputs), christoffel(A, q, qd), "numpy")
    for _ in range(3):
        values, Cn = check_skew(A, C, q, qd, rng)
        want = numpy.array(brute(*[values[s.name] for s in C.inputs]), dtype=float)
        assert numpy.allclose(Cn, want, rtol=1e-10, atol=1e-10)


def test_a_customised_zero_velocity_drops_out(rng):
    A, q, qd = four_joint_program()
    qd[1] = sympy.S.Zero
    C = coriolis_matrix(None, A, q=q, qd=qd)
    assert "QP2" not in {s.name for s in C.inputs}
    brute = sympy.lambdify(list(C.inputs), christoffel(A, q, qd), "numpy")
    values, Cn = check_skew(A, C, q, qd, rng)
    assert numpy.allclose(Cn, numpy.array(brute(*[values[s.name] for s in C.inputs]), dtype=float), rtol=1e-10, atol=1e-10)


def test_partial_and_time_forms_cost_what_the_docs_say():
    A, q, qd = four_joint_program()
    counts = {adot: coriolis_matrix(None, A, q=q, qd=qd, adot=adot).op_count() for adot in ("partials", "time")}
    assert sum(counts["partials"].values()) < sum(counts["time"].values())


# --------------------------------------------------------------- structure


def test_more_than_nine_joints_use_underscores(rng):
    n = 10
    q = list(sympy.symbols(f"th1:{n + 1}"))
    qd = list(sympy.symbols(f"QP1:{n + 1}"))
    A = Program(inputs=q)
    cs = [A.sin_cos(x, str(k + 1)) for k, x in enumerate(q)]
    for j in range(1, n + 1):
        for i in range(1, j + 1):
            if i == j:
                value = 3 + cs[j % n][0] / 2
            elif j == i + 1:
                value = cs[i - 1][1] * cs[j - 1][0] / 4
            else:
                value = 0
            A.set_output(f"A{i}_{j}", value)
    C = coriolis_matrix(None, A, q=q, qd=qd)
    names = list(C.outputs)
    assert names[:3] == ["C1_1", "C1_2", "C1_3"] and names[-1] == "C10_10" and len(names) == 100
    assert any(s.name == "CN1_2" for s, _ in C.assignments())
    check_skew(A, C, q, qd, rng)


def test_lower_triangle_names_and_missing_entries():
    th1, th2, a = sympy.symbols("th1 th2 a")
    qd = sympy.symbols("QP1 QP2")
    A = Program(inputs=[th1, th2, a])
    A.set_output("A11", a + sympy.cos(th2))
    A.set_output("A21", a * sympy.cos(th2))
    with pytest.raises(ValueError, match="A22"):
        coriolis_matrix(None, A, q=[th1, th2], qd=qd)
    A.set_output("A22", a)
    C = coriolis_matrix(None, A, q=[th1, th2], qd=qd)
    assert sympy.expand(C.substitute_back()["C11"] + sympy.sin(th2) * qd[1] / 2) == 0
    with pytest.raises(ValueError, match="entries"):
        coriolis_matrix(None, A, q=[th1, th2], qd=qd[:1])
    with pytest.raises(ValueError, match="adot"):
        coriolis_matrix(None, A, q=[th1, th2], qd=qd, adot="other")
    with pytest.raises(ValueError, match="robot"):
        coriolis_matrix(None, A)


def test_no_velocity_line_depends_on_a_joint_the_matrix_ignores():
    """A(q2) only: nothing is differentiated with respect to th1 or th3."""
    th = sympy.symbols("th1:4")
    a = sympy.Symbol("a")
    A = Program(inputs=list(th) + [a])
    c2, s2 = A.sin_cos(th[1], "2")
    A.set_output("A11", a + c2)
    A.set_output("A12", a * s2)
    A.set_output("A22", A.assign("A22", a * c2**2))
    for key in ("A13", "A23", "A33"):
        A.set_output(key, a)
    C = coriolis_matrix(None, A, q=th, qd=sympy.symbols("QP1:4"))
    lines = [s.name for s, _ in C.assignments()]
    assert not any(x.endswith(("_dth1", "_dth3")) for x in lines)


# ------------------------------------------------------------ real robots


def opensymoro_rx90_inertia_matrix():
    """OpenSYMORO's RX90_inm.txt as a program (its A22..A77 are joints 1..6)."""
    text = corpus_file("RX90_inm.txt").read_text().split("Equations:")[1]
    th = sympy.symbols("th1:7")
    A = Program(inputs=th)
    values = {}
    for line in text.splitlines():
        if "=" not in line:
            continue
        lhs, rhs = (part.strip() for part in line.split("=", 1))
        expr = parse_expression(rhs).xreplace(values)
        entry = re.fullmatch(r"A(\d)(\d)", lhs)
        if entry:
            i, j = int(entry.group(1)) - 1, int(entry.group(2)) - 1
            if i >= 1:
                A.set_output(f"A{i}{j}", expr)
            if lhs == "A77":
                break
            continue
        values[sympy.Symbol(lhs)] = A.assign(lhs, expr)
    A.prune()
    return A


def test_opensymoro_rx90_inertia_matrix(rng):
    robot = library("rx90")
    A = opensymoro_rx90_inertia_matrix()
    assert len(A.outputs) == 21
    counts = {}
    for adot in ("partials", "time"):
        C = coriolis_matrix(robot, A, adot=adot)
        counts[adot] = C.op_count()
        check_skew(A, C, list(robot.q), list(robot.qd), rng)
    assert sum(counts["partials"].values()) < sum(counts["time"].values())


def test_rx90_from_the_composite_links_program(rng):
    robot = library("rx90")
    A = mass_matrix(robot)
    C = coriolis_matrix(robot)  # the composite program, imported lazily
    assert C.op_count() == coriolis_matrix(robot, A).op_count()
    for _ in range(2):
        check_skew(A, C, list(robot.q), list(robot.qd), rng)


@pytest.mark.parametrize("robot_name", ["planar2", "rx90"])
def test_c_qd_is_the_newton_euler_coriolis_vector(robot_name, rng):
    """C qd = H - Q (no friction, no wrench) by Khalil's Newton-Euler: an independent path."""
    robot = library(robot_name)
    C = coriolis_matrix(robot)
    H = newton_euler.coriolis_gravity(robot, gravity=False, friction=False, wrench=False)
    n = robot.dof
    values = random_values(C, rng) | random_values(H, rng)
    for x in robot.q:
        values[x.name] = float(rng.uniform(-numpy.pi, numpy.pi))
    qd = numpy.array([float(rng.uniform(-2, 2)) for _ in robot.qd])
    values |= {v.name: float(x) for v, x in zip(robot.qd, qd)}
    Cn = matrix(evaluate(C, values), "C", n)
    h = numpy.array(list(evaluate(H, values).values()))
    assert_close(Cn @ qd, h, what="C qd = H")


# ------------------------------------------------------ the free-flyer root


def motion_cross(V):
    """The 6x6 matrix of ``u -> V x u`` (motion cross product, linear part first):
    ``[w x u_v + v x u_w; w x u_w]``, written from skew blocks."""
    v, w = V[:3], V[3:]

    def skew(a):
        return numpy.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])

    return numpy.block([[skew(w), skew(v)], [numpy.zeros((3, 3)), skew(w)]])


def test_half_a_s_is_half_a_times_the_root_cross_product_and_vanishes_on_nu(rng):
    """``1/2 A S`` with ``S = E ad_V E^T`` built as a numeric matrix (no code
    of kanerobot): equal entry by entry, and ``S nu = 0``."""
    N = 8
    M = rng.normal(size=(N, N))
    A = M @ M.T
    nu = rng.normal(size=N)
    S = numpy.zeros((N, N))
    S[:6, :6] = motion_cross(nu[:6])
    got = numpy.array(half_a_s(sympy.Matrix(A), list(nu)), dtype=float)
    assert numpy.allclose(got, A @ S / 2, rtol=1e-12, atol=1e-12)
    assert numpy.allclose(got @ nu, 0, atol=1e-12)


def test_hamel_terms_keep_a_constant_inertia_skew(rng):
    """A constant ``A`` (a free body and two joints whose inertia does not
    change): the Christoffel part is 0, so ``C`` is the root's contribution
    alone; it must be skew, and ``C nu = E V x* p`` with ``p = (A nu)[:6]``,
    ``V x* = -(V x)^T``."""
    N = 8
    M = rng.normal(size=(N, N))
    A = M @ M.T
    nu = rng.normal(size=N)
    program = Program(inputs=list(BASE_VELOCITY) + list(sympy.symbols("QP1:3")))
    C = hamel_terms(sympy.Matrix(A), list(nu), program)
    C = numpy.array(C.xreplace({s: v for s, v in zip(sympy.symbols("PB1:7"), (A @ nu)[:6])}), dtype=float)
    assert numpy.allclose(C + C.T, 0, atol=1e-10)
    expected = numpy.zeros(N)
    expected[:6] = -motion_cross(nu[:6]).T @ (A @ nu)[:6]
    assert numpy.allclose(C @ nu, expected, atol=1e-10)


def test_floating_robot_from_newton_euler_inertia_matrix(rng):
    """The satellite: its Newton-Euler A leaves out structural zeros (taken as
    0), the root's six speeds come first with no derivative along them, and
    ``C nu`` is Newton-Euler's ``H - Q`` (no friction, no wrench)."""
    robot = library("satellite")
    ne = derived("satellite")
    A = ne.program("mass_matrix")
    N = 6 + robot.nj
    assert len(A.outputs) < N * (N + 1) // 2  # the structural zeros are left out
    C = coriolis_matrix(robot, A)
    assert len(C.outputs) == N * N
    assert [s.name for s in C.inputs][-N:] == [s.name for s in BASE_VELOCITY + tuple(robot.qd)]
    assert not any("_d" + s.name in x.name for x, _ in C.assignments() for s in BASE_VELOCITY)
    values = random_parameters(robot, rng, friction=False, wrench=False, gravity=(1.0, -2.0, -9.0))
    quaternion = rng.normal(size=4)
    values |= {s.name: float(x) for s, x in zip(QUATERNION, quaternion / numpy.linalg.norm(quaternion))}
    values |= {s.name: float(rng.uniform(-numpy.pi, numpy.pi)) for s in robot.q}
    nu = rng.uniform(-2, 2, N)
    values |= {s.name: float(x) for s, x in zip(BASE_VELOCITY + tuple(robot.qd), nu)}
    h = numpy.array(list(evaluate(ne.program("h"), values).values()))
    Q = numpy.array(list(evaluate(ne.program("gravity"), values).values()))
    Cn = matrix(evaluate(C, values), "C", N)
    assert_close(Cn @ nu, h - Q, what="C nu = H - Q")


def test_floating_robot_needs_its_inertia_matrix():
    with pytest.raises(KaneRobotError, match=r"Coriolis matrix of satellite: a floating robot's inertia matrix program must be given"):
        coriolis_matrix(library("satellite"))
