"""Redundant chains (issue 25): more joints than the task has components.

``inverse_geometric`` on Krang's 10-joint arm chain returned "200
solution(s)", the number of its random starts: a redundant chain has a
continuum of solutions, not a finite set.  It now says so (with the degree
of redundancy), in Python and on the command line, and ``kr.redundant_ik``
solves a pose for one configuration, a preferred posture and the joint
limits in the null space of the task Jacobian.

The poses reached are checked with pinocchio's forward kinematics on the
URDF (arm7) or with the symbolic direct geometric model (Krang), not with
the numeric chain model the solver iterates on.
"""

import numpy
import pytest
from conftest import library, random_values

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.errors import KaneRobotError
from kanerobot.geometry import numeric_transform
from kanerobot.igm import numeric as num
from kanerobot.igm.api import derive_igm
from kanerobot.igm.redundant import NoConvergence, RedundantChain, redundancy


@pytest.fixture(scope="module")
def arm7():
    robot = kr.load(kr.frames_path("arm7"))
    return robot, num.ChainModel(robot, "flange", robot.values)


@pytest.fixture(scope="module")
def krang():
    robot = library("krang")
    return robot, random_values(robot, numpy.random.default_rng(25))


def _within_limits(robot, rng, shrink=0.9):
    """A random configuration inside ``shrink`` times each joint's URDF range."""
    lower = numpy.array([robot.limits[label].lower for label in robot.joint_labels])
    upper = numpy.array([robot.limits[label].upper for label in robot.joint_labels])
    middle, half = (upper + lower) / 2, shrink * (upper - lower) / 2
    return rng.uniform(middle - half, middle + half)


def _pinocchio_pose(q):
    """0T_flange of arm7 by pinocchio, from the URDF file itself (joints matched by name)."""
    pin = pytest.importorskip("pinocchio", reason="pinocchio checks the poses: pip install -e '.[bench]'")
    model = pin.buildModelFromUrdf(str(kr.frames_path("arm7")))
    data = model.createData()
    x = numpy.zeros(model.nq)
    for k, label in enumerate(("a1", "a2", "a3", "a4", "a5", "a6", "a7")):
        x[model.joints[model.getJointId(label)].idx_q] = q[k]
    pin.forwardKinematics(model, data, x)
    pin.updateFramePlacements(model, data)
    return data.oMf[model.getFrameId("tool_flange")].homogeneous


def _posture_distance(robot, q):
    """Distance to the middle of the joint ranges, each joint in units of its range (Liegeois' criterion)."""
    lower = numpy.array([robot.limits[label].lower for label in robot.joint_labels])
    upper = numpy.array([robot.limits[label].upper for label in robot.joint_labels])
    return float(numpy.linalg.norm((q - (upper + lower) / 2) / (upper - lower)))


# ------------------------------------------------------------ the report
def test_krang_arm_chain_is_reported_redundant_not_as_solutions(krang):
    """Krang's chain to 10l: 10 joints for the 6 components of a pose. The
    call says so at once (no 200 random starts) and names the way out."""
    robot, values = krang
    T = num.ChainModel(robot, "10l", values).pose(numpy.zeros(robot.nj))
    with pytest.raises(RedundantChain) as info:
        kr.inverse_geometric(robot, T, values, end="10l")
    error = info.value
    assert (error.joints, error.task, error.redundancy) == (10, 6, 4)
    assert "redundant" in str(error) and "degree of redundancy 4" in str(error)
    assert "kr.redundant_ik" in str(error) and "end='10l'" in str(error)
    for method in ("numeric", "paul"):  # no method lists a continuum
        with pytest.raises(RedundantChain):
            kr.inverse_geometric(robot, T, values, method=method, end="10l")
    with pytest.raises(RedundantChain, match="degree of redundancy 4"):
        derive_igm(robot, end="10l")


def test_arm7_is_reported_redundant(arm7):
    robot, model = arm7
    T = model.pose(numpy.full(7, 0.3))
    with pytest.raises(RedundantChain) as info:
        kr.inverse_geometric(robot, T, robot.values)
    assert (info.value.joints, info.value.task, info.value.redundancy) == (7, 6, 1)
    assert redundancy(robot) == 1 and redundancy(robot, rows=[0, 1, 2]) == 4
    assert redundancy(library("rx90")) == 0 and redundancy(library("planar2"), rows=[0]) == 1


@pytest.mark.parametrize("args", [["krang", "igm", "--frame", "10l"], [str(kr.frames_path("arm7")), "igm"]])
def test_cli_igm_says_redundant_in_one_line(args, capsys, krang):
    """``kanerobot model ROBOT igm`` prints the library's message (exit 2, one
    line): the redundancy and the function that solves such a chain."""
    robot = krang[0] if args[0] == "krang" else kr.load(args[0])
    end = "10l" if args[0] == "krang" else None
    with pytest.raises(RedundantChain) as info:
        derive_igm(robot, end=end)
    assert main(["model", *args]) == 2
    err = capsys.readouterr().err
    assert err == f"kanerobot: error: {info.value}\n"
    assert f"degree of redundancy {info.value.redundancy}" in err and "kr.redundant_ik(" in err


