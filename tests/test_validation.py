"""Validation of estimates on another recording (kanerobot.identification.validation)."""

import numpy as np
import pytest

from kanerobot.identification.validation import Validation


def test_relative_error_and_correlation_are_the_closed_forms():
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 2.0, 401)
    measured = np.column_stack([np.sin(3 * t), 2 + np.cos(t), rng.normal(size=t.size)])
    noise = rng.normal(size=measured.shape)
    predicted = measured + 0.05 * noise
    check = Validation(t, measured, predicted, joints=("a", "b.1", "c"))
    for k, joint in enumerate(check.joints):
        e, y = measured[:, k] - predicted[:, k], measured[:, k]
        assert check.relative_rms[joint] == pytest.approx(np.sqrt(np.mean(e**2) / np.mean(y**2)), rel=1e-12)
        assert check.correlation[joint] == pytest.approx(np.corrcoef(y, predicted[:, k])[0, 1], rel=1e-12)
    assert check.overall == pytest.approx(np.sqrt(np.sum((measured - predicted) ** 2) / np.sum(measured**2)), rel=1e-12)
    zero = Validation(t, measured, np.zeros_like(measured), joints=("a", "b", "c"))
    assert zero.overall == pytest.approx(1.0)  # predicting zero torque
    table = check.summary()
    assert "b.1" in table and f"{check.relative_rms['c']:.4f}" in table


def test_figures_are_written(tmp_path):
    pytest.importorskip("matplotlib", reason="needs matplotlib: pip install 'kanerobot[plot]'")
    t = np.linspace(0.0, 1.0, 50)
    measured = np.column_stack([np.sin(t), np.cos(t)])
    paths = Validation(t, measured, 0.9 * measured, joints=("1", "2"), source="test.csv").save_figures(tmp_path / "est_validation")
    assert [p.name for p in paths] == ["est_validation_torques.png", "est_validation_residuals.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


def test_a_joint_without_torque_is_said_so():
    t = np.linspace(0.0, 1.0, 20)
    measured = np.column_stack([np.sin(t), np.zeros_like(t), np.zeros_like(t)])
    predicted = np.column_stack([np.sin(t), 0.1 * t, np.zeros_like(t)])
    check = Validation(t, measured, predicted, joints=("a", "b", "c"))
    assert check.relative_rms["a"] == 0.0 and check.relative_rms["b"] == np.inf and np.isnan(check.relative_rms["c"])
