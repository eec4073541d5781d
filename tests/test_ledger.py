"""The privacy ledger: the filter against hand-computed values, persistence, concurrency, release
storage, and the conversions against an independent accountant (OpenDP)."""

import math
import multiprocessing
import os
import sqlite3
import threading
import time

import numpy as np
import pytest

import dpci
from dpci.ledger import Budget, BudgetExceeded, Ledger, NotCovered, tight_epsilon, tight_rho
from dpci.methods import allocate
from dpci.spec import ReleaseSpec


def spend(budget, privacy="pure", mechanism="output"):
    return allocate(budget, None, mechanism, privacy).spend


@pytest.fixture(scope="module")
def postgres():
    """A function making a fresh database on a throw-away PostgreSQL server (tests/postgres.py)."""
    from tests.postgres import throwaway_server, unavailable

    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: .ci/run installs it")  # a silent skip in CI would hide a broken setup
        pytest.skip(reason)
    with throwaway_server() as new_database:
        yield new_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """A fresh ledger database: an SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    return request.getfixturevalue("postgres")()


def ledger_with(budget, url="sqlite://", **kwargs):
    ledger = Ledger(url, budget=budget, secret=b"test-secret")
    key = ledger.key_of(b"some data")
    ledger.register(key, "test data", **kwargs)
    return ledger, key


# --- the filter ---------------------------------------------------------------------------------
def test_pure_releases_are_refused_exactly_at_the_budget(database):
    ledger, key = ledger_with("epsilon=1", database)
    for _ in range(10):  # ten at 0.1: the shares' products round to 1 + 2e-16 in all, within ROUNDING
        ledger.admit(key, spend(0.1), what="r")
    assert ledger.status(key).spent == pytest.approx(1.0, abs=1e-15) and ledger.status(key).releases == 10
    with pytest.raises(BudgetExceeded, match=r"costs ε = 1e-06.*total would be 1.*budget of 1") as caught:
        ledger.admit(key, spend(1e-6), what="one too many")
    assert caught.value.spent == pytest.approx(1.0, abs=1e-15) and caught.value.budget == 1.0
    assert ledger.status(key).releases == 10  # nothing written


def test_a_pure_budget_refuses_a_zcdp_release_and_admits_pure_ones_by_their_epsilon():
    ledger, key = ledger_with("epsilon=3")
    with pytest.raises(NotCovered, match="pure ε-DP"):
        ledger.admit(key, spend(0.1, "zcdp"), what="gaussian")
    ledger.admit(key, spend(2.0), what="pure")
    assert ledger.status(key).spent == pytest.approx(2.0, abs=1e-15)
    assert ledger.preview(key, spend(1.0)).admitted
    assert not ledger.preview(key, spend(1.01)).admitted


def test_zcdp_budget_sums_rho_and_counts_a_pure_release_as_epsilon_squared_over_two():
    ledger, key = ledger_with("rho=1,delta=1e-6")
    ledger.admit(key, spend(0.3, "zcdp"), what="gaussian")  # rho 0.3
    # pure epsilon 1 split (0.8, 0.1, 0.1): each step epsilon_i^2 / 2 (Proposition 1), composed:
    # 0.32 + 0.005 + 0.005 = 0.33, tighter than the whole release's 1^2 / 2 = 0.5
    ledger.admit(key, spend(1.0), what="pure epsilon 1")
    ledger.admit(key, spend(0.2, "zcdp", "objective"), what="objective, zcdp")  # its pure step counted in rho
    assert ledger.status(key).spent == pytest.approx(0.3 + 0.33 + 0.2, abs=1e-15)
    ledger.admit(key, spend(0.17, "zcdp"), what="the rest")
    with pytest.raises(BudgetExceeded):
        ledger.admit(key, spend(1e-6, "zcdp"), what="too much")


def test_mixed_sequence_refused_exactly_where_the_hand_sum_passes_the_budget(database):
    ledger, key = ledger_with("rho=0.5,delta=1e-6", database)
    charges = [("zcdp", 0.125), ("pure", 0.5), ("zcdp", 0.125), ("pure", 0.5), ("zcdp", 0.1)]
    # each pure 0.5, split (0.8, 0.1, 0.1): (0.4^2 + 0.05^2 + 0.05^2) / 2 = 0.0825
    hand = [0.125, 0.0825, 0.125, 0.0825, 0.1]
    admitted = []
    for (notion, amount), cost in zip(charges, hand):
        ok = math.fsum(admitted) + cost <= 0.5
        if ok:
            ledger.admit(key, spend(amount, notion), what=notion)
            admitted.append(cost)
        else:
            with pytest.raises(BudgetExceeded):
                ledger.admit(key, spend(amount, notion), what=notion)
    assert len(admitted) == 4  # 0.415 spent; 0.1 more would be 0.515 > 0.5
    assert ledger.status(key).spent == pytest.approx(0.415, abs=1e-15)


def test_group_privacy_multiplies_epsilon_by_k_and_rho_by_k_squared():
    ledger, key = ledger_with("epsilon=10", group_size=3)
    assert ledger.admit(key, spend(1.0), what="r").charge == pytest.approx(3.0)
    ledger2, key2 = ledger_with("rho=10,delta=1e-6", group_size=3)
    assert ledger2.admit(key2, spend(0.5, "zcdp"), what="r").charge == pytest.approx(4.5)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "x", None])
def test_group_size_must_be_a_whole_number(bad):
    with pytest.raises(ValueError, match="whole number >= 1"):
        Budget.pure(1.0).charge(spend(1.0), bad)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("epsilon=3", Budget("pure", 3.0, 0.0)),
        ("rho=0.5,delta=1e-6", Budget("zcdp", 0.5, 1e-6)),
        ("rho = 0.5", Budget("zcdp", 0.5, 1e-6)),
    ],
)
def test_budgets_parse_from_configuration_text(text, expected):
    assert Budget.parse(text) == expected


@pytest.mark.parametrize("text", ["", "epsilon=3,rho=1", "eps=3", "epsilon=x", "epsilon=-1", "rho=1,delta=2"])
def test_bad_budget_text_is_refused_with_the_forms_it_takes(text):
    with pytest.raises(ValueError, match="budget"):
        Budget.parse(text)


def test_an_approx_budget_is_the_largest_rho_at_that_epsilon():
    b = Budget.parse("epsilon=3,delta=1e-6")
    assert b.notion == "zcdp" and b.delta == 1e-6
    assert tight_epsilon(b.amount, 1e-6) == pytest.approx(3.0, abs=1e-9)
    assert tight_epsilon(b.amount * 1.001, 1e-6) > 3.0


# --- conversions against OpenDP ------------------------------------------------------------------
opendp = pytest.importorskip("opendp.prelude")


def _opendp_gaussian(scale):
    dp = opendp
    dp.enable_features("contrib")
    return dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale)


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.125, 0.5, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_zcdp_to_approx_dp_equals_opendp(rho, delta):
    dp = opendp
    gaussian = _opendp_gaussian(1.0 / math.sqrt(2.0 * rho))  # sensitivity 1: rho = 1 / (2 scale^2)
    assert gaussian.map(1.0) == pytest.approx(rho, rel=1e-12)
    theirs = dp.c.make_zCDP_to_approxDP(gaussian).map(1.0).epsilon(delta)
    ours = tight_epsilon(rho, delta)
    assert ours == pytest.approx(theirs, abs=1e-9, rel=1e-9)
    assert ours < dpci.accounting.zcdp_to_approx_dp(rho, delta)  # tighter than Proposition 2


def test_the_issue_example_rho_half_is_5_22_not_5_76():
    assert tight_epsilon(0.5, 1e-6) == pytest.approx(5.2215, abs=1e-4)
    assert tight_rho(tight_epsilon(0.5, 1e-6), 1e-6) == pytest.approx(0.5, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_pure_to_zcdp_equals_opendp(epsilon):
    dp = opendp
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    release = spend(epsilon)  # three pure steps (output perturbation, Table 2's 0.8, 0.1, 0.1)
    steps = [dp.c.make_pureDP_to_zCDP(dp.m.make_laplace(*space, scale=1.0 / s.epsilon)) for s in release.steps]
    theirs = dp.c.make_composition(steps).map(1.0)  # each step's epsilon^2 / 2, composed in zCDP
    assert Budget.zcdp(100.0).charge(release) == pytest.approx(theirs, rel=1e-9)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_group_privacy_equals_opendp_at_distance_k(k):
    dp = opendp
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    laplace = dp.m.make_laplace(*space, scale=2.0)  # epsilon 0.5 at distance 1
    gaussian = _opendp_gaussian(2.0)  # rho 0.125 at distance 1
    assert Budget.pure(100).charge(spend(0.5), k) == pytest.approx(laplace.map(float(k)), rel=1e-9)
    assert Budget.zcdp(100).charge(spend(0.125, "zcdp"), k) == pytest.approx(gaussian.map(float(k)), rel=1e-9)


# --- persistence, keys, budgets fixed in advance -------------------------------------------------
def test_a_file_ledger_survives_a_restart_and_keys_do_not_reveal_the_rows(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    first = Ledger(url, budget="epsilon=3")
    key = first.key_of(np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0, 1.0]))
    first.register(key, "three rows")
    first.admit(key, spend(1.0), what="r1")
    first.close()
    again = Ledger(url)  # a restart: the secret is read back from beside the database
    assert again.key_of(np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0, 1.0])) == key
    assert again.status(key).spent == pytest.approx(1.0) and again.status(key).budget == Budget.pure(3.0)
    assert (tmp_path / "secret.key").stat().st_mode & 0o077 == 0  # the owner's only
    other = Ledger(secret=b"another server")
    assert other.key_of(np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0, 1.0])) != key  # keyed: no guessing
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM dpci_meta WHERE key = 'schema_version'").fetchone()[0] == "3"


def test_a_version_1_database_gains_the_shared_results_and_the_column_fingerprints(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    Ledger(url).close()
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:  # as version 1 left it: neither table
        conn.execute("DROP TABLE dpci_results")
        conn.execute("DROP TABLE dpci_columns")
        conn.execute("UPDATE dpci_meta SET value = '1' WHERE key = 'schema_version'")
    assert Ledger(url).schema_version == 3
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:
        assert conn.execute("SELECT count(*) FROM dpci_results").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM dpci_columns").fetchone()[0] == 0


def test_a_newer_schema_is_refused_with_a_clear_message(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    Ledger(url).close()
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:
        conn.execute("UPDATE dpci_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(RuntimeError, match="upgrade dpci"):
        Ledger(url)


def test_the_budget_is_fixed_before_the_first_release_and_only_demo_data_resets(database):
    ledger, key = ledger_with("epsilon=3", database)
    ledger.set_budget(key, "epsilon=1", group_size=2)  # before any release: allowed
    assert ledger.status(key).budget == Budget.pure(1.0) and ledger.status(key).group_size == 2
    ledger.admit(key, spend(0.25), what="r")
    with pytest.raises(ValueError, match="cannot change"):
        ledger.set_budget(key, "epsilon=100")
    ledger.register(key, "again", budget="epsilon=100")  # registering again changes nothing
    assert ledger.status(key).budget == Budget.pure(1.0)
    with pytest.raises(ValueError, match="only demo data"):
        ledger.reset(key)
    demo = ledger.key_of(b"adult", scope="visitor-1")
    ledger.register(demo, "Adult", demo=True)
    ledger.admit(demo, spend(1.0), what="r")
    assert ledger.reset(demo) == 1 and ledger.status(demo).spent == 0


def test_demo_data_is_scoped_per_visitor_with_the_server_total_beside_it():
    ledger = Ledger(secret=b"s", demo_budget="epsilon=2")
    a, b = ledger.key_of(b"adult", scope="visitor-a"), ledger.key_of(b"adult", scope="visitor-b")
    for key in (a, b):
        ledger.register(key, "Adult", demo=True)
    ledger.admit(a, spend(2.0), what="a's release")
    ledger.admit(b, spend(1.5), what="b's release")  # a's spend does not use up b's budget
    status = ledger.status(b)
    assert status.spent == pytest.approx(1.5, abs=1e-15) and status.server_spent == pytest.approx(3.5, abs=1e-15)
    assert (status.releases, status.server_releases) == (1, 2)
    ledger.admit(a, spend(0.1), what="a again")  # practice data: past the budget, counted and marked
    assert ledger.practice(a).refused == (False, True) and ledger.practice(b).refused == (False,)


def test_a_curator_replays_the_filter_and_a_refused_release_adds_nothing():
    from dpci.ledger.filter import curator_refusals

    budget = Budget.pure(2.0)
    assert curator_refusals(budget, [1.5, 1.0, 0.5]) == [False, True, False]  # 1.5 + 0.5 = 2: within
    assert curator_refusals(budget, [None, 2.0, 1e-9]) == [True, False, True]  # None: a notion it cannot count


@pytest.mark.parametrize("practice", [True, False], ids=["practice data", "real data"])
@pytest.mark.parametrize("budget", ["epsilon=2", "rho=1.4,delta=1e-6"], ids=["pure budget", "zcdp budget"])
def test_practice_data_counts_every_release_and_real_data_refuses(practice, budget):
    """The same requests: on practice data every release is charged, in ε and ρ, and those a curator
    with the budget would refuse are marked; on real data the filter refuses them."""
    ledger = Ledger(secret=b"s", budget=budget, demo_budget=budget)
    key = ledger.key_of(b"rows", scope="visitor" if practice else "")
    ledger.register(key, "rows", demo=practice)
    # output perturbation, Table 2's split (0.8, 0.1, 0.1): rho = sum (share x eps)^2 / 2 per step
    requests = [(spend(2.0), 1.32), (spend(0.1), 0.0033), (spend(0.5, "zcdp"), 0.5)]
    pure = budget.startswith("epsilon")
    # pure 2: 2.0 fills it, 0.1 is over, a zCDP release no ε counts; rho 1.4: 1.32 fits, 0.0033 too, 0.5 not
    expected = (False, True, True) if pure else (False, False, True)
    for i, (asked, _) in enumerate(requests):
        if not practice and expected[i]:
            with pytest.raises(NotCovered if pure and i == 2 else BudgetExceeded):
                ledger.admit(key, asked, what=f"release {i}")
            continue
        ledger.admit(key, asked, what=f"release {i}")
    if not practice:
        assert ledger.status(key).releases == expected.count(False)
        return
    book = ledger.practice(key)
    assert book.refused == expected and book.releases == 3 and book.over == sum(expected)
    assert book.rho == pytest.approx(math.fsum(r for _, r in requests), rel=1e-12)
    assert book.epsilon is None  # a zCDP release: no ε describes the total
    assert "a curator would refuse this release" in book.mark() and "ρ = 1.82" in book.conversion()
    preview = ledger.preview(key, spend(5.0))  # practice data: admitted, and said to be over
    assert preview.admitted and "a curator would refuse this release" in preview.reason


def test_a_dataset_registered_as_real_data_stays_real_data():
    """A key registered without ``demo`` is never practice data, whatever a later registration says."""
    ledger = Ledger(secret=b"s", budget="epsilon=1")
    key = ledger.key_of(b"an upload")
    ledger.register(key, "upload")
    ledger.register(key, "upload", demo=True)
    ledger.admit(key, spend(1.0), what="fills it")
    with pytest.raises(BudgetExceeded):
        ledger.admit(key, spend(0.5), what="refused")


def test_the_history_lists_private_and_not_private_results_with_the_total_before_each():
    ledger, key = ledger_with("epsilon=3")
    ledger.admit(key, spend(1.0), what="first", spec={"budget": 1.0})
    ledger.note(key, what="bootstrap")
    ledger.admit(key, spend(0.5), what="second")
    rows = ledger.history(key)
    assert [(r["what"], r["private"], r["spent_before"]) for r in rows] == [
        ("first", True, 0.0),
        ("bootstrap", False, 1.0),
        ("second", True, 1.0),
    ]
    assert rows[0]["spec"] == {"budget": 1.0} and ledger.status(key).not_private == 1


def test_stored_releases_come_back_by_id_and_identity_without_drawing_anything(database):
    ledger, key = ledger_with("epsilon=3", database)
    admission = ledger.admit(key, spend(1.0), what="r")
    rid = ledger.store_release(admission, key, "spec-hash", {"budget": 1.0}, {"theta": np.array([0.5, -1.0])})
    assert len(rid) >= 20 and ledger.release(rid).payload == {"theta": [0.5, -1.0]}
    assert ledger.release(rid).charge["id"] == admission.id
    assert ledger.find_release(key, "spec-hash").id == rid
    assert ledger.find_release(key, "other") is None and ledger.release("nope") is None
    assert ledger.history(key)[0]["release"] == rid


# --- concurrency ------------------------------------------------------------------------------------
def _charge_many(url, key, count, amount):
    ledger = Ledger(url)
    for _ in range(count):
        ledger.admit(key, spend(amount), what="concurrent")
    ledger.close()


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_eight_threads_and_two_processes_never_lose_a_charge(database):
    url = database
    ledger = Ledger(url, budget="epsilon=1000")
    key = ledger.key_of(b"shared data")
    ledger.register(key, "shared")
    amounts = [0.01 * (i + 1) for i in range(10)]  # distinct amounts: a lost update changes the sum
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_charge_many, args=(url, key, 50, amounts[8 + i])) for i in range(2)]
    threads = [threading.Thread(target=_charge_many, args=(url, key, 50, amounts[i])) for i in range(8)]
    for worker in procs + threads:
        worker.start()
    for worker in procs + threads:
        worker.join(120)
    assert all(p.exitcode == 0 for p in procs)
    status = ledger.status(key)
    assert status.releases == 500
    assert status.spent == math.fsum(a for a in amounts for _ in range(50))  # exactly


# --- the library reports every release before drawing its noise ---------------------------------------
def _data(n=600):
    from dpci.data import make_synthetic_logistic

    return make_synthetic_logistic(n, [1.0, -0.5, 0.3], random_state=4)


def _estimator(X, y, rng):
    return dpci.PrivateLogisticRegression(
        mechanism="output", budget=1.0, n_samples=200, random_state=rng, classes=(-1.0, 1.0)
    ).fit(X, y)


def _function(X, y, rng):
    return dpci.private_confidence_intervals(
        X, y, dpci.LogisticLoss(), "output", "pure", 1.0, n_samples=200, random_state=rng
    )


def _search(X, y, rng):
    from dpci.accuracy_first import accuracy_first

    return accuracy_first(
        X,
        y,
        ReleaseSpec("output", privacy="pure", budget=1.0, n_samples=200),
        target=0.5,
        coefficients=[0],
        random_state=rng,
    )


def _tuned(X, y, rng):
    from dpci.methods.wu import tuned_release
    from dpci.solver import margin_rows

    return tuned_release(margin_rows(X, y), dpci.ReleaseSpec("wu", loss=dpci.LogisticLoss(), n_samples=200), rng)


def _walkthrough(X, y, rng):
    from dpci.teaching import walkthrough

    return walkthrough(X, y, dpci.LogisticLoss(), "output", "pure", 1.0, n_samples=200, random_state=rng)


RELEASING = {"estimator": _estimator, "function": _function, "search": _search, "tuned": _tuned}


@pytest.mark.parametrize("name", [*RELEASING, "walkthrough"])
def test_every_releasing_function_is_admitted_before_it_draws_noise(name, monkeypatch):
    call = {**RELEASING, "walkthrough": _walkthrough}[name]
    X, y = _data()
    rng = np.random.default_rng(11)
    start = rng.bit_generator.state
    seen = []
    for method in ("admit", "note"):
        original = getattr(Ledger, method)

        def spy(self, *args, _original=original, **kwargs):
            seen.append(rng.bit_generator.state == start)  # nothing drawn yet
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Ledger, method, spy)
    ledger = Ledger(budget="epsilon=10")
    with ledger as watch:
        call(X, y, rng)
    assert seen and seen[0], "the ledger was told only after noise was drawn"
    assert rng.bit_generator.state != start  # and the noise was drawn afterwards
    status = watch.status()
    if name == "walkthrough":  # it shows the noise and the non-private fit: never private
        assert (status.releases, status.not_private) == (0, 1)
    else:
        assert status.releases == 1 and status.spent > 0


@pytest.mark.parametrize("name", list(RELEASING))
def test_a_refused_release_draws_no_noise(name):
    X, y = _data()
    rng = np.random.default_rng(11)
    start = rng.bit_generator.state
    with Ledger(budget="epsilon=0.01"), pytest.raises(BudgetExceeded):
        RELEASING[name](X, y, rng)
    assert rng.bit_generator.state == start


def test_every_module_that_draws_from_data_reports_to_the_ledger():
    """A new releasing function must join: every dpci module that makes a random stream either reports
    to the ledger or is listed here with the reason it touches no private data."""
    from pathlib import Path

    no_private_data = {
        "noise.py": "defines check_random_state",
        "estimator_params.py": "validates random_state; the estimators fit through release._release",
        "estimator_base.py": "simulates the interval for theta from the release alone (dpci.theta); reads no data",
        "experiments/repeat.py": "draws fresh samples from a known synthetic truth",
        "experiments/sweeps.py": "sweeps report through the bootstrap, which notes itself",
        "experiments/reproduce/timing.py": "times the paper's runs on data it generates",
        "data/synthetic.py": "generates synthetic data",
        "data/awan_wang.py": "generates Awan and Wang's synthetic design",
        "recommend/widths.py": "draws public Monte Carlo (a fixed seed) to predict widths; reads no data",
        "recommend/search.py": "draws the interval matrices' public noise (a fixed seed) to predict widths; reads no data",
        "recommend/theta_width.py": "draws released Hessians of a public reference (a fixed seed); reads no data",
        "accuracy_first/baselines.py": "called by accuracy_first, which admits the search first",
    }
    root = Path(dpci.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        if "check_random_state(" in text or "default_rng(" in text:
            name = path.relative_to(root).as_posix()
            reports = "admit_release(" in text or "note_not_private(" in text
            assert reports or name in no_private_data, f"{name} draws randomness but never reports to the ledger"


def test_same_specification_with_fresh_randomness_is_charged_every_time():
    X, y = _data()
    with Ledger(budget="epsilon=10") as watch:
        for _ in range(3):
            _function(X, y, None)
    assert watch.status().releases == 3 and watch.status().spent == pytest.approx(3.0)


def test_two_releases_with_the_same_integer_seed_are_recorded_as_not_private():
    X, y = _data()
    with Ledger(budget="epsilon=10") as watch:
        r1 = dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), "output", "pure", 1.0, random_state=123)
        r2 = dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), "output", "pure", 2.0, random_state=123)
    status = watch.status()
    assert (status.releases, status.spent, status.not_private) == (0, 0.0, 2)
    history = watch.ledger.history(status.key)
    assert all(not r["private"] and "public seed 123" in r["what"] for r in history)
    # why: the two noises are one draw rescaled, so the non-private minimiser falls out of the pair
    theta_hat = (2.0 * r2.theta - 1.0 * r1.theta) / (2.0 - 1.0)
    reference = dpci.nonprivate_confidence_intervals(X, y, dpci.LogisticLoss()).theta
    np.testing.assert_allclose(theta_hat, reference, atol=1e-8)


def test_an_invalid_c_is_refused_before_anything_is_recorded():
    X, y = _data()
    with Ledger() as watch, pytest.raises(dpci.RegularisationTooSmall):
        dpci.private_confidence_intervals(X[:200], y[:200], dpci.LogisticLoss(), "objective", "pure", 0.1, c=1e-6)
    assert watch.admissions == []


def test_a_bootstrap_on_the_data_is_recorded_as_not_private():
    from dpci.experiments.bootstrap import variability_intervals

    X, y = _data()
    with Ledger() as watch:
        variability_intervals(X, y, ReleaseSpec(loss=dpci.LogisticLoss(), method="output"), n_replicates=20)
    status = watch.status()
    assert (status.releases, status.not_private) == (0, 1)
    assert watch.ledger.history(status.key)[0]["what"] == "bootstrap replicates of output on the data"


def test_outside_a_with_block_nothing_is_reported():
    X, y = _data()
    ledger = Ledger()
    _function(X, y, None)
    assert ledger.datasets() == []


def test_the_command_line_lists_sets_budgets_and_refuses_what_it_must(tmp_path, capsys):
    from dpci.experiments.cli import main

    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    ledger = Ledger(url, budget="epsilon=3")
    real, demo = ledger.key_of(b"real rows"), ledger.key_of(b"adult", scope="visitor")
    ledger.register(real, "real data")
    ledger.register(demo, "Adult", demo=True)
    assert main(["ledger", "--database", url, "set-budget", real[:8], "epsilon=1", "--rows-per-person", "2"]) == 0
    ledger.admit(real, spend(0.25), what="a release")
    ledger.admit(demo, spend(1.0), what="a demo release")
    capsys.readouterr()
    assert main(["ledger", "--database", url, "list"]) == 0
    out = capsys.readouterr().out
    assert "ε = 0.5 of ε = 1 spent in 1 charged release" in out and "demo, one visitor" in out  # 2 rows: 2 x 0.25
    assert main(["ledger", "--database", url, "history", real[:8]]) == 0
    assert "ε = 0.5" in capsys.readouterr().out
    assert main(["ledger", "--database", url, "set-budget", real[:8], "epsilon=9"]) == 2
    assert "cannot change" in capsys.readouterr().err
    assert main(["ledger", "--database", url, "reset", real[:8]]) == 2  # real data: never from here
    assert main(["ledger", "--database", url, "reset", demo[:8]]) == 0
    assert ledger.status(demo).spent == 0 and ledger.status(real).spent == pytest.approx(0.5)


def test_a_failure_in_the_middle_of_a_charge_leaves_the_ledger_as_it_was(database, monkeypatch):
    url = database
    ledger = Ledger(url, budget="epsilon=3")
    key = ledger.key_of(b"rows")
    ledger.register(key, "rows")
    ledger.admit(key, spend(1.0), what="before")
    original = Ledger._insert

    def crash(*args, **kwargs):
        original(*args, **kwargs)  # the charge is written inside the transaction ...
        raise RuntimeError("the process died here")  # ... which never commits

    monkeypatch.setattr(Ledger, "_insert", staticmethod(crash))
    with pytest.raises(RuntimeError):
        ledger.admit(key, spend(1.0), what="lost")
    monkeypatch.undo()
    reopened = Ledger(url)
    assert reopened.status(key).releases == 1 and reopened.status(key).spent == pytest.approx(1.0)
    reopened.admit(key, spend(2.0), what="after")  # the lock was released: the ledger goes on
    assert [r["what"] for r in reopened.history(key)] == ["before", "after"]


def test_the_practice_mark_is_for_the_release_shown():
    """A stored release within the practice budget carries no mark though a later one is over it."""
    ledger = Ledger(secret=b"s", demo_budget="epsilon=2")
    key = ledger.key_of(b"adult", scope="visitor")
    ledger.register(key, "Adult", demo=True)
    ids = []
    for eps in (2.0, 0.1):
        admission = ledger.admit(key, spend(eps), what=f"ε = {eps}")
        ids.append(ledger.store_release(admission, key, f"identity {eps}", {}, {}))
    book = ledger.practice(key)
    assert book.mark(ids[0]) == "" and book.refused_ids == {ids[1]}
    assert book.mark(ids[1]) == book.mark() == "Over a budget of ε = 2: a curator would refuse this release."


def test_ledger_list_tells_datasets_and_visitors_apart_and_history_takes_what_it_shows(tmp_path, capsys):
    """Several visitors on each of two demo datasets, a shared dataset with the content of one of them:
    `list` shows one distinct key per dataset and visitor, and `history` finds each from any prefix of
    it that is still unique (a shared prefix is refused, naming the candidates)."""
    from dpci.experiments.cli import main
    from dpci.ledger_cli import shown_keys

    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    ledger = Ledger(url, budget="epsilon=3")
    visitors = ["visitorAAAAAAAAAAAAAAAA", "visitorAAAAAAAAAAAAAAAB", "someoneelse0000000000000"]
    keys = {}
    for name in ("adult", "synthetic"):
        for v in visitors:
            keys[name, v] = ledger.key_of(f"dpci shipped data: {name}".encode(), scope=v)
            ledger.register(keys[name, v], name, demo=True)
    shared = ledger.key_of(b"dpci shipped data: adult")  # the content of a demo dataset, shared
    ledger.register(shared, "adult, shared")
    for i, key in enumerate([*keys.values(), shared]):
        ledger.admit(key, spend(0.01 * (i + 1)), what=f"release number {i}")
    capsys.readouterr()
    assert main(["ledger", "--database", url, "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in lines]
    assert len(lines) == 7 and len(set(listed)) == 7
    shown = shown_keys([*keys.values(), shared])
    assert sorted(listed) == sorted(shown.values())
    assert shown[shared] == shared[:12] and shown[keys["adult", visitors[0]]].endswith("/visitorAAAAAAAAAAAAAAAA")
    assert shown[keys["adult", visitors[2]]].endswith("/someon")  # the shortest scope that tells it apart
    for i, key in enumerate([*keys.values(), shared]):
        for prefix in (shown[key], key):
            assert main(["ledger", "--database", url, "history", prefix]) == 0, prefix
            assert f"release number {i}" in capsys.readouterr().out
    content = keys["adult", visitors[0]].partition("/")[0]
    assert main(["ledger", "--database", url, "history", content[:8] + "/so"]) == 0  # still unique: enough
    assert "release number 2" in capsys.readouterr().out
    assert main(["ledger", "--database", url, "history", content[:12] + "/visitor"]) == 2
    err = capsys.readouterr().err
    assert "2 datasets" in err and "give more of it" in err
    assert main(["ledger", "--database", url, "history", content[:12] + "/visitorAAAAAAAAAAAAAAAB"]) == 0
    assert "release number 1" in capsys.readouterr().out


# --- a one-time renaming of stored releases (the app's names: ui.release_names) ----------------------------
def _stored_under(ledger, key, identity, spec):
    admission = ledger.admit(key, spend(0.1), what="a release")
    return ledger.store_release(admission, key, identity, spec, {"theta": [0.0]})


def test_stored_releases_are_renamed_once_per_database(database):
    """The renaming runs once: a second open (or a second call) renames nothing, even when the rule
    would now say otherwise; a release the rule keeps (None) keeps its name."""
    ledger, key = ledger_with("epsilon=10", database)
    old = _stored_under(ledger, key, "old name", {"name": "new name"})
    kept = _stored_under(ledger, key, "kept name", {})
    rule = lambda stored: stored.spec.get("name")  # noqa: E731
    assert ledger.rename_releases("test renaming", rule) == 1
    assert ledger.release(old).identity == "new name" and ledger.release(kept).identity == "kept name"
    assert ledger.find_release(key, "new name").id == old and ledger.find_release(key, "old name") is None
    again = Ledger(database, secret=b"test-secret")
    assert again.rename_releases("test renaming", lambda stored: "something else") is None
    assert ledger.release(old).identity == "new name" and ledger.release(kept).identity == "kept name"
    assert ledger.status(key).releases == 2  # renaming charges nothing


def test_two_concurrent_openers_rename_once(database):
    """Openers racing on one database: the step runs in exactly one of them (the schema_version row is
    written first, a lock), and every other finds it done."""
    ledger, key = ledger_with("epsilon=10", database)
    _stored_under(ledger, key, "old name", {})
    ran, results = [], []

    def rule(stored):
        ran.append(stored.id)
        time.sleep(0.2)  # hold the lock while the others wait
        return "new name"

    def opener():
        results.append(Ledger(database, secret=b"test-secret").rename_releases("raced renaming", rule))

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(results, key=str) == [1, None, None, None] and len(ran) == 1
    assert ledger.find_release(key, "new name") is not None


def test_the_practice_ledger_says_one_total_in_its_budgets_unit_and_the_conversion_apart():
    """One pure release of eps = 1 split (0.65, 0.175, 0.175): rho = 0.242, which a zCDP practice budget
    states as eps = 3.48 at delta = 1e-6 (Proposition 2); a pure budget adds the eps up."""
    from dpci.ledger import Budget, Practice, tight_epsilon

    rho = (0.65**2 + 0.175**2 + 0.175**2) / 2
    stated = Practice(Budget.parse("epsilon=10,delta=1e-6"), 1.0, rho, 1, (False,))
    assert tight_epsilon(rho, 1e-6) == pytest.approx(3.478, abs=1e-3)
    assert stated.describe() == "1 release: ε = 3.48 at δ = 1e-06 of ε = 10 at δ = 1e-06"
    assert "ρ = 0.242 (their ε's add up to 1)" in stated.conversion() and "larger than its ε" in stated.conversion()
    pure = Practice(Budget.parse("epsilon=10"), 2.5, 1.0, 2, (False, False))
    assert pure.describe() == "2 releases: ε = 2.5 of ε = 10" and "added up" in pure.conversion()
    zcdp_only = Practice(Budget.parse("epsilon=10"), None, 0.5, 1, (False,))
    assert zcdp_only.describe() == "1 release: beyond pure ε of ε = 10"