# ----------------------------------------------------- the null-space IK
def test_redundant_ik_reaches_the_pose_checked_by_pinocchio(arm7):
    """Random poses of arm7 from random starts: reached to 1e-10 by pinocchio's
    forward kinematics of the URDF, inside the URDF's joint limits."""
    robot, _ = arm7
    rng = numpy.random.default_rng(7)
    for _ in range(5):
        T = _pinocchio_pose(_within_limits(robot, rng))
        sol = kr.redundant_ik(robot, T, q0=_within_limits(robot, rng))
        assert numpy.max(numpy.abs(_pinocchio_pose(sol.q) - T)) <= 1e-10
        assert sol.residual <= 1e-10 and sol.redundancy == 1 and sol.iterations > 0
        for label, x in zip(robot.joint_labels, sol.q):
            assert robot.limits[label].lower <= x <= robot.limits[label].upper


def test_null_space_objective_is_improved_and_stationary(arm7):
    """From the same start, plain damped least squares (the numeric IGM's own
    iteration) stops wherever the task is met; the null-space iteration ends
    closer to the preferred posture (the middle of the joint ranges) with the
    task met as well, at a point where the objective's gradient has no
    component along the self-motion (the null space of the Jacobian, from
    an SVD here)."""
    robot, model = arm7
    rng = numpy.random.default_rng(3)
    gains = []
    for _ in range(5):
        T = model.pose(_within_limits(robot, rng))
        q0 = _within_limits(robot, rng)
        plain, err = num.damped_least_squares(model, T, q0)
        assert err <= 1e-10
        sol = kr.redundant_ik(robot, T, q0=q0)
        assert num.pose_distance(_pinocchio_pose(sol.q), T) <= 1e-10
        gains.append(_posture_distance(robot, plain) - _posture_distance(robot, sol.q))
        assert _posture_distance(robot, sol.q) < _posture_distance(robot, plain)
        _, J = model.jacobian(sol.q)
        null = numpy.linalg.svd(J)[2][-1]  # the one self-motion direction of a 7-joint arm
        lower = numpy.array([robot.limits[label].lower for label in robot.joint_labels])
        upper = numpy.array([robot.limits[label].upper for label in robot.joint_labels])
        gradient = (sol.q - (upper + lower) / 2) / (upper - lower) ** 2
        assert abs(gradient @ null) <= 1e-8 * numpy.linalg.norm(gradient)
    assert numpy.mean(gains) > 0.1  # in units of the joint ranges: a gain worth the iterations


def test_redundant_ik_on_krang_checked_by_the_symbolic_model(krang):
    """Krang's 10-joint chain (no limits in the .toml): the pose reached, by
    the direct geometric model derived symbolically; the preferred posture
    given, and the solution is nearer to it than plain damped least squares'."""
    robot, values = krang
    rng = numpy.random.default_rng(10)
    fgm = numeric_transform(robot, "0", "10l", values)
    T = fgm(rng.uniform(-1, 1, robot.nj))
    q0, posture = rng.uniform(-1, 1, robot.nj), numpy.zeros(robot.nj)
    sol = kr.redundant_ik(robot, T, values, q0=q0, end="10l", posture=posture)
    assert num.pose_distance(fgm(sol.q), T) <= 1e-10 and sol.redundancy == 4
    plain, err = num.damped_least_squares(num.ChainModel(robot, "10l", values), T, q0)
    assert err <= 1e-10
    columns = [robot.joint_labels.index(label) for label in robot.root_path("10l")]
    assert numpy.linalg.norm(sol.q[columns]) < numpy.linalg.norm(num.wrap(plain, numpy.ones(robot.nj, bool))[columns])


def test_position_task_of_arm7(arm7):
    """A partial task (rows): arm7's flange at a point, any orientation:
    redundancy 4, the point reached (pinocchio), the orientation free."""
    robot, model = arm7
    T = model.pose(numpy.full(7, 0.4))
    sol = kr.redundant_ik(robot, T, rows=[0, 1, 2])
    assert sol.redundancy == 4
    assert numpy.max(numpy.abs(_pinocchio_pose(sol.q)[:3, 3] - T[:3, 3])) <= 1e-10


def test_unreachable_pose_names_residual_and_iterations(arm7):
    robot, model = arm7
    T = model.pose(numpy.zeros(7))
    T[:3, 3] = [3.0, 0.0, 0.0]  # the arm reaches about 1 m
    with pytest.raises(NoConvergence, match=r"smallest residual 2\.\d+ .* iterations from 4 starts") as info:
        kr.redundant_ik(robot, T, restarts=3)
    assert info.value.iterations >= 4 * 31 and info.value.residual > 1.0


@pytest.mark.parametrize(
    "options, words",
    [
        ({"rows": [0, 7]}, "rows"),
        ({"rows": []}, "rows"),
        ({"q0": [0.0, 0.0]}, "q0"),
        ({"posture": [0.0] * 3}, "posture"),
        ({"T": numpy.eye(3)}, "4x4"),
    ],
)
def test_bad_options_are_one_clear_error(arm7, options, words):
    robot, model = arm7
    options = {"T": model.pose(numpy.zeros(7)), **options}
    with pytest.raises(KaneRobotError, match=words):
        kr.redundant_ik(robot, options.pop("T"), **options)
