"""Exported inverse geometric models (issue 8): the generated python and C
functions return the same solution set as kanerobot.igm.inverse_geometric;
the MATLAB text has one function per solver and the steps."""

import ctypes
import math
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
    robot, igm, T, model = rx90
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
    assert main(["model", "planar2", "igm", "--lang", "julia"]) == 2


@pytest.mark.parametrize("name", ["stanford", "sr400"])
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
