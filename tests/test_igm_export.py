"""Exported inverse geometric models (issue 8): the generated python and C
functions return the same solution set as kanerobot.igm.inverse_geometric;
the MATLAB text has one function per solver and the steps; the Julia text
(issue 25) runs where julia is installed, and its expressions are the Python
export's everywhere."""

import ctypes
import math
import re
import shutil
import subprocess

import numpy
import pytest
from conftest import library

import kanerobot as kr
from kanerobot.igm import numeric as num
from kanerobot.igm.api import derive_igm, inverse_geometric
from kanerobot.igm.export import generate_igm

VALUES = {"D3": 0.45, "RL4": 0.38}
Q = [0.3, -0.7, 1.1, 0.4, -0.9, 2.0]


@pytest.fixture(scope="module")
def rx90():
    robot = library("rx90")
    model = num.ChainModel(robot, "6", VALUES)
    return robot, derive_igm(robot), model.pose(Q), model


def _same_set(a, b):
    revolute = numpy.ones(6, dtype=bool)
    return len(a) == len(b) and all(any(num.joint_distance(numpy.array(x), y, revolute) < 1e-9 for y in b) for x in a)


def test_python_export_matches(rx90):
    robot, igm, T, model = rx90
    namespace = {}
    exec(generate_igm(igm, "python"), namespace)
    sols = namespace["igm_rx90"](T.tolist(), [VALUES["D3"], VALUES["RL4"]])
    assert len(sols) == 8
    assert _same_set(sols, inverse_geometric(robot, T, VALUES))
    assert max(num.pose_distance(model.pose(q), T) for q in sols) < 1e-10


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
def test_c_export_compiles_and_matches(rx90, tmp_path):
    robot, igm, T, _model = rx90
    source = tmp_path / "igm_rx90.c"
    source.write_text(generate_igm(igm, "c"))
    shared = tmp_path / "libigm.so"
    subprocess.run(["gcc", "-std=c99", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(shared),
                    str(source), "-lm"], check=True)
    f = ctypes.CDLL(str(shared)).igm_rx90
    f.restype = ctypes.c_int
    out = numpy.zeros((64, 6))
    pose = numpy.ascontiguousarray(T.reshape(-1))
    p = numpy.array([VALUES["D3"], VALUES["RL4"]])
    n = f(pose.ctypes.data_as(ctypes.c_void_p), p.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p))
    assert n == 8
    assert _same_set(list(out[:n]), inverse_geometric(robot, T, VALUES))


def test_matlab_export_text(rx90):
    text = generate_igm(rx90[1], "matlab")
    assert text.startswith("function Q = igm_rx90(T, p)")
    assert "function v = kr_type2(X, Y, Z)" in text and "% step 6: th6 by type3" in text
    assert text.count("function ") == 6


def test_export_rejects_unknown_language(rx90):
    with pytest.raises(kr.KaneRobotError, match="exported in python, c, matlab"):
        generate_igm(rx90[1], "fortran")


def test_cli_igm_text_and_code(tmp_path, capsys):
    from kanerobot.cli import main

    assert main(["model", "planar2", "igm"]) == 0
    text = capsys.readouterr().out
    assert "Inverse geometric model" in text and "type 3" in text and text.rstrip().endswith("*=*")
    out = tmp_path / "igm.py"
    assert main(["model", "planar2", "igm", "--lang", "python", "-o", str(out)]) == 0
    namespace = {}
    exec(out.read_text(), namespace)
    T = [[math.cos(0.2), -math.sin(0.2), 0, 1.5 * math.cos(0.5)], [math.sin(0.2), math.cos(0.2), 0, 1.5 * math.sin(0.5)],
         [0, 0, 1, 0], [0, 0, 0, 1]]
    [q] = namespace["igm_planar2"](T, [1.5])
    assert numpy.allclose(q, [0.5, -0.3], atol=1e-12)
    assert main(["model", "planar2", "igm", "--lang", "julia"]) == 0
    assert "\nfunction igm_planar2(T, p; tol=1e-9)\n" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["stanford", "sr400"])
