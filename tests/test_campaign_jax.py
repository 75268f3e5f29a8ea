"""kr.campaign(..., scheduler="jax"): every run at once by fixed-step RK4 on JAX, the same table as in-process.

The independent path is the in-process scheduler: scipy's adaptive DOP853
on the C programs, each run alone, at rtol 1e-10, atol 1e-12.  The JAX
side integrates at a step of 2.5e-4 s (RK4's error is ``O(dt^4)``: at 1e-3 s
the metrics of these closed loops (gains of 10 rad/s) already agree to about
1e-8 relative, 1e-10 at 2.5e-4 s; the work, which cancels on a rest-to-rest
motion, relative to the energy moved), so both are far inside the 1e-6 relative
asked of every metric.  ``nfev`` (4 per step) and ``relative_energy_drift``
(NaN: not evaluated) are the integrators' own, not the plant's: they are
checked for what they are.
"""

import numpy as np
import pytest

pytest.importorskip("pandas", reason="kr.campaign needs pandas: pip install 'kanerobot[cluster]'")
pytest.importorskip("jax", reason="pip install -e '.[jax]'")

from conftest import derived

import kanerobot as kr
from kanerobot.campaign import METRICS, Jax, Processes
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

TIGHT = dict(rtol=1e-10, atol=1e-12)
STEP = 2.5e-4
#: The metrics of the plant's motion, equal within both integrators' accuracy.
COMPARED = [name for name in METRICS if name not in ("nfev", "relative_energy_drift")]


def assert_same_table(jax_table, reference, rel=1e-6):
    """Every column equal (drawn values, status, errors exactly), the metrics to ``rel`` relative; the worst returned."""
    assert list(jax_table.columns) == list(reference.columns)
    assert list(jax_table["status"]) == list(reference["status"]) and list(jax_table["error"]) == list(reference["error"])
    drawn = [c for c in reference.columns if "." in c]
    assert jax_table[drawn].equals(reference[drawn])
    ok = reference["status"] == "ok"
    worst = 0.0
    for name in COMPARED:
        a, b = jax_table.loc[ok, name], reference.loc[ok, name]
        if b.dtype.kind == "f":
            a, b = a.to_numpy(), b.to_numpy()
            scale = np.abs(b)
            if name == "work":  # int tau . v dt cancels (rest to rest): its scale is the energy moved, int |tau . v| dt
                scale = np.maximum(scale, reference.loc[ok, "energy"].to_numpy())
            assert np.array_equal(np.isnan(a), np.isnan(b)), name
            finite = ~np.isnan(b)
            relative = np.abs(a - b)[finite] / np.maximum(scale[finite], 1e-300)
            worst = max(worst, float(np.max(relative, initial=0.0)))
            assert np.all(relative <= rel), (name, relative)
        else:
            assert list(a) == list(b), name
    steps = round((reference["final_time"].iloc[0]) / STEP)
    assert set(jax_table.loc[ok, "nfev"]) == {4 * steps}
    assert jax_table.loc[ok, "relative_energy_drift"].isna().all()
    return worst


def planar_values():
    return random_parameters(derived("planar2").robot, np.random.default_rng(3), friction=False, wrench=False)


@pytest.mark.parametrize("controller", ["computed_torque", "pd_gravity"])
def test_planar_campaign_equals_in_process(controller):
    """A few planar-arm runs (some of whose drawn plants are not bodies: failed rows, the same) and a target."""
    values = planar_values()
    sample = {"M2": (-0.2 * values["M2"], 1.2 * values["M2"]), "ZZ1": (0.8 * values["ZZ1"], 1.2 * values["ZZ1"]), "target": (-1.0, 1.0)}
    common = dict(runs=8, sample=sample, t_span=(0.0, 0.4), samples=11, seed=4)
    model = derived("planar2")
    reference = kr.campaign(model, values, controller, scheduler="in-process", **common, **TIGHT)
    chosen = Jax(dt=STEP)
    table = kr.campaign(model, values, controller, scheduler=chosen, **common)
    assert chosen.step == STEP and table.attrs["scheduler"] == f"jax (RK4, dt = {STEP:.3g} s)"
    assert 0 < (reference["status"] == "failed").sum() < 8  # the negative masses drawn
    assert_same_table(table, reference)
    assert (table["wall_time"] == table["wall_time"].iloc[0]).all()  # the batch's time, shared


