"""kr.campaign: the same table wherever it runs, a worker killed, a campaign interrupted and resumed, bad input.

The metrics of a row are checked against kr.cross_validate run directly on
the plant drawn (the independent path), and the schedulers against each
other bit for bit (``wall_time`` aside).  Each case is small: a few RX-90 or
planar-arm runs of a fraction of a second; the 200-run acceptance check is
marked slow.
"""

import os
import signal

import numpy as np
import pytest

pytest.importorskip("pandas", reason="kr.campaign needs pandas: pip install 'kanerobot[cluster]'")
pytest.importorskip("pyarrow", reason="the campaign store needs pyarrow: pip install 'kanerobot[cluster]'")

import kanerobot as kr
from kanerobot.campaign import MultivariateNormal, Normal, Processes
from kanerobot.campaign.distributions import Sampler
from kanerobot.campaign.store import Store
from kanerobot.control import ComputedTorque, quintic
from kanerobot.dynamics.parameters import random_parameters
from kanerobot.errors import KaneRobotError

RX90 = kr.load(kr.frames_path("rx90"))
PLANAR = kr.load(kr.frames_path("planar2"))
PLANAR_VALUES = {"L1": 1.0, "M2": 1.0, "MX2": 0.5, "MY2": 0.0, "ZZ1": 0.4, "ZZ2": 0.35, "IA1": 0.01, "IA2": 0.01,
                 "FV1": 0.0, "FV2": 0.0, "FS1": 0.0, "FS2": 0.0}  # fmt: skip


def same_columns(frame):
    """Every column but the wall time: the same wherever a run executes."""
    return frame.drop(columns=["wall_time"])


@pytest.fixture(scope="module")
def rx90_values():
    return random_parameters(RX90, np.random.default_rng(0), friction=False, wrench=False)


def rx90_sample(values):
    """The last two links' masses and inertias within 10 %, and a target within 0.5 rad of q = 0."""
    scaled = {name: (0.9 * values[name], 1.1 * values[name]) for name in ("ZZ5", "ZZ6", "IA4", "IA6")}
    return scaled | {"target": (-0.5, 0.5)}


RX90_CAMPAIGN = dict(runs=4, t_span=(0.0, 0.3), samples=31)


def test_a_row_is_cross_validate_on_the_plant_drawn(rx90_values):
    """Run 2's metrics equal kr.cross_validate on its drawn plant, measured here by hand."""
    sample = rx90_sample(rx90_values)
    table = kr.campaign(RX90, rx90_values, "computed_torque", sample=sample, scheduler="in-process", seed=5, **RX90_CAMPAIGN)
    assert list(table["run"]) == [0, 1, 2, 3] and set(table["status"]) == {"ok"}
    model = kr.derive(RX90)
    draw = Sampler(sample, model.parameters, {"target": 6})(5, 2)
    plant = model.numeric(rx90_values | draw.parameters)
    cv = kr.cross_validate(model.numeric(rx90_values), plant, "computed_torque", quintic(np.zeros(6), draw.target, 0.3),
                           t_span=(0.0, 0.3), x0=np.zeros(12), samples=31)  # fmt: skip
    row = table.iloc[2]
    error, tau, qd, t = cv.tracking_error, cv.simulation.tau, cv.simulation.qd, cv.t
    power = np.abs(np.sum(tau * qd, axis=1))
    assert row["rms_tracking_error"] == pytest.approx(np.sqrt(np.mean(error**2)), rel=1e-12, abs=0)
    assert row["max_tracking_error"] == pytest.approx(np.abs(error).max(), rel=1e-12, abs=0)
    assert row["peak_torque"] == pytest.approx(np.abs(tau).max(), rel=1e-12, abs=0)
    assert row["energy"] == pytest.approx(np.sum((power[1:] + power[:-1]) / 2 * np.diff(t)), rel=1e-12, abs=0)
    assert row["nfev"] == cv.simulation.nfev and row["final_time"] == 0.3
    assert bool(row["within_limits"]) and not bool(row["fell"])
    assert [row[f"target.{k}"] for k in range(6)] == draw.target.tolist()
    assert row["param.ZZ6"] == draw.parameters["ZZ6"] and 0.9 * rx90_values["ZZ6"] <= row["param.ZZ6"] <= 1.1 * rx90_values["ZZ6"]


