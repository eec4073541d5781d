"""A class's Dask scheduler: bootstrap and sweep chunks run on it with the same results, to the last bit,
as on local processes; the app's jobs go there when DPCI_SCHEDULER (or secrets.toml) names one; an
unreachable scheduler or a missing Dask is a message saying what to do."""

import sys
import time
from functools import partial

import numpy as np
import pytest
from conftest import rows_with_constant

from dpci import LogisticLoss, ReleaseSpec
from dpci.experiments import cluster
from dpci.experiments.bootstrap import coverage, iter_coverage, iter_variability, variability_intervals
from dpci.experiments.sweeps import iter_split_sweep

SPEC = ReleaseSpec("objective", "pure", 1.0, loss=LogisticLoss())

distributed = pytest.importorskip("distributed", reason="dask is optional: pip install -e '.[cluster]'")


@pytest.fixture(scope="module")
def data():
    return rows_with_constant(7, 1200, [1.5, -1.0, 0.5, 0.2])


@pytest.fixture(scope="module")
def scheduler():
    """A LocalCluster of two worker processes (processes: the app's runs lower their workers' priority,
    which in a thread would lower the test's); its address, and a function counting the chunks it ran."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local_cluster:
        address = local_cluster.scheduler_address

        def ran():
            """Chunks computed by the cluster's workers so far."""
            scheduler = local_cluster.scheduler
            return sum(
                p.state_counts["memory"] for name, p in scheduler.task_prefixes.items() if name.startswith("batch_of_")
            )

        yield address, ran
        cluster.close_clients()


def _last(gen):
    for state in gen:
        pass
    return state


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_variability_on_a_scheduler_is_bit_identical(data, scheduler, n_jobs):
    X, y = data
    address, ran = scheduler
    kw = dict(n_replicates=200, random_state=3)
    local = variability_intervals(X, y, SPEC, **kw)
    before = ran()
    make = partial(iter_variability, X, y, SPEC, n_jobs=n_jobs, low_priority=True, **kw)
    remote = _last(cluster.run_on(address, make))
    assert ran() > before, "no chunk ran on the scheduler's workers"
    np.testing.assert_array_equal(local.estimates, remote.estimates)
    assert local.to_frame().equals(remote.to_frame())


def test_coverage_and_a_sweep_on_a_scheduler_are_bit_identical(data, scheduler):
    X, y = data
    address, ran = scheduler
    spec = ReleaseSpec("output", "zcdp", 0.5, loss=LogisticLoss(), n_samples=500)
    kw = dict(n_replicates=48, random_state=4)
    local = coverage(X, y, spec, **kw)
    before = ran()
    remote = _last(cluster.run_on(address, partial(iter_coverage, X, y, spec, **kw)))
    assert ran() > before
    np.testing.assert_array_equal(local.bounds, remote.bounds)
    sweep = partial(iter_split_sweep, X, y, SPEC.replace(n_samples=300), shares=(0.6, 0.8), n_replicates=24)
    assert _last(sweep()).frame.equals(_last(cluster.run_on(address, sweep)).frame)


def test_a_job_thread_enters_the_backend_itself(data, scheduler, monkeypatch):
    """The app's path: ui.cluster.scheduled wraps the factory in the page's thread; the Job's own thread
    enters the backend (joblib's configuration is per thread) and leaves it when the job ends."""
    from ui.cluster import scheduled
    from ui.jobs import Job

    X, y = data
    address, ran = scheduler
    kw = dict(n_replicates=120, random_state=5)
    make = partial(iter_variability, X, y, SPEC, n_jobs=2, **kw)
    monkeypatch.delenv("DPCI_SCHEDULER", raising=False)
    assert scheduled(make) is make  # no scheduler: the factory as it was
    before = ran()
    job = Job("k", scheduled(make, address=address))
    assert job.wait(60) and job.error is None, job.error
    assert ran() > before
    np.testing.assert_array_equal(job.latest.estimates, variability_intervals(X, y, SPEC, **kw).estimates)
    assert cluster.scheduler_here() is None  # this thread never entered it


def test_one_client_per_address(scheduler):
    address, _ = scheduler
    assert cluster.client_for(address) is cluster.client_for(address)


def test_the_address_comes_from_the_environment_or_secrets():
    from ui.cluster import scheduled, scheduler_address

    assert scheduler_address({}, {}) is None
    assert scheduler_address({"DPCI_SCHEDULER": " tcp://s:8786 "}, {}) == "tcp://s:8786"
    assert scheduler_address({}, {"dpci": {"scheduler": "tcp://t:8786"}}) == "tcp://t:8786"
    assert scheduler_address({"DPCI_SCHEDULER": "tcp://s:8786"}, {"dpci": {"scheduler": "tcp://t:8786"}}) == (
        "tcp://s:8786"
    )  # the environment wins, as for the ledger's settings
    wrapped = scheduled(iter, address="tcp://s:8786")
    assert wrapped.func is cluster.run_on and wrapped.args == ("tcp://s:8786", iter)


def test_an_unreachable_scheduler_is_a_message():
    gen = cluster.run_on("tcp://127.0.0.1:9", lambda: iter([1]), timeout=1)
    with pytest.raises(ValueError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        next(gen)
    assert cluster.scheduler_here() is None


def test_without_dask_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(ValueError, match=r"\.\[cluster\]"):
        cluster.client_for("tcp://127.0.0.1:9")


def test_the_app_starts_no_local_workers_with_a_scheduler(monkeypatch):
    from dpci.experiments import bootstrap
    from ui import background

    called = []
    monkeypatch.setattr(bootstrap, "workers_running", lambda: False)
    monkeypatch.setattr(bootstrap, "warm_up_workers", lambda *a: called.append(a))
    monkeypatch.setenv("DPCI_SCHEDULER", "tcp://127.0.0.1:9")
    background.warm_workers()
    monkeypatch.delenv("DPCI_SCHEDULER")
    background.warm_workers()  # without one, it warms the local pool (in a thread)
    for _ in range(100):
        if called:
            break
        time.sleep(0.02)
    assert called == [(background.VI_JOBS,)]


def test_the_rows_travel_once_per_run_not_with_every_chunk(data):
    """joblib's Dask backend scatters an argument larger than 1 kB once per run: the population says its
    size (its rows), so it is sent once, not pickled into each of a run's chunks."""
    from dask.sizeof import sizeof

    from dpci.experiments.bootstrap import _population

    X, y = data
    pop = _population(X, y, SPEC, True)
    assert sizeof(pop) >= pop.A.nbytes > 1e3
