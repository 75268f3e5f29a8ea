"""Shared robots for the geometry and kinematics tests.

Corpus robots come from the OpenSYMORO .par files beside the checkout (or the
copies in frames/); ``tree`` is a two-branch robot built in Python that mixes
Khalil-Kleinfinger frames (with gamma and b) and general frames with oblique
revolute and prismatic axes.
"""

from pathlib import Path

import numpy
import pytest
import sympy

from kanerobot.robot.description import Frame, GeneralPlacement, KKPlacement, Robot
from kanerobot.robot.joints import rot_x, rot_z

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "reference" / "opensymoro"


def corpus_robot(name):
    """The robot of ``<name>.par`` from the corpus, else frames/, else skip."""
    from kanerobot.robot.io import load

    for path in (CORPUS / f"{name}.par", ROOT / "frames" / f"{name.lower()}.par"):
        if path.is_file():
            return load(path)
    pytest.skip(f"{name}.par is neither in {CORPUS} nor in frames/")


def random_values(robot, rng, low=0.4, high=1.6):
    """Random values for every geometric symbol of ``robot``."""
    return {name: float(rng.uniform(low, high)) for name in robot.geometric_parameters}


@pytest.fixture
def rng():
    return numpy.random.default_rng(20240611)


@pytest.fixture(scope="session", params=["RX90", "Stanford"])
def serial(request):
    return corpus_robot(request.param)


@pytest.fixture(scope="session")
def rx90():
    return corpus_robot("RX90")


@pytest.fixture(scope="session")
def stanford():
    return corpus_robot("Stanford")


@pytest.fixture(scope="session")
def sr400():
    return corpus_robot("SR400")


@pytest.fixture(scope="session")
def testloop():
    return corpus_robot("testLoop")


@pytest.fixture(scope="session")
def twoloops():
    return corpus_robot("TwoLoops")


@pytest.fixture(scope="session")
def akr3000():
    return corpus_robot("AKR3000")


@pytest.fixture(scope="session")
def tree():
    q = sympy.symbols("q1:7")
    L2, L3, g4, b4, L4, L5, L6, L7 = sympy.symbols("L2 L3 g4 b4 L4 L5 L6 L7")
    third = sympy.Rational(1, 3)
    return Robot.create(
        "tree",
        [
            Frame("1", "0", 0, 1, KKPlacement(theta=q[0])),
            Frame("2", "1", 0, 1, KKPlacement(alpha=sympy.pi / 2, d=L2, theta=q[1])),
            Frame("3", "2", 1, 1, KKPlacement(alpha=-sympy.pi / 2, d=L3, theta=sympy.pi / 6, r=q[2])),
            Frame("4", "1", 0, 1, KKPlacement(gamma=g4, b=b4, alpha=sympy.pi / 3, d=L4, theta=q[3])),
            Frame("5", "4", 0, 1, GeneralPlacement(
                sympy.ImmutableMatrix(rot_z(0.4) * rot_x(0.7)), sympy.ImmutableMatrix([L5, 0.1, 0.2]),
                sympy.ImmutableMatrix([third, 2 * third, 2 * third]), q[4])),
            Frame("6", "5", 1, 1, GeneralPlacement(
                sympy.ImmutableMatrix(sympy.eye(3)), sympy.ImmutableMatrix([0, L6, 0]),
                sympy.ImmutableMatrix([0, sympy.Rational(3, 5), sympy.Rational(4, 5)]), q[5])),
            Frame("7", "6", 2, 0, KKPlacement(alpha=0.3, d=L7)),
        ],
    )