@pytest.mark.long
def test_export_prismatic_and_closed_loop(name, tmp_path):
    """Stanford (a type-1 step for the prismatic joint) and SR400 (types 7 and
    8, then the parallelogram loop): python and C give the solution set of
    inverse_geometric."""
    from kanerobot.dynamics.parameters import random_parameters

    robot = library(name)
    igm = derive_igm(robot)
    rng = numpy.random.default_rng(1)
    values = random_parameters(robot, rng)
    model = num.ChainModel(robot, igm.end, values)
    q = numpy.zeros(robot.nj)
    q[model.columns] = rng.uniform(-2, 2, 6)
    T = model.pose(q)
    reference = inverse_geometric(robot, T, values)
    revolute = model.revolute_mask()
    text = generate_igm(igm, "python")
    names = text.split("p = [", 1)[1].split("]", 1)[0].split(", ")
    p = [values[k] for k in names]
    namespace = {}
    exec(text, namespace)
    sols = namespace[f"igm_{name}"](T.tolist(), p)

    def same(found):
        return len(found) == len(reference) and all(
            any(num.joint_distance(numpy.array(a), b, revolute) < 1e-8 for b in reference) for a in found)

    assert len(reference) >= 2 and same(sols)
    if shutil.which("gcc") is None:
        return
    source = tmp_path / "igm.c"
    source.write_text(generate_igm(igm, "c"))
    shared = tmp_path / "libigm.so"
    subprocess.run(["gcc", "-std=c99", "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(shared),
                    str(source), "-lm"], check=True)
    f = getattr(ctypes.CDLL(str(shared)), f"igm_{name}")
    out = numpy.zeros((1024, robot.nj))
    pose = numpy.ascontiguousarray(T.reshape(-1))
    params = numpy.array(p)
    n = f(pose.ctypes.data_as(ctypes.c_void_p), params.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p))
    assert same(list(out[:n]))


def _julia_values(text, names):
    """The numbers of a Julia expression line, evaluated in Python (the printer's operators, atan(y, x))."""
    code = text.replace(".^", "**").replace("^", "**").replace(".*", "*").replace("./", "/")
    scope = {"sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "pi": math.pi, "atan": lambda *a: math.atan2(*a) if len(a) == 2 else math.atan(*a)}
    return eval(code, scope, dict(names))


@pytest.mark.long
def test_julia_export_has_the_python_steps(rx90):
    """No julia on this machine: the Julia text's blocks close, and each step's candidates and the final
    check, evaluated from the Julia text, are the Python export's at random joints, pose and parameters."""
    robot, igm, _T, _model = rx90
    julia, python = generate_igm(igm, "julia"), generate_igm(igm, "python")
    assert julia.startswith('"""\n    igm_rx90(T, p; tol=1e-9)\n') and "p = [D3, RL4]" in julia
    lines = julia.splitlines()
    opened = sum(1 for line in lines if re.match(r"^\s*(function|for|if) ", line))
    assert opened == sum(1 for line in lines if line.strip() == "end") and opened > 6 + 2 * 6
    rng = numpy.random.default_rng(3)
    names = {str(s): float(v) for s, v in zip(robot.q, rng.uniform(-2, 2, 6))} | VALUES
    names |= {name: float(v) for name, v in zip(("sx", "nx", "ax", "Px", "sy", "ny", "ay", "Py", "sz", "nz", "az", "Pz"), rng.uniform(-1, 1, 12))}

    def steps(text, start, end):
        return [line.split(start, 1)[1].rsplit(end, 1)[0] for line in text.splitlines() if start in line]

    jl, py = steps(julia, "cands = ", "\n") + steps(julia, "maximum(abs, ", ")"), steps(python, "cands = ", "\n") + steps(python, "max(abs(e) for e in ", ")")
    assert len(jl) == len(py) == 6 + 1
    for a, b in zip(jl, py):
        assert numpy.allclose(numpy.array(_julia_values(a, names), dtype=float), numpy.array(eval(b, {"math": math}, dict(names)), dtype=float), atol=1e-12)


@pytest.mark.skipif(shutil.which("julia") is None, reason="julia is not installed: the Julia export is checked as text only")
def test_julia_export_runs(rx90, tmp_path):
    robot, igm, T, _model = rx90
    path = tmp_path / "igm_rx90.jl"
    path.write_text(generate_igm(igm, "julia"))
    matrix = "[" + "; ".join(" ".join(repr(float(v)) for v in row) for row in T) + "]"
    script = f'include("{path}"); for q in igm_rx90({matrix}, [{VALUES["D3"]}, {VALUES["RL4"]}]); println(join(q, " ")); end'
    run = subprocess.run(["julia", "--startup-file=no", "-e", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    sols = [[float(v) for v in line.split()] for line in run.stdout.splitlines()]
    assert len(sols) == 8 and _same_set(sols, inverse_geometric(robot, T, VALUES))