def test_a_process_that_ran_jax_spawns_its_workers():
    """JAX's runtime threads make a fork deadlock-prone: after a JAX campaign, the processes scheduler spawns."""
    import jax.numpy as jnp

    jnp.zeros(1).block_until_ready()  # JAX's runtime started, as a campaign on scheduler="jax" starts it
    assert Processes().start_method == "spawn"


def test_passive_runs_from_drawn_states():
    """No controller: the robot falls from the drawn q0 (tracking NaN on both sides)."""
    values = planar_values() | {"G3": 9.81}
    common = dict(runs=3, sample={"q0": (-1.0, 1.0)}, t_span=(0.0, 0.3), samples=7, seed=2)
    model = derived("planar2")
    reference = kr.campaign(model, values, None, scheduler="in-process", **common, **TIGHT)
    assert_same_table(kr.campaign(model, values, None, scheduler=Jax(dt=STEP), **common), reference)


@pytest.mark.long
def test_rx90_campaign_of_20_equals_in_process():
    robot = kr.load(kr.frames_path("rx90"))
    values = random_parameters(robot, np.random.default_rng(0), friction=False, wrench=False)
    sample = {name: (0.9 * values[name], 1.1 * values[name]) for name in ("ZZ5", "ZZ6", "IA4", "IA6", "M3", "MX3")}
    common = dict(runs=20, sample=sample | {"target": (-0.5, 0.5)}, t_span=(0.0, 0.5), samples=26, seed=1)
    for controller in ("computed_torque", "pd_gravity"):
        reference = kr.campaign(derived("rx90"), values, controller, scheduler="in-process", **common, **TIGHT)
        table = kr.campaign(derived("rx90"), values, controller, scheduler=Jax(dt=STEP), **common)
        assert set(table["status"]) == {"ok"}
        assert assert_same_table(table, reference, rel=1e-8) < 1e-8


def test_what_it_cannot_do_is_one_line_naming_processes():
    model, values = derived("planar2"), planar_values()
    common = dict(runs=2, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), samples=3, scheduler="jax")
    cases = [
        (dict(events=[kr.simulation.event(lambda t, q, qd: q[0] - 1.0, name="up")]), r"no events \(events=\)"),
        (dict(limits={"1": (-1.0, 1.0)}), r"does not watch joint limits \(1\): pass limits=\{\} or"),
        (dict(rtol=1e-9), r"rtol are not its options"),
        (dict(controller=lambda t, q, qd: np.zeros(2)), "not a Python controller"),
    ]
    for options, message in cases:
        options = dict(options)
        controller = options.pop("controller", "computed_torque")
        with pytest.raises(KaneRobotError, match=message + r".*use scheduler='processes'$") as caught:
            kr.campaign(model, values, controller, **common, **options)
        assert "\n" not in str(caught.value)
    coulomb = dict(values, FS1=0.5)
    with pytest.raises(KaneRobotError, match=r"pass friction='model', or use scheduler='processes' \(regularised\)"):
        kr.campaign(model, coulomb, "computed_torque", **common)
    satellite = derived("satellite")
    x0 = np.zeros(19)
    x0[6] = 1.0  # the base's quaternion w
    sat_values = random_parameters(satellite.robot, np.random.default_rng(2))
    with pytest.raises(KaneRobotError, match=r"serial and tree robots on a fixed base; .* use scheduler='processes'$"):
        kr.campaign(satellite, sat_values, None, runs=1, sample={}, t_span=(0.0, 0.1), x0=x0, scheduler="jax")
    with pytest.raises(KaneRobotError, match=r"^Jax\(dt=0\.0\): the step must be a positive number of seconds$"):
        Jax(dt=0.0)
