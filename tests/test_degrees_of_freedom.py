"""``robot.dof`` is the degrees of freedom, ``robot.nj`` the joints (issue 25, defect 7).

``robot.dof`` is the size of the mass matrix of the robot's model (its
independent speeds); ``robot.nj`` counts the joint variables of ``q``.  They
differ on a wheeled base (the rolling constraints fix some speeds), a closed
loop (the loops fix the passive joints), a floating base (6 more) and
flexible joints (each one's motor is one more).  The checks count
independently: the joints from the file's own text (a ``.par``'s ``sigma``
list, a ``.toml``'s ``[[frame]]`` tables), the mass matrix from the numeric
model at a state; ``kanerobot list`` and ``info`` print both counts where
they differ.
"""

import re
import tomllib

import numpy as np
import pytest
from conftest import derived, library

import kanerobot as kr
from kanerobot.cli import main
from kanerobot.dynamics.parameters import random_parameters


def joints_in_file(name):
    """The moving joints the file lists: sigma 0 or 1, read from its text."""
    path = kr.frames_path(name)
    if path.suffix == ".par":
        sigma = re.search(r"^sigma = \{([^}]*)\}", path.read_text(), re.MULTILINE).group(1).split(",")
        return sum(1 for s in sigma if s.strip() != "2")
    return sum(1 for frame in tomllib.loads(path.read_text())["frame"] if frame["sigma"] != 2)


def mass_matrix_size(name):
    """The size of the numeric model's mass matrix, at the origin (at a closed configuration of loops)."""
    robot = library(name)
    fn = derived(name).numeric(random_parameters(robot, np.random.default_rng(3), friction=False), backend="numpy")
    space = fn.state_space
    q = fn.configuration(np.full(len(robot.active_joints), 0.1)) if robot.loops else space.origin
    A = np.asarray(fn.mass_matrix(q))
    assert A.shape[0] == A.shape[1]
    return A.shape[0]


# (robot, joints, degrees of freedom, why they differ as info says it)
CASES = [
    ("krang_wheeled", 22, 19, " (22 joints: the rolling constraints of the wheels fix 3 speeds)"),
    ("sr400", 9, 6, " (9 joints: the closed loops fix 3)"),
    ("satellite", 3, 9, " (3 joints and the 6 of the floating base)"),
    ("planar2flex", 2, 4, " (2 joints and the motors of 2 flexible joints)"),
    ("rx90", 6, 6, ""),
]


@pytest.mark.parametrize("name,joints,dof,why", CASES, ids=[case[0] for case in CASES])
@pytest.mark.long
def test_dof_is_the_mass_matrix_and_nj_the_joints(name, joints, dof, why):
    robot = library(name)
    # krang_wheeled: two coaxial wheels, 2 rows of W each, their lateral rows the same: rank 3 of 22 joints
    assert (robot.nj, robot.dof) == (joints_in_file(name), mass_matrix_size(name)) == (joints, dof)


@pytest.mark.parametrize("name,joints,dof,why", CASES, ids=[case[0] for case in CASES])
def test_info_says_both(name, joints, dof, why, capsys):
    assert main(["info", name]) == 0
    assert f"NJ = {joints} joints, NF = {library(name).nf} frames, {dof} degrees of freedom{why}\n" in capsys.readouterr().out


def test_list_says_both(capsys):
    assert main(["list"]) == 0
    rows = {row.split()[0]: row for row in capsys.readouterr().out.splitlines()}
    for name, joints, dof, _ in CASES:
        assert f" {dof:3d} DOF" in rows[name] and (f"({joints} joints)" in rows[name]) == (joints != dof), rows[name]
    assert " 2 DOF (1 joint) " in rows["flexarm1"]