@pytest.mark.long
def test_same_table_in_process_processes_and_local_cluster(rx90_values, tmp_path):
    """Bit for bit, and the workers rebuild the model once each and load its libraries from the cache."""
    distributed = pytest.importorskip("distributed", reason="pip install 'kanerobot[cluster]'")
    sample = rx90_sample(rx90_values)
    common = dict(sample=sample, seed=3, **RX90_CAMPAIGN)
    here = kr.campaign(RX90, rx90_values, "computed_torque", scheduler="in-process", **common)
    local = kr.campaign(RX90, rx90_values, "computed_torque", scheduler="processes", **common)
    spawned = kr.campaign(RX90, rx90_values, "computed_torque", scheduler=Processes(2, start_method="spawn"), **common)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = kr.campaign(RX90, rx90_values, "computed_torque", scheduler=client, store=tmp_path / "store", **common)
    assert set(here["status"]) == {"ok"}
    assert spawned.attrs["scheduler"] == "processes (2 spawned)" and dask.attrs["scheduler"] == "dask"
    for other in (local, spawned, dask):
        assert same_columns(other).equals(same_columns(here))
        workers = other.attrs["workers"]
        assert sum(w["runs"] for w in workers.values()) == 4 and len(workers) <= 2
        # forked workers start with the parent's model; the others derive it once per process, whatever
        # their number of runs, and load its libraries from the cache (none compiled there)
        built = 0 if "forked" in other.attrs["scheduler"] else 1
        assert all(w["models_built"] == built and w["compiled_here"] == [] for w in workers.values()), workers
    assert same_columns(Store(tmp_path / "store", _description_of(tmp_path / "store")).read()).equals(same_columns(here))


def _description_of(folder):
    import json

    return json.loads((folder / "campaign.json").read_text())


class KillOnce:
    """A controller factory that kills its worker process the first time it runs (a crash in the middle of a campaign)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __call__(self, fn, trajectory):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return ComputedTorque(fn, trajectory)


@pytest.mark.long
def test_worker_killed_on_a_local_cluster(tmp_path):
    """The killed worker's runs are run again elsewhere: every run once in the table and in the store, the same numbers."""
    distributed = pytest.importorskip("distributed", reason="pip install 'kanerobot[cluster]'")
    common = dict(sample={"M2": (0.9, 1.1), "target": (-1.0, 1.0)}, runs=6, t_span=(0.0, 0.3), samples=21)
    killer = KillOnce(tmp_path / "killed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        # by its address: the campaign opens its own client and closes it
        table = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler=cluster.scheduler_address, store=tmp_path / "store", **common)
    assert table.attrs["scheduler"] == "dask"
    assert os.path.exists(killer.marker)  # a worker did die
    assert list(table["run"]) == list(range(6)) and set(table["status"]) == {"ok"}
    stored = Store(tmp_path / "store", _description_of(tmp_path / "store")).read()
    assert sorted(stored["run"]) == list(range(6))
    # the factory is harmless now that the marker exists: the reference, in this process
    reference = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler="in-process", **common)
    assert same_columns(table).equals(same_columns(reference))


@pytest.mark.long
def test_worker_killed_in_local_processes(tmp_path):
    """The pool breaks; a new one runs the runs that were in flight."""
    common = dict(sample={"M2": (0.9, 1.1), "target": (-1.0, 1.0)}, runs=4, t_span=(0.0, 0.3), samples=21)
    killer = KillOnce(tmp_path / "killed")
    table = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler="processes", **common)
    assert os.path.exists(killer.marker)
    assert list(table["run"]) == [0, 1, 2, 3] and set(table["status"]) == {"ok"}
    assert same_columns(table).equals(same_columns(kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler="in-process", **common)))


