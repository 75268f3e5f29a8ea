"""A long recording in memory is factored block by block: the same estimate as built whole."""

import importlib

import numpy as np

import kanerobot as kr
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.identification.excitation import FourierTrajectory

# the module (the package's attribute of the same name is the function)
identify_module = importlib.import_module("kanerobot.identification.identify")


def test_blocks_give_the_estimate_and_deviations_of_the_whole_matrix(monkeypatch):
    robot = kr.load(kr.frames_path("planar2"))
    rng = np.random.default_rng(5)
    values = random_parameters(robot, rng, wrench=False)
    values["G3"] = -9.81
    model = kr.derive(robot)
    fn = model.numeric({k: values[k] for k in model.parameters})
    t = np.arange(3000) * 0.002
    q, qd, qdd = FourierTrajectory([0.1, -0.2], rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), 0.4).sample(t)
    tau = fn.inverse_dynamics(q, qd, qdd) + 0.01 * rng.normal(size=q.shape)
    data = {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": tau}
    geometry = {"L1": values["L1"], "G3": -9.81}
    whole = kr.identify(robot, data, values=geometry, method="wls")
    monkeypatch.setattr(identify_module, "BLOCK_SAMPLES", 700)  # 5 blocks, the last one short
    blocks = kr.identify(robot, data, values=geometry, method="wls")
    assert whole.residual is not None and blocks.residual is None and blocks.rows == whole.rows
    np.testing.assert_allclose(blocks.values, whole.values, rtol=1e-9)
    np.testing.assert_allclose([blocks.std[n] for n in blocks.names], [whole.std[n] for n in whole.names], rtol=1e-9)
    np.testing.assert_allclose(blocks.weights, whole.weights, rtol=1e-9)
    assert abs(blocks.relative_residual - whole.relative_residual) < 1e-9 * whole.relative_residual
