"""Drive gains (kanerobot.identification.drives): current to joint torque, read from TOML, errors."""

import numpy as np
import pytest

from kanerobot.errors import DataError, KaneRobotError
from kanerobot.identification.drives import Drives, as_drives, read_drives


def test_gains_from_parts_are_torque_constant_times_gear_ratio(tmp_path):
    rng = np.random.default_rng(3)
    k, ratio, rotor = rng.uniform(0.05, 0.3, 3), rng.uniform(50, 160, 3), rng.uniform(1e-6, 5e-5, 3)
    lines = ["[gains]", '"joint_0.0" = 7.5', ""]
    for j in range(3):
        lines += [f"[joints.j{j}]", f"torque_constant = {float(k[j])!r}", f"gear_ratio = {float(ratio[j])!r}", f"rotor_inertia = {float(rotor[j])!r}", ""]
    path = tmp_path / "gains.toml"
    path.write_text("\n".join(lines))
    drives = read_drives(path)
    joints = ("j2", "joint_0.0", "j0", "j1")
    np.testing.assert_allclose(drives.vector(joints), [k[2] * ratio[2], 7.5, k[0] * ratio[0], k[1] * ratio[1]], rtol=1e-15)
    assert drives.rotor_inertia == pytest.approx({f"j{j}": ratio[j] ** 2 * rotor[j] for j in range(3)}, rel=1e-15)
    current = rng.normal(size=(5, 4))
    np.testing.assert_allclose(drives.torque(current, joints), current * drives.vector(joints), rtol=0)


def test_gains_given_as_numbers_or_mapping():
    assert as_drives([2.0, 3.0], ("a", "b")).gains == {"a": 2.0, "b": 3.0}
    assert as_drives({"b": 3.0, "a": 2.0}).vector(("a", "b")).tolist() == [2.0, 3.0]
    with pytest.raises(KaneRobotError, match="3 gains for 2 joints"):
        as_drives([1.0, 2.0, 3.0], ("a", "b"))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[gains]\na = 0.0\n", "gain of joint 'a' = 0.0: give a nonzero finite number"),
        ("[joints.a]\ntorque_constant = -0.1\ngear_ratio = 10\n", "torque_constant = -0.1: give a positive finite number"),
        ("gains = 3\n", "gains must be a table"),
        ("[gains]\na = 'x'\n", "gain of joint 'a'"),
        ("[gain]\na = 1.0\n", "unknown table.*gain"),
        ("[gains]\na = 1.0\n[joints.a]\ngain = 2.0\n", "joint 'a' is given twice"),
        ("[joints.a]\ntorque_constant = 0.1\n", "give gain, or torque_constant and gear_ratio"),
        ("[joints.a]\ntorque_constant = 0.1\ngear_ratio = 10\nratio = 3\n", "unknown key"),
        ("[gains\n", "not a TOML file"),
    ],
)
def test_bad_gain_files_name_the_file(tmp_path, text, match):
    path = tmp_path / "drives.toml"
    path.write_text(text)
    with pytest.raises(DataError, match=match) as info:
        read_drives(path)
    assert "drives.toml" in str(info.value)


def test_missing_and_unknown_joints_are_named():
    drives = Drives({"a": 1.0, "z": 2.0}, source="gains.toml")
    with pytest.raises(KaneRobotError, match=r"gains.toml: no gain for joint\(s\) b; z is not a joint"):
        drives.vector(("a", "b"))


def test_a_negative_gain_is_a_current_of_the_other_sign():
    drives = Drives({"a": -2.0, "b": np.float32(3.0)})
    assert drives.torque([[1.0, 1.0]], ("a", "b")).tolist() == [[-2.0, 3.0]]