class KillWhile:
    """A controller factory that kills its worker process while ``marker`` exists (a run that always crashes its worker)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __call__(self, fn, trajectory):
        if os.path.exists(self.marker):
            os.kill(os.getpid(), signal.SIGKILL)
        return ComputedTorque(fn, trajectory)


@pytest.mark.long
def test_runs_that_keep_killing_their_workers_are_lost_then_rerun(tmp_path):
    """Local processes: after two deaths of the pool a run is recorded "lost"; a restart runs it again and keeps that row."""
    common = dict(sample={"M2": (0.9, 1.1), "target": (-1.0, 1.0)}, runs=3, t_span=(0.0, 0.2), samples=11, store=tmp_path / "s")
    killer = KillWhile(tmp_path / "kill")
    (tmp_path / "kill").touch()
    first = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler=Processes(2), **common)
    assert list(first["status"]) == ["lost"] * 3
    assert set(first["error"]) == {"the worker process died 2 times while this run was in flight"}
    (tmp_path / "kill").unlink()
    second = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler="in-process", **common)
    assert second.attrs["executed"] == [0, 1, 2] and list(second["status"]) == ["ok"] * 3
    reference = kr.campaign(PLANAR, PLANAR_VALUES, killer, scheduler="in-process", **(common | {"store": None}))
    assert same_columns(second).equals(same_columns(reference))


def test_progress_line(monkeypatch, capsys):
    """Runs done, failed and per second on standard error (KANEROBOT_PROGRESS on, no delay)."""
    import kanerobot.progress

    monkeypatch.setenv("KANEROBOT_PROGRESS", "1")
    monkeypatch.setattr(kanerobot.progress, "DELAY", 0.0)
    # a negative mass: no real body, every run fails
    kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", runs=3, sample={"M2": (-1.0, -0.5)}, t_span=(0.0, 0.1), samples=5,
                scheduler="in-process", backend="numpy")  # fmt: skip
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("kanerobot: campaign planar2: 3/3 runs, 3 failed, ") and " runs/s, " in line


def test_numeric_model_or_robot_file_as_the_model(tmp_path):
    """A numeric model brings its values, a robot file or a library name its robot: the same table."""
    common = dict(runs=2, sample={"M2": (0.9, 1.1), "target": (-1.0, 1.0)}, t_span=(0.0, 0.2), samples=5, scheduler="in-process",
                  backend="numpy")  # fmt: skip
    reference = same_columns(kr.campaign(PLANAR, PLANAR_VALUES, "pd_gravity", **common))
    assert set(reference["status"]) == {"ok"}
    fn = kr.derive(PLANAR).numeric(PLANAR_VALUES, backend="numpy")
    assert same_columns(kr.campaign(fn, None, "pd_gravity", **common)).equals(reference)
    assert same_columns(kr.campaign(kr.frames_path("planar2"), PLANAR_VALUES, "pd_gravity", **common)).equals(reference)
    assert same_columns(kr.campaign("planar2", PLANAR_VALUES, "pd_gravity", **common)).equals(reference)
    with pytest.raises(KaneRobotError, match=r"^the model is already numeric \(its parameters are bound\): pass values=None$"):
        kr.campaign(fn, PLANAR_VALUES, **common)


class Interrupting:
    """``sample(rng)``: M2 within 10 %; raises KeyboardInterrupt at its ``stop``-th call when armed (Ctrl-C mid-campaign)."""

    def __init__(self, stop=None):
        self.stop, self.calls = stop, 0

    def __call__(self, rng):
        self.calls += 1
        if self.stop is not None and self.calls == self.stop:
            raise KeyboardInterrupt
        return {"M2": rng.uniform(0.9, 1.1), "target": rng.uniform(-1.0, 1.0, 2)}


def test_interrupted_campaign_resumes_with_the_missing_runs(tmp_path):
    common = dict(runs=6, t_span=(0.0, 0.2), samples=11, scheduler="in-process", backend="numpy")
    with pytest.raises(KeyboardInterrupt):
        kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", sample=Interrupting(stop=4), store=tmp_path / "a", **common)
    stored = Store(tmp_path / "a", _description_of(tmp_path / "a")).read()
    assert sorted(stored["run"]) == [0, 1, 2]  # the three runs done before Ctrl-C were written
    # what a process killed while writing leaves: a hidden temporary file, never read
    (tmp_path / "a" / ".part-000000003-3.parquet.x1y2.tmp").write_bytes(b"PAR1 half a file")
    again = Interrupting()
    resumed = kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", sample=again, store=tmp_path / "a", **common)
    assert resumed.attrs["executed"] == [3, 4, 5] and resumed.attrs["from_store"] == 3 and again.calls == 3
    whole = kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", sample=Interrupting(), store=tmp_path / "b", **common)
    assert whole.attrs["executed"] == list(range(6))
    assert same_columns(resumed).equals(same_columns(whole))
    # extended: the first six are kept, two more are run
    more = kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", sample=Interrupting(), store=tmp_path / "b", **(common | {"runs": 8}))
    assert more.attrs["executed"] == [6, 7] and same_columns(more.iloc[:6]).equals(same_columns(whole))


def test_failed_runs_are_recorded():
    """A plant that is not physical and a draw that raises: failed rows with their messages, the other runs done."""

    def sample(rng):
        value = rng.uniform(0.0, 1.0)
        if value > 0.8:
            raise ValueError("no plant here")
        return {"M2": 1.0 if value > 0.3 else -1.0, "target": [0.5, -0.5]}

    table = kr.campaign(PLANAR, PLANAR_VALUES, "computed_torque", runs=8, sample=sample, t_span=(0.0, 0.1), samples=5,
                        scheduler="in-process", backend="numpy")  # fmt: skip
    draws = [np.random.default_rng([0, i]).uniform(0.0, 1.0) for i in range(8)]
    assert list(table["run"]) == list(range(8))
    for draw, (_, row) in zip(draws, table.iterrows()):
        if draw > 0.8:
            assert row["status"] == "failed" and row["error"] == "sample: ValueError: no plant here"
        elif draw <= 0.3:
            assert row["status"] == "failed" and row["error"].startswith("ParameterError: robot planar2: link 2")
            assert np.isnan(row["peak_torque"]) and row["param.M2"] == -1.0
        else:
            assert row["status"] == "ok" and row["error"] == "" and row["peak_torque"] > 0
    assert {"ok", "failed"} <= set(table["status"])


def test_passive_runs_and_limits():
    """No controller: no tracking error, no torque; a position limit crossed clears within_limits, a terminal event sets fell."""
    far = kr.simulation.event(lambda t, q, qd: q[0] - 1.0, terminal=True, name="far")
    x0 = {"x0": ([0.0, 0.2, 0.5, -1.0], [0.0, 0.3, 2.5, 1.0])}
    table = kr.campaign(PLANAR, PLANAR_VALUES, None, runs=6, sample=x0, t_span=(0.0, 1.0), samples=11, scheduler="in-process",
                        backend="numpy", limits={"2": (-0.1, 0.35)}, events=[far])  # fmt: skip
    assert table["rms_tracking_error"].isna().all() and (table["peak_torque"] == 0).all() and (table["energy"] == 0).all()
    fn = kr.derive(PLANAR).numeric(PLANAR_VALUES, backend="numpy")
    for _, row in table.iterrows():
        start = [row[f"x0.{k}"] for k in range(4)]
        assert 0.2 <= start[1] <= 0.3 and -1.0 <= start[3] <= 1.0
        sim = kr.simulate(fn, None, start, (0.0, 1.0), t_eval=np.linspace(0, 1, 11),
                          events=[kr.simulation.joint_limit("2", -0.1, 0.35, terminal=False), far])  # fmt: skip
        assert bool(row["within_limits"]) == (len(sim.events["limit 2"]["t"]) == 0)
        assert bool(row["fell"]) == (sim.terminated_by == "far") and row["final_time"] == sim.t[-1]
        assert row["terminated_by"] == (sim.terminated_by or "")
    assert set(table["within_limits"]) == {True, False} and set(table["fell"]) == {True, False}


def test_identified_covariance_draws_base_parameters(tmp_path):
    """MultivariateNormal.from_identification: each plant's base parameters T K are the ones drawn."""
    robot = PLANAR
    true = {"ZZ1": 0.5, "ZZ2": 0.2, "MX2": 0.3, "MY2": 0.05, "M2": 1.0, "IA1": 0.1, "IA2": 0.05, "FV1": 0.2, "FV2": 0.1, "FS1": 0.3, "FS2": 0.2}
    values = dict(dict.fromkeys(kr.derive(robot).parameters, 0.0), L1=0.5, **true)
    fn = kr.derive(robot).numeric(values)
    t = np.linspace(0.0, 4.0, 401)
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    qd = np.column_stack([2 * np.cos(2 * t), -3 * np.sin(3 * t)])
    qdd = np.column_stack([-4 * np.sin(2 * t), -9 * np.cos(3 * t)])
    tau = fn.inverse_dynamics(q, qd, qdd) + 0.01 * np.random.default_rng(1).standard_normal((401, 2))
    result = kr.identify(robot, {"t": t, "q": q, "qd": qd, "qdd": qdd, "tau": tau}, values={"L1": 0.5})
    dist = MultivariateNormal.from_identification(result)
    draw = dist.draw(np.random.default_rng(4))
    K = np.array([draw[name] for name in result.regressors.parameters])
    z = np.random.default_rng(4).standard_normal(len(result.names))
    expected = result.values + np.linalg.cholesky(result.covariance) @ z
    np.testing.assert_allclose(result.T @ K, expected, rtol=1e-12, atol=1e-15)
    table = kr.campaign(robot, values, "computed_torque", runs=2, sample=result, t_span=(0.0, 0.2), samples=5,
                        scheduler="in-process", backend="numpy", physical=False)  # fmt: skip
    assert set(table["status"]) == {"ok"}, list(table["error"])


def test_bad_input_gives_one_clear_error(tmp_path):
    common = dict(runs=2, t_span=(0.0, 0.1), scheduler="in-process", backend="numpy")
    with pytest.raises(KaneRobotError, match=r"^sample: 'ZZ7' is not a parameter of the model \(its parameters: FS1, FS2, .*\) nor one of q0, x0, target$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"ZZ7": (0.1, 0.2)}, **common)
    with pytest.raises(KaneRobotError, match=r"^sample\['M2'\] \(low, high\) = \(1.2, 0.8\): low 1.2 is above high 0.8: give \(low, high\) with low <= high$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (1.2, 0.8)}, **common)
    with pytest.raises(KaneRobotError, match=r"^covariance of M2, ZZ2 is not positive definite \(smallest eigenvalue -0.5\): give a symmetric"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"inertia": MultivariateNormal(["M2", "ZZ2"], [1.0, 0.35], [[0.5, 1.0], [1.0, 0.5]])}, **common)
    with pytest.raises(KaneRobotError, match=r"^normal: standard deviation -0.1 is negative"):
        Normal(1.0, -0.1)
    afile = tmp_path / "table.parquet"
    afile.write_text("")
    with pytest.raises(KaneRobotError, match=rf"^store {afile} is a file: give a folder \(it is created if missing\)$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=afile, **common)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(KaneRobotError, match=r"^store .*/other is a folder that holds other files: give an empty or new folder$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=tmp_path / "other", **common)
    kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=tmp_path / "s", **common)
    with pytest.raises(KaneRobotError, match=r"^store .*/s holds another campaign \(seed: 0 there, 1 now\): give another folder"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=tmp_path / "s", seed=1, **common)
    # settings that change the numbers but are no name of the record: refused too, not mixed into the old table
    with pytest.raises(KaneRobotError, match=r"^store .*/s holds another campaign \(settings: "):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=tmp_path / "s", rtol=1e-9, **common)
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "campaign.json").write_text('{"robot": "plan')  # a record cut short
    with pytest.raises(KaneRobotError, match=r"^store .*/cut: campaign.json is not the record of a campaign \(.*\): give another folder$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, store=tmp_path / "cut", **common)
    law = MultivariateNormal(["M2", "ZZ2"], [1.0, 0.35], [[0.01, 0.0], [0.0, 0.0004]])
    kr.campaign(PLANAR, PLANAR_VALUES, sample={"inertia": law}, store=tmp_path / "m", **common)
    with pytest.raises(KaneRobotError, match=r"^store .*/m holds another campaign \(sample: "):  # the same names, another covariance
        other = MultivariateNormal(["M2", "ZZ2"], [1.0, 0.35], [[0.02, 0.0], [0.0, 0.0004]])
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"inertia": other}, store=tmp_path / "m", **common)
    with pytest.raises(KaneRobotError, match=r"^limits\['1'\] must be a pair \(lower, upper\), None for no bound; got 2.0$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, limits={"1": 2.0}, **common)
    with pytest.raises(KaneRobotError, match=r"^Processes\(workers=-1\): give a number of processes >= 1"):
        Processes(workers=-1)
    with pytest.raises(KaneRobotError, match=r"^unknown scheduler 'threads': give 'in-process', 'processes'"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, **(common | {"scheduler": "threads"}))
    with pytest.raises(KaneRobotError, match=r"^x0 for planar2 must have 4 values: q \(2\) then qd \(2\); got 3$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"M2": (0.9, 1.1)}, x0=[0, 0, 0], **common)
    with pytest.raises(KaneRobotError, match=r"^sample\['target'\] has 3 values; target has 2$"):
        kr.campaign(PLANAR, PLANAR_VALUES, sample={"target": ([0, 0, 0], [1, 1, 1])}, **common)
    fourbar = kr.load(kr.frames_path("fourbar"))
    with pytest.raises(KaneRobotError, match=r"^fourbar \(closed loop\): q = 0 need not be a state of it: give x0, or draw q0 or x0$"):
        kr.campaign(fourbar, dict.fromkeys(kr.derive(fourbar).parameters, 1.0), sample={"target": (0.0, 0.1)}, physical=False, **common)
    with pytest.raises(KaneRobotError, match=r"^unknown controller 'lqr': use computed_torque, pd_gravity, pd"):
        kr.campaign(PLANAR, PLANAR_VALUES, "lqr", sample={"M2": (0.9, 1.1)}, **common)


def test_one_distribution_serves_two_entries_and_is_left_as_given():
    """A Normal given for q0 (2 values) and for target (2 values) of planar2 is sized per entry on a copy:
    the object the user gave keeps its shape, and the draws are those of two separate Normals."""
    spread = Normal(0.0, 0.1)
    shared = Sampler({"q0": spread, "target": spread}, ["ZZ2"], {"q0": 2, "target": 2})(3, 0)
    apart = Sampler({"q0": Normal(0.0, 0.1), "target": Normal(0.0, 0.1)}, ["ZZ2"], {"q0": 2, "target": 2})(3, 0)
    assert spread.shape == () and np.array_equal(shared.q0, apart.q0) and np.array_equal(shared.target, apart.target)


def test_missing_extra_is_named(monkeypatch):
    """Without pandas (the cluster extra): one line saying what to install, before any work."""
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(KaneRobotError, match=r"^kr.campaign needs pandas, which is not installed: pip install 'kanerobot\[cluster\]'$"):
        kr.campaign(PLANAR, PLANAR_VALUES, runs=1, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), scheduler="in-process")


def test_cli_campaign(tmp_path, capsys):
    from kanerobot.cli import main

    argv = ["campaign", "planar2", "--runs", "3", "--sample", "MX2=0.3:0.4", "--sample", "target=-1:1", "--t-span", "0:0.2",
            "--samples", "11", "--store", str(tmp_path / "s"), "--scheduler", "in-process"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("runs 3, ok ") and "max_tracking_error" in out
    assert main(argv) == 0  # again: nothing left to run
    assert "(3 runs were there, 0 run now)" in capsys.readouterr().err
    assert main(["campaign", "planar2", "--runs", "1", "--sample", "MX2=0.3", "--scheduler", "in-process"]) == 2
    assert "--sample MX2=0.3: give NAME=LOW:HIGH" in capsys.readouterr().err



def closed_port():
    """A port of this machine nothing listens on: one just bound and let go."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nominal_file(folder):
    """PLANAR_VALUES as a --values file (no line about random nominal values on stderr)."""
    path = folder / "nominal.toml"
    path.write_text("".join(f"{name} = {value!r}\n" for name, value in PLANAR_VALUES.items()))
    return str(path)


def test_unreachable_scheduler_is_one_line(capsys, monkeypatch, tmp_path):
    """``--scheduler tcp://127.0.0.1:1`` raised dask's OSError after 30 s; now one line after the connect timeout
    (shortened here: the default, schedulers.CONNECT_TIMEOUT, is 5 s), naming the address and the option."""
    from kanerobot.campaign import schedulers
    from kanerobot.cli import main

    address = f"tcp://127.0.0.1:{closed_port()}"
    argv = ["campaign", "planar2", "--runs", "2", "--sample", "M2=0.9:1.1", "--t-span", "0.1", "--samples", "5", "--scheduler", address,
            "--values", nominal_file(tmp_path), "--store", str(tmp_path / "store")]  # fmt: skip
    assert main(argv + ["--connect-timeout", "0.2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == (f"kanerobot: error: no dask scheduler answered at {address} within 0.2 s: start one there "
                       f"(dask scheduler --port PORT) or give its address; wait longer with --connect-timeout SECONDS "
                       f"(Python: Dask(address, timeout=SECONDS))"), err  # fmt: skip
    assert not list((tmp_path / "store").glob("*.parquet"))  # no row written
    with pytest.raises(KaneRobotError, match=r"^no dask scheduler answered at tcp://127\.0\.0\.1:\d+ within 0\.1 s: start one"):
        kr.campaign(PLANAR, PLANAR_VALUES, runs=1, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), scheduler=schedulers.Dask(address, timeout=0.1))
    monkeypatch.setattr(schedulers, "CONNECT_TIMEOUT", 0.1)  # the default a bare address gets
    with pytest.raises(KaneRobotError, match=r"within 0\.1 s"):
        kr.campaign(PLANAR, PLANAR_VALUES, runs=1, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), scheduler=address)
    with pytest.raises(KaneRobotError, match=r"^'localhost:http' is not a dask scheduler's address: give tcp://HOST:PORT"):
        kr.campaign(PLANAR, PLANAR_VALUES, runs=1, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), scheduler="localhost:http")


def test_store_nobody_can_create_is_one_line(tmp_path):
    """A store under a file, or in /proc (root may write anywhere else): what keeps it from being created, not ENOENT."""
    (tmp_path / "notes.txt").write_text("")
    common = dict(runs=1, sample={"M2": (0.9, 1.1)}, t_span=(0.0, 0.1), scheduler="in-process", backend="numpy")
    with pytest.raises(KaneRobotError, match=r"^cannot create the store folder .*notes\.txt/s: .*notes\.txt is a file, not a folder$"):
        kr.campaign(PLANAR, PLANAR_VALUES, store=tmp_path / "notes.txt" / "s", **common)
    if os.path.isdir("/proc"):
        with pytest.raises(KaneRobotError, match=r"^cannot create the store folder /proc/s: folder /proc is not writable$"):
            kr.campaign(PLANAR, PLANAR_VALUES, store="/proc/s", **common)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_campaign_whose_every_run_fails_exits_2(tmp_path, capsys):
    """Negative masses drawn for every run: exit status 0 before; now the summary, then one error line and exit 2.
    A campaign where some runs ran still exits 0: its failures are counted in the summary."""
    from kanerobot.cli import main

    common = ["campaign", "planar2", "--runs", "3", "--t-span", "0.1", "--samples", "5", "--scheduler", "in-process",
              "--values", nominal_file(tmp_path)]  # fmt: skip
    assert main(common + ["--sample", "M2=-5:-4"]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("runs 3, ok 0, failed 3\n")
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kanerobot: error: every run of the campaign failed (3 of 3); run 0: ParameterError: "), err
    assert err[0].endswith("mass M = -4.36304 < 0; give physical values, or numeric(..., physical=False) for values that need not be "
                           "(base parameters)"), err[0]  # fmt: skip
    assert main(common + ["--sample", "M2=-1:1.5"]) == 0  # some plants are physical, some not
    out = capsys.readouterr().out
    ok = int(out.split(", ok ")[1].split(",")[0])
    assert 0 < ok < 3, out


@pytest.mark.slow
def test_acceptance_200_rx90_runs_identical_everywhere(rx90_values):
    """The issue's acceptance: 200 RX-90 runs, identical metrics in-process, with local processes and on a LocalCluster of 2 workers."""
    distributed = pytest.importorskip("distributed", reason="pip install 'kanerobot[cluster]'")
    common = dict(sample=rx90_sample(rx90_values), runs=200, t_span=(0.0, 0.5), samples=51)
    here = kr.campaign(RX90, rx90_values, "computed_torque", scheduler="in-process", **common)
    local = kr.campaign(RX90, rx90_values, "computed_torque", scheduler="processes", **common)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = kr.campaign(RX90, rx90_values, "computed_torque", scheduler=client, **common)
    assert (here["status"] == "ok").all() and list(here["run"]) == list(range(200))
    assert same_columns(local).equals(same_columns(here)) and same_columns(dask).equals(same_columns(here))


def test_a_wheeled_base_runs_on_processes_as_in_process():
    """Local processes warm the tree's compiled programs of a structure (the wheels' constrained model has none of its
    own, which made the campaign fail): the same table as in-process."""
    robot = kr.load(kr.frames_path("diffdrive"))
    values = random_parameters(robot, np.random.default_rng(0), friction=False, wrench=False)
    common = dict(runs=2, sample={"Mwr": (0.9 * values["Mwr"], 1.1 * values["Mwr"])}, t_span=(0.0, 0.2), samples=5, seed=3,
                  x0=np.zeros(robot.nj + 2))  # fmt: skip
    here = kr.campaign(robot, values, "pd_gravity", scheduler="in-process", **common)
    assert set(here["status"]) == {"ok"}
    assert same_columns(kr.campaign(robot, values, "pd_gravity", scheduler="processes", **common)).equals(same_columns(here))
