"""The Streamlit app, headless (streamlit.testing.v1.AppTest): every page runs with default and
changed settings, shows no exception, and shows the core library's numbers for the same seed."""

import io
import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

import dpci
from dpci.data import load_adult
from dpci.notions import EPSILONS
from ui.app_state import AppState
from ui.settings import C_VALUES, fmt_c

TIMEOUT = 120
ROOT = Path(__file__).resolve().parents[1]


def _app(page="app.py", teaching=True):
    """A page of the app; in teaching mode (a fixed seed) unless ``teaching`` is False, as a class
    would use it: real data otherwise get fresh randomness, and the numbers could not be checked."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    if teaching:
        at.query_params["randomness"] = "teaching"
    return at


def _explorer(query=None):
    """The Explorer as a browser sees it once loaded: a first run draws the chart alone, then its
    results fragment's first tick asks for the whole page, settings widgets included."""
    at = _app()
    at.query_params.update(query or {})
    at.run()
    return at.run()


def _shown(markdown):
    """What a browser shows of escaped Markdown (the app escapes text from addresses and files)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u200b", "")


def _no_errors(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _explorer_numbers(at):
    """The Explorer's table of numbers, drawn once its expander is opened."""
    at.session_state["explorer_numbers"] = True
    at.run()
    return at.dataframe[0].value


def test_explorer_shows_the_core_librarys_interval():
    at = _app().run()
    _no_errors(at)
    shown = _explorer_numbers(at)
    adult = load_adult(d=10, normalize="global")  # the app's default scaling
    rel = dpci.private_confidence_intervals(
        adult.X,
        adult.y,
        dpci.LogisticLoss(),
        "objective",
        "pure",
        1.0,
        (0.65, 0.175, 0.175),
        1e-3,
        0.05,
        10_000,
        random_state=0,
    )
    # the table shows 4 significant digits (dpci.presentation.numbers): within half a unit of the 4th digit
    np.testing.assert_allclose(shown["private lower"], rel.conf_int[:, 0], rtol=5e-4)
    np.testing.assert_allclose(shown["private upper"], rel.conf_int[:, 1], rtol=5e-4)
    np.testing.assert_allclose(_charted_private_bounds(at.get("plotly_chart")[0]), rel.conf_int, rtol=1e-12)
    ref = dpci.nonprivate_confidence_intervals(adult.X, adult.y, dpci.LogisticLoss(), c=1e-3)
    np.testing.assert_allclose(shown["nonprivate estimate"], ref.theta, rtol=5e-4)  # 4 significant digits
    assert list(shown.index) == adult.feature_names
    assert (at.metric[0].label, at.metric[0].value) == ("Teaching mode", "not private")  # no spend shown as a number


def test_first_paint_draws_the_chart_before_the_settings():
    """A session's first run sends the chart alone, without the settings widgets and the rest of the page
    (the metrics, the spend table: the browser draws the chart sooner); the full page follows with the
    same intervals."""
    at = _app().run()
    _no_errors(at)
    assert not at.sidebar.slider and "Loading the settings" in at.sidebar.caption[0].value
    assert not at.metric and not at.subheader
    first = _charted_private_bounds(at.get("plotly_chart")[0])
    at.run()
    _no_errors(at)
    assert at.sidebar.slider(key="w_d").value == 10 and not at.sidebar.caption[0].value.startswith("Loading")
    assert at.metric[0].value == "not private" and at.subheader
    np.testing.assert_array_equal(_charted_private_bounds(at.get("plotly_chart")[0]), first)


def test_a_first_paint_starts_the_bootstrap_workers(monkeypatch):
    """The worker processes start while the browser draws the first chart, not when the bootstrap
    needs them (a second later); later runs of the session do not start them again."""
    import threading

    import ui.background
    from dpci.experiments import bootstrap

    with ui.background.WARMING:  # a warm-up left running by an earlier test has finished
        pass
    calls, called = [], threading.Event()
    monkeypatch.setattr(bootstrap, "warm_up_workers", lambda n_jobs: (calls.append(n_jobs), called.set()))
    monkeypatch.setattr(bootstrap, "workers_running", lambda: False)
    at = _app().run()
    assert called.wait(10) and calls == [ui.background.VI_JOBS]
    at.run()
    time.sleep(0.5)
    assert calls == [ui.background.VI_JOBS]
    monkeypatch.setattr(bootstrap, "workers_running", lambda: True)  # running workers are left alone
    _app().run()
    time.sleep(0.5)
    assert calls == [ui.background.VI_JOBS]


def test_a_first_paint_that_cannot_draw_a_chart_draws_the_settings():
    at = _app()
    at.query_params.update({"n": "50"})
    at.run()
    assert "too small" in at.error[0].value
    assert at.sidebar.number_input(key="w_n").value == 50  # the user can fix it at once
    assert not any("Loading" in c.value for c in at.sidebar.caption)


def test_explorer_follows_the_sliders():
    at = _explorer()
    at.sidebar.radio(key="w_privacy").set_value("zcdp").run()
    at.sidebar.radio(key="w_method").set_value("output").run()
    at.sidebar.select_slider(key="w_rho").set_value(0.2).run()
    at.sidebar.slider(key="w_d").set_value(3).run()
    _no_errors(at)
    shown = _explorer_numbers(at)
    adult = load_adult(d=3, normalize="global")  # the app's default scaling
    rel = dpci.private_confidence_intervals(
        adult.X,
        adult.y,
        dpci.LogisticLoss(),
        "output",
        "zcdp",
        0.2,
        (0.65, 0.175, 0.175),
        1e-3,
        0.05,
        10_000,
        random_state=0,
    )
    np.testing.assert_allclose(shown["private upper"], rel.conf_int[:, 1], rtol=5e-4)  # 4 significant digits
    assert (at.metric[0].label, at.metric[0].value) == ("Teaching mode", "not private")
    # the paper's split button sets Table 2's zCDP shares
    at.sidebar.button[0].click().run()
    store = at.session_state["dpci_settings"]
    assert [store[f"split.{k}"] for k in ("coefficients", "hessian", "covariance")] == [0.9, 0.05, 0.05]


def test_the_ledger_speaks_the_chosen_notion():
    at = _explorer()
    ledger = next(m.value for m in at.markdown if "share of the budget" in m.value)
    assert "ε spent" in ledger and "ρ" not in ledger
    at.sidebar.radio(key="w_privacy").set_value("zcdp").run()
    _no_errors(at)
    ledger = next(m.value for m in at.markdown if "share of the budget" in m.value)
    assert "ρ spent" in ledger and "ε" not in ledger
    assert any("costs ρ = ε²/2" in c.value for c in at.caption)
    # by hand: ρ = 0.5, φ1 = 0.65 gives ρ1 = 0.325, run at ε1 = sqrt(2 ρ1) = 0.8062 (Proposition 1, Theorem 2)
    assert any("ε = 0.8062" in c.value and "ε²/2 = 0.325:" in c.value for c in at.caption)


def test_too_small_c_is_explained_and_fixable():
    at = _explorer()
    at.sidebar.number_input(key="w_n").set_value(500).run()
    at.sidebar.select_slider(key="w_c").set_value(1e-7).run()
    assert not at.exception
    assert "too small for objective perturbation" in at.error[0].value
    assert at.get("plotly_chart") and any("last settings drawn" in c.value for c in at.caption)  # the picture stays
    # the recommended c; or, where no c gives an interval for θ (Adult), the paper's c
    fix = [b for b in at.main.button if b.label.startswith(("Use the recommended c", "Use c = "))]
    assert fix, [b.label for b in at.button]
    fix[0].click().run()
    _no_errors(at)
    assert at.session_state["dpci_settings"]["c"] > 1e-7


def test_too_few_rows_is_refused_with_a_message():
    at = _explorer()
    at.sidebar.number_input(key="w_n").set_value(50).run()
    assert not at.exception
    assert "too small" in at.error[0].value and "at least 100" in at.error[0].value


def test_uploaded_dataset_without_a_file_asks_for_one():
    at = _explorer()
    at.sidebar.selectbox(key="w_dataset").set_value("upload").run()
    assert not at.exception
    assert "Upload a CSV" in at.info[0].value
    assert not at.get("plotly_chart")
    # the features of an upload are chosen with it: no d slider that would not apply
    assert "w_d" not in [s.key for s in at.sidebar.slider]
    assert any("upload panel" in c.value for c in at.sidebar.caption)


def test_url_parameters_restore_settings():
    at = _explorer({"epsilon": "2.0", "mechanism": "Output perturbation", "d": "4"})
    _no_errors(at)
    assert at.session_state["dpci_settings"]["budget"] == 2.0 and at.session_state["dpci_settings"]["d"] == 4
    assert at.metric[3].value == "5"
    # an old link that gave the mechanism by its label still opens it, stored by name, with no warning
    assert at.session_state["dpci_settings"]["method"] == "output"
    assert not at.sidebar.warning
    # the address now says the library's names: the method by its name, the budget as "budget"
    assert at.query_params["method"] == "output" and at.query_params["budget"] == "2.0"
    assert not {"mechanism", "epsilon"} & set(at.query_params)


def test_an_address_of_names_opens_exactly_those_settings():
    address = {"method": "output", "privacy": "zcdp", "dataset": "adult", "loss": "logistic", "budget": "0.2"}
    at = _explorer(address)
    _no_errors(at)
    store = at.session_state["dpci_settings"]
    assert {k: store[k] for k in address} == {**address, "budget": 0.2}
    assert at.sidebar.radio(key="w_method").value == "output"
    assert at.sidebar.radio(key="w_privacy").value == "zcdp"
    assert not at.sidebar.warning
    # the labels are made only when drawing: the widgets show them, the address and the store hold names
    assert "Output perturbation" in at.sidebar.radio(key="w_method").options
    assert all(at.query_params[k] == str(v) for k, v in address.items())


def test_bad_url_parameters_are_clipped_or_ignored_not_a_traceback():
    at = _explorer(
        {
            "d": "50",
            "phi1": "1",
            "phi2_rest": "-3",
            "n": "inf",
            "epsilon": "0",
            "model": "Huberized SVM",
            "h": "5",
            "c": "abc",
        }
    )
    assert not at.exception, [e.value for e in at.exception]
    store = at.session_state["dpci_settings"]
    # an old link's keys open through the translation table, as the state's dotted keys
    # the fractions clipped to the sliders' ranges (0.99 of the budget, then 0.05 of the rest), as shares
    assert (store["d"], store["split.coefficients"], store["split.hessian"], store["loss.h"]) == (20, 0.99, 0.0005, 2.0)
    assert store["budget"] == 0.01 and store["n"] == 0 and store["c"] == 1e-3  # smallest ε; n, c ignored
    said = _shown(at.sidebar.warning[0].value)
    for change in ("n = inf → 0", "c = abc → 0.001", "d = 50 → 20", "budget = 0 → 0.01", "loss.h = 5 → 2.0"):
        assert change in said
    assert "loss" not in said.replace("loss.h", "")  # a usable value is not mentioned


def test_a_shared_address_brings_no_warning():
    at = _explorer({"epsilon": "2.0", "c": "1e-05"})
    at.sidebar.slider(key="w_d").set_value(4).run()
    shared = dict(at.query_params)
    again = _explorer({k: v[0] if isinstance(v, list) else v for k, v in shared.items()})
    _no_errors(again)
    assert not again.sidebar.warning and again.session_state["dpci_settings"] == at.session_state["dpci_settings"]


def test_a_c_no_slider_value_can_fix_says_what_else_to_change():
    at = _app()
    at.query_params.update({"model": "huber", "h": "0.05", "n": "100", "epsilon": "0.05", "phi1": "0.05"})
    at.run()
    assert not at.exception
    assert "more budget" in at.error[0].value and "output perturbation" in at.error[0].value
    assert not [b for b in at.button if b.label.startswith("Use the recommended c")]


def test_settings_survive_a_visit_to_another_page():
    """The settings live in the session, not in the widgets: a page that draws the sidebar afresh
    (as after a page switch) shows them unchanged."""
    at = _explorer()
    at.sidebar.slider(key="w_d").set_value(4).run()
    at.sidebar.select_slider(key="w_epsilon").set_value(2.0).run()
    at.session_state["w_d"], at.session_state["w_epsilon"] = 1, 0.05  # widgets reset, as a page switch can
    at.run()
    _no_errors(at)
    assert (at.sidebar.slider(key="w_d").value, at.sidebar.select_slider(key="w_epsilon").value) == (4, 2.0)
    assert at.session_state["dpci_settings"]["budget"] == 2.0


@pytest.mark.parametrize("page", ["pages/1_Budget_allocation.py", "pages/2_Coverage_and_sample_size.py"])
def test_page_choices_survive_a_visit_to_another_page(page):
    """Streamlit drops the state of widgets a page does not draw: a sweep's choices (and so its
    results, found by them) must come back when the user returns to the page."""
    at = _app()
    at.run()
    at.switch_page(page).run()
    choice = "phi2" if "Budget_allocation" in page else at.radio[0].options[1]  # a name where the page has one
    at.radio[0].set_value(choice).run()
    at.select_slider[0].set_value(200).run()
    at.switch_page("pages/4_How_it_works.py").run()
    at.switch_page(page).run()
    _no_errors(at)
    assert (at.radio[0].value, at.select_slider[0].value) == (choice, 200)


def test_settings_files_are_read_like_addresses():
    import ui.settings

    raw = ui.settings.translated({"epsilon": 0.7, "d": 99, "seed": "12", "colour": "red", "m": "x"})
    values, ignored = ui.settings.settings_values(raw)
    assert (values["budget"], values["d"], values["seed"]) == (0.7, 20, 12) and ignored == ["n_samples"]
    assert ui.settings.changed_settings(raw, values) == ["n_samples = x → 10000", "d = 99 → 20"]  # any ε is kept


def test_variability_bounds_follow_the_confidence_level():
    import ui.background
    from dpci.experiments.bootstrap import VariabilityProgress

    est = np.random.default_rng(0).normal(size=(2_000, 2))
    state = VariabilityProgress(2_000, 2_000, np.zeros(2), est, alpha=0.05, elapsed=1.0)
    wide, narrow = ui.background.shown_variability(state, 0.05), ui.background.shown_variability(state, 0.2)
    np.testing.assert_allclose(wide[:, 1], 1.96, atol=0.1)
    np.testing.assert_allclose(narrow[:, 1], 1.2816, atol=0.1)


def test_a_tick_waits_for_a_bootstrap_about_to_finish_and_not_for_one_far_from_it():
    """A results tick that finds the bootstrap predicted to stop within FINISH_WAIT draws "done" now, not a
    tick (a second) later; one far from done is drawn at once, as it stands."""
    import threading

    import ui.background as bg
    from dpci.experiments.bootstrap import VariabilityProgress

    rng = np.random.default_rng(0)

    class Job:
        def __init__(self, done):
            self.latest = VariabilityProgress(
                done, 10_000, np.zeros(2), rng.normal(size=(done, 2)), alpha=0.05, elapsed=1.0, precision=0.02
            )
            self.done, self.elapsed = False, 1.0

    near = Job(2_300)
    assert bg.seconds_left(near, near.latest) < bg.FINISH_WAIT, bg.seconds_left(near, near.latest)
    finished = VariabilityProgress(
        2_400, 10_000, np.zeros(2), rng.normal(size=(2_400, 2)), alpha=0.05, elapsed=1.1, precision=0.02, converged=True
    )

    def finish():
        time.sleep(0.2)
        near.latest, near.done = finished, True

    threading.Thread(target=finish).start()
    started = time.monotonic()
    assert bg.tick_state(near) is finished and time.monotonic() - started < bg.FINISH_WAIT

    far = Job(300)  # 300 replicates: about 2,000 more needed at the same pace, several seconds
    assert bg.seconds_left(far, far.latest) > 1.0
    started = time.monotonic()
    assert bg.tick_state(far) is far.latest and time.monotonic() - started < 0.1
    assert bg.seconds_left(near, finished) is None  # a finished run has nothing left to wait for


def _wait(at, slot, timeout=240):
    job = at.session_state[slot].job
    assert job.wait(timeout), "job did not finish"
    assert job.error is None, job.error
    return job


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_a_private_interval_narrower_than_its_variability_interval_is_pointed_out():
    """With 150 rows the noisy matrices make some private intervals too short; once the bootstrap
    is done, the page names them (and says nothing while it is still running)."""
    from dpci.presentation.tables import narrower_than_variability

    at = _explorer({"n": "150", "vi_replicates": "500"})
    _wait(at, "slot_variability")
    at.run()
    _no_errors(at)
    at.session_state["explorer_numbers"] = True
    at.run()
    table = at.dataframe[0].value.reset_index().rename(columns=lambda c: c.replace(" ", "_"))
    narrower = narrower_than_variability(table)
    assert narrower, "this setting was chosen because some intervals are too short"
    assert any(f"for {len(narrower)} of 11 coefficients" in i.value for i in at.info)


def test_budget_allocation_page_recommends_and_sends_a_split():
    at = _app("pages/1_Budget_allocation.py").run()
    _no_errors(at)
    at.sidebar.slider(key="w_d").set_value(2).run()
    at.select_slider[0].set_value(50).run()  # repetitions
    at.select_slider[1].set_value(500).run()  # Monte Carlo samples
    at.button[0].click().run()  # Run the sweep
    job = _wait(at, "slot_split")
    at.run()
    _no_errors(at)
    assert any("Recommended split" in m.value for m in at.markdown)
    frame = job.latest.frame
    assert set(frame["phi1"]) == {0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9}


def test_a_sweep_stops_each_setting_once_its_coverage_is_precise_enough():
    """The stopping rule on a sweep page: at ±2% a setting's coverage run stops at a check (every 50
    repetitions from 100) before the 200 asked for; the rule is part of the result's key."""
    at = _app("pages/1_Budget_allocation.py").run()
    at.sidebar.slider(key="w_d").set_value(2).run()
    at.select_slider(key="split_k").set_value(200).run()
    at.select_slider(key="split_m").set_value(500).run()
    at.select_slider(key="split_precision").set_value(0.02).run()
    at.button[0].click().run()
    job = _wait(at, "slot_split")
    at.run()
    _no_errors(at)
    done = job.latest.frame["replicates"]
    assert (done < 200).all() and (done >= 100).all() and (done % 50 == 0).all(), list(done)
    assert 0.02 in job.key


@pytest.mark.parametrize("page", ["pages/2_Coverage_and_sample_size.py", "pages/3_Compare_methods.py"])
def test_sweep_pages_run(page):
    at = _app(page).run()
    _no_errors(at)
    if not at.sidebar.slider(key="w_d").disabled:  # the n × d heatmap sets d itself
        at.sidebar.slider(key="w_d").set_value(2).run()
    choices = {"Rows n": [500, 1000], "Features d": [1, 2], "Values": [1000, 2000], "Methods": [("output", "zcdp")]}
    for label, value in choices.items():  # found again after each run: a choice may change the page
        for ms in at.multiselect:
            if ms.label == label:
                ms.set_value(value).run()
                break
    at.select_slider[0].set_value(at.select_slider[0].options[0]).run()
    run = [b for b in at.button if b.label == "Run"][0]
    run.click().run()
    slot = "slot_grid" if "Coverage" in page else "slot_cmp"
    job = _wait(at, slot)
    at.run()
    _no_errors(at)
    assert not job.latest.frame.empty
    assert len(at.get("plotly_chart")) >= 1


def _charted_private_bounds(chart):
    """The private intervals as drawn: (lower, upper) per coefficient, from the forest plot's spec."""
    spec = json.loads(chart.proto.spec)
    trace = next(t for t in spec["data"] if t.get("name", "").startswith("private interval"))
    return np.array([v for v in trace["x"] if v is not None]).reshape(-1, 2)


@pytest.mark.parametrize("page", ["pages/4_How_it_works.py", "pages/5_Present.py"])
def test_release_pages_draw_the_core_librarys_interval_after_a_change(page):
    at = _app(page).run()
    at.sidebar.radio(key="w_method").set_value("output").run()
    at.sidebar.select_slider(key="w_epsilon").set_value(2.0).run()
    at.sidebar.slider(key="w_d").set_value(4).run()
    _no_errors(at)
    adult = load_adult(d=4, normalize="global")  # the app's default scaling
    rel = dpci.private_confidence_intervals(
        adult.X,
        adult.y,
        dpci.LogisticLoss(),
        "output",
        "pure",
        2.0,
        (0.65, 0.175, 0.175),
        1e-3,
        0.05,
        10_000,
        random_state=0,
    )
    forest = at.get("plotly_chart")[-1 if "How" in page else 0]
    np.testing.assert_allclose(_charted_private_bounds(forest), rel.conf_int, rtol=1e-12)


def test_how_it_works_page_walks_through_six_steps():
    at = _app("pages/4_How_it_works.py").run()
    _no_errors(at)
    assert len(at.get("plotly_chart")) >= 6
    headers = [h.value for h in at.main.header]
    assert headers[0].startswith("1.") and headers[-1].startswith("6.")


def test_present_page_offers_downloads_and_shows_non_private_numbers_only_when_asked():
    at = _app("pages/5_Present.py").run()
    _no_errors(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Intervals (CSV)", "Chart (HTML)", "Full report (HTML)"]
    assert all(b.proto.ignore_rerun for b in at.get("download_button"))  # a click does not rerun the page
    shown = " ".join(m.value for m in at.markdown)
    assert "times as wide" not in shown and "seed 0" in shown  # a known seed is no private release
    assert [w.value for w in at.warning if "Teaching mode" not in w.value] == []  # teaching mode is said
    assert _charted_kinds(at) == {"private"}  # the CSV and the report hold this table
    at.radio(key="present_audience").set_value(at.radio(key="present_audience").options[1]).run()
    _no_errors(at)
    assert any("times as wide" in m.value for m in at.markdown) and "not private" in at.warning[-1].value
    assert _charted_kinds(at) == {"private", "non-private"}


def _charted_kinds(at):
    """The kinds of interval the first chart draws (from its legend names)."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return {
        t["name"].split(" interval")[0]
        for t in spec["data"]
        if t.get("showlegend", True) and " interval" in t.get("name", "")
    }


@pytest.mark.serial  # a wall-clock bound: timed alone (tests/run.sh)
def test_explorer_renders_fast_after_warmup():
    at = _explorer()
    start = time.perf_counter()
    at.sidebar.select_slider(key="w_epsilon").set_value(0.5).run()
    elapsed = time.perf_counter() - start
    _no_errors(at)
    assert elapsed < 2.0, elapsed  # the release itself is ~20 ms; this bounds the whole script run


def test_an_upload_with_data_derived_bounds_is_called_not_private_in_the_apps_words():
    import warnings

    import ui.upload
    from dpci.data import read_uploaded_csv

    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(18, 80)};{rng.choice(['a', 'b'])};{rng.choice(['yes', 'no'])}" for _ in range(300)]
    data = "\n".join(["age;city;label", *rows]).encode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = read_uploaded_csv(data, "label", sep=";")
        public = read_uploaded_csv(data, "label", sep=";", bounds={"age": (0, 120)}, categories={"city": ["a", "b"]})
    reason = ui.upload.not_private_reason(result)
    assert "bounds of age" in reason and "categories of city" in reason
    assert "bounds=" not in reason  # the app's words, not the Python API's
    assert "upload panel" in reason and "table above" in ui.upload.not_private_reason(result, here=True)
    assert ui.upload.not_private_reason(public) is None
    # one bound typed, the other still the data's own: still not private, and named
    partial = ui.upload.not_private_reason(public, partial=["age"])
    assert partial is not None and "bounds of age" in partial


def test_present_states_no_guarantee_for_an_upload_with_data_derived_bounds():
    import warnings

    from dpci.data import read_uploaded_csv

    rng = np.random.default_rng(1)
    rows = [f"{rng.integers(18, 80)},{rng.normal(40, 10):.1f},{rng.choice(['yes', 'no'])}" for _ in range(400)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = read_uploaded_csv("\n".join(["age,hours,label", *rows]).encode(), "label")
    at = _app("pages/5_Present.py")
    at.query_params["dataset"] = "upload"
    at.session_state["upload_result"], at.session_state["upload_digest"] = result, "test-upload"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "bounds of age, hours" in at.error[0].value
    shown = " ".join(m.value for m in at.markdown)
    assert "No privacy guarantee" in shown and "guarantees" not in shown
    assert any("turned into odds: not private, as the coefficients are not" in c.value for c in at.caption)


def test_an_address_cannot_inject_a_link_or_an_image():
    at = _explorer({"dataset": "[Log in again](http://evil.example/login)", "model": "![b](http://host/x.png)"})
    _no_errors(at)
    said = at.sidebar.warning[0].value
    assert not re.findall(r"(?<!\\)[\[\]()!:]", said.split("it can")[1]), said  # every bracket escaped
    assert "[Log in again](http://evil.example/login)" in _shown(said)  # shown as the text it is


def test_an_upload_is_parsed_once_not_at_every_rerun(monkeypatch):
    import dpci.data
    from ui.upload import upload_digest

    calls = {"inspect": 0, "read": 0}
    for name, key in (("inspect_uploaded_csv", "inspect"), ("read_uploaded_csv", "read")):
        real = getattr(dpci.data, name)

        def counted(*a, _real=real, _key=key, **k):
            calls[_key] += 1
            return _real(*a, **k)

        monkeypatch.setattr(dpci.data, name, counted)
    rng = np.random.default_rng(0)
    rows = [f"{rng.integers(18, 80)},{rng.choice(['yes', 'no'])}" for _ in range(300)]
    data = "\n".join(["age,label", *rows]).encode()
    at = _app()
    at.session_state["upload_kept"] = ("people.csv", data, upload_digest(data))
    at.session_state["kept_upload_target"] = "label"  # the analyst's choice
    at.query_params.update({"dataset": "upload"})
    at.run()
    at.run()
    _no_errors(at)
    first = dict(calls)
    assert first["inspect"] == 1 and first["read"] >= 1
    at.sidebar.select_slider(key="w_epsilon").set_value(2.0).run()  # a slider move: no new parse
    at.run()
    assert calls == first


def test_the_naive_baseline_is_labelled_wherever_it_is_shown():
    at = _explorer()
    at.sidebar.radio(key="w_method").set_value("naive").run()
    _no_errors(at)
    assert any("leaves the privacy noise out" in w.value for w in at.warning)
    present = _app("pages/5_Present.py").run()
    present.session_state["dpci_settings"]["method"] = "naive"
    present.run()
    assert not present.exception
    assert any("leave the privacy noise out" in m.value for m in present.markdown)
    walk = _app("pages/4_How_it_works.py")
    walk.run()
    walk.session_state["dpci_settings"]["method"] = "naive"
    walk.run()
    assert not walk.exception and "Monte Carlo" in walk.error[0].value


@pytest.mark.parametrize(
    "page, key, value",
    [
        ("pages/1_Budget_allocation.py", "split_vary", "phi2"),
        ("pages/3_Compare_methods.py", "cmp_methods", [("output", "zcdp"), ("naive", "pure")]),
        ("pages/2_Coverage_and_sample_size.py", "grid_view", "Heatmap: n × budget"),
    ],
)
def test_a_page_reopens_from_its_address(page, key, value):
    """A reload or a shared link keeps the sidebar's settings and the page's own choices."""
    at = _app(page)
    at.query_params.update({"budget": "0.5", key: json.dumps(value, ensure_ascii=False)})
    at.run()
    _no_errors(at)
    assert at.session_state["dpci_settings"]["budget"] == 0.5
    assert at.session_state[key] == value
    assert json.loads(at.query_params[key]) == json.loads(json.dumps(value))  # written back for the next link
    assert at.query_params["budget"] == "0.5"


def test_a_method_that_chooses_its_own_c_says_so():
    at = _explorer({"mechanism": "Wu et al. output perturbation"})
    _no_errors(at)
    assert any("chooses its own regularisation" in c.value for c in at.caption), [c.value for c in at.caption]


def test_repeat_a_release_stacks_hits_and_misses_and_keeps_the_last_run_in_grey():
    at = _app("pages/6_Repeat_a_release.py", teaching=False)
    at.query_params.update({"d": "2", "repeat_k": "20", "repeat_n": "1000"})
    at.run()
    _no_errors(at)
    at.button[0].click().run()
    _wait(at, "slot_repeat")
    at.run()
    _no_errors(at)
    assert any("private intervals (" in m.value and "Wilson interval" in m.value for m in at.markdown)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    named = {"private interval: contains θ₀ (hit)", "non-private interval: contains θ₀ (hit)", "misses θ₀"}
    assert {t["name"] for t in spec["data"]} <= named | {"θ₀, the truth (the line)"}
    at.sidebar.select_slider(key="w_epsilon").set_value(0.3).run()  # a replay: the first run in grey
    at.button[0].click().run()
    _wait(at, "slot_repeat")
    at.run()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "earlier run" in {t["name"] for t in spec["data"]}


def test_a_zcdp_only_method_never_meets_pure_dp():
    at = _explorer({"mechanism": "Kulkarni et al. noise-aware Bayesian", "privacy": "Pure ε-DP", "n": "2000", "d": "2"})
    _no_errors(at)
    assert at.sidebar.radio(key="w_privacy").value == "zcdp"
    assert at.sidebar.radio(key="w_privacy").options == ["ρ-zCDP"]  # the option shown, by its label
    assert at.get("plotly_chart")


@pytest.mark.parametrize(
    "page, unused, used",
    [
        ("pages/3_Compare_methods.py", "w_method", "w_epsilon"),
        ("pages/2_Coverage_and_sample_size.py", "w_split.coefficients", "w_c"),
        ("pages/1_Budget_allocation.py", "w_split.coefficients", "w_method"),
        ("pages/6_Repeat_a_release.py", "w_dataset", "w_split.coefficients"),
    ],
)
def test_a_page_greys_out_the_settings_it_does_not_use(page, unused, used):
    at = _app(page).run()
    _no_errors(at)
    widgets = {
        w.key: w for kind in ("radio", "slider", "select_slider", "selectbox") for w in getattr(at.sidebar, kind)
    }
    assert widgets[unused].disabled and not widgets[used].disabled
    assert any("not used on this page" in c.value for c in at.sidebar.caption)
    explorer = _explorer()
    assert not any(w.disabled for w in explorer.sidebar.radio)  # the Explorer uses them all


@pytest.mark.parametrize(
    "page, key, view, unused, used",
    [
        ("pages/2_Coverage_and_sample_size.py", "grid_view", "Heatmap: n × d", "w_d", "w_epsilon"),
        ("pages/2_Coverage_and_sample_size.py", "grid_view", "Heatmap: n × budget", "w_epsilon", "w_d"),
        ("pages/3_Compare_methods.py", "cmp_over", "d", "w_d", "w_epsilon"),
        ("pages/3_Compare_methods.py", "cmp_over", "epsilon", "w_epsilon", "w_d"),
    ],
)
def test_the_setting_a_sweep_varies_is_greyed_out_in_the_sidebar(page, key, view, unused, used):
    at = _app(page)
    at.query_params[key] = json.dumps(view)
    at.run()
    _no_errors(at)
    widgets = {w.key: w for kind in ("slider", "select_slider") for w in getattr(at.sidebar, kind)}
    assert widgets[unused].disabled and not widgets[used].disabled


@pytest.mark.slow  # over 4 s: the quick run (-m "not slow") stays under 4 minutes
def test_a_slider_move_keeps_the_last_variability_bars_faded_until_the_new_ones_come():
    at = _explorer({"vi_replicates": "500", "d": "2", "n": "2000"})
    at.run()  # the tick that starts the bootstrap
    _wait(at, "slot_variability")
    at.run()
    names = {t["name"] for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"] if "name" in t}
    assert "variability interval (not private) (95%)" in names
    at.sidebar.select_slider(key="w_epsilon").set_value(0.5).run()
    names = {t["name"] for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"] if "name" in t}
    assert "variability interval (not private) (95%) (updating…)" in names


def test_present_states_odds_ratios_over_public_ranges_and_says_why_when_it_cannot():
    at = _app("pages/5_Present.py").run()
    _no_errors(at)
    assert "Odds of income >50K" in [_shown(h.value) for h in at.subheader]
    table = next(_shown(m.value) for m in at.markdown if "Change (public range)" in _shown(m.value))
    assert "age 17 → 90" in table and "higher age: higher odds, interval excludes 1" in table
    settings = at.session_state["dpci_settings"]
    settings["scaling"] = "unit"  # the paper's rows: no odds ratio per feature
    at.run()
    _no_errors(at)
    assert not any("Change (public range)" in _shown(m.value) for m in at.markdown)
    assert any("One public divisor" in i.value for i in at.info)
    settings["scaling"], settings["loss"] = "global", "huber"
    at.run()
    _no_errors(at)
    assert any("no odds reading" in c.value for c in at.caption)


@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
@pytest.mark.parametrize("asked", ["unregularised", "regularised"])
def test_present_says_which_coefficients_its_odds_ratios_are_of(asked, privacy):
    """The odds ratios are θ's where the chart's intervals are for θ, and otherwise say they are of the
    penalised model θ₀(c) at its c, in the caption under their heading, whichever was asked and the notion."""
    at = _app("pages/5_Present.py")
    at.query_params.update({"d": "3", "c": "5e-05", "estimand": asked, "privacy": privacy})
    at.run()
    _no_errors(at)
    said = " ".join(_shown(c.value) for c in at.caption if "Odds ratios of" in c.value)
    refused = any("No interval for θ" in i.value for i in at.info)  # this release gives none: θ₀(c) shown
    theta = asked == "unregularised" and not refused
    if theta:
        assert "Odds ratios of the coefficients without penalty, θ." in said, said
    else:
        assert "Odds ratios of the model fitted with its penalty (θ₀(c), c = 5e-05)" in said, said


def test_the_intervals_csv_carries_the_odds_ratios_and_its_provenance():
    import ui.present as present
    from dpci.presentation.odds import odds_ratio_table
    from dpci.presentation.tables import interval_table
    from ui.app_state import AppState
    from ui.data import _adult_changes

    s = AppState.of(randomness="teaching")
    adult = load_adult(d=10, normalize="global")
    rel = dpci.private_confidence_intervals(adult.X, adult.y, dpci.LogisticLoss(), random_state=0)
    table = interval_table(adult.feature_names, rel)
    odds = odds_ratio_table(table, _adult_changes(10, "global"))
    text = present.intervals_csv(table, s, adult.n, adult.X.shape[1], None, odds)
    header = [line for line in text.splitlines() if line.startswith("# ")]
    assert "# Feature scaling: One public divisor (odds ratios)" in header
    body = pd.read_csv(io.StringIO(text), comment="#")
    assert list(body.columns[-4:]) == ["change", "odds_ratio", "odds_ratio_lower", "odds_ratio_upper"]
    age = body.set_index("feature").loc["age"]
    assert age["odds_ratio"] == pytest.approx(np.exp(rel.theta[0] * 2 / np.sqrt(8)), rel=1e-3)  # 6 numbers, a block, 1
    assert np.isnan(body.set_index("feature").loc["const", "odds_ratio"])


def test_sweep_pages_offer_only_the_row_counts_an_upload_has():
    import warnings

    from dpci.data import read_uploaded_csv

    rng = np.random.default_rng(2)
    rows = [f"{rng.integers(18, 80)},{rng.choice(['yes', 'no'])}" for _ in range(3000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = read_uploaded_csv("\n".join(["age,label", *rows]).encode(), "label", bounds={"age": (0, 120)})
    for page, key, vary in (
        ("pages/3_Compare_methods.py", "cmp_n", {"cmp_over": '"epsilon"'}),
        ("pages/3_Compare_methods.py", "cmp_values_n", {"cmp_over": '"n"'}),
        ("pages/2_Coverage_and_sample_size.py", "grid_ns", {}),
    ):
        at = _app(page)
        at.query_params.update({"dataset": "upload", **vary})
        at.session_state["upload_result"], at.session_state["upload_digest"] = result, "rows-3000"
        at.run()
        _no_errors(at)
        widget = next(w for kind in ("select_slider", "multiselect") for w in getattr(at, kind) if w.key == key)
        assert max(widget.options, key=float) in ("3000", "2000"), (page, key, widget.options)
        values = widget.value if isinstance(widget.value, list) else [widget.value]
        assert all(v <= 3000 for v in values), (page, key, widget.value)


def _sweep_with_a_skipped_setting(at, slot):
    """Run the page's sweep to its end; (the page, the note naming the skipped settings)."""
    at.run()
    _no_errors(at)
    [b for b in at.button if b.label == "Run"][0].click().run()
    _wait(at, slot)
    at.run()
    _no_errors(at)
    return at, next(_shown(w.value) for w in at.warning if "Skipped" in _shown(w.value))


def test_a_sweep_names_the_settings_where_c_is_too_small_and_draws_the_rest():
    at = _app("pages/3_Compare_methods.py")
    at.query_params.update(
        {
            "cmp_over": '"epsilon"',
            "cmp_values_epsilon": "[0.1, 1.0]",
            "cmp_methods": '[["objective", "pure"]]',
            "cmp_k": "20",
            "cmp_vi": "200",
            "cmp_m": "500",
            "cmp_n": "1000",
            "d": "2",
        }
    )
    at, note = _sweep_with_a_skipped_setting(at, "slot_cmp")
    assert "objective perturbation, pure DP at ε = 0.1" in note and "Raise c" in note
    assert any("Shortest intervals" in m.value for m in at.markdown)  # ε = 1 ran


def test_a_coverage_heatmap_leaves_a_cell_where_c_is_too_small_empty_and_names_it():
    at = _app("pages/2_Coverage_and_sample_size.py")
    at.query_params.update(
        {
            "grid_view": '"Heatmap: n × budget"',
            "grid_epsilons": "[0.2, 2.0]",
            "grid_ns": "[500]",
            "grid_methods": '[["objective", "pure"]]',
            "grid_k": "20",
            "grid_m": "500",
            "d": "2",
        }
    )
    at, note = _sweep_with_a_skipped_setting(at, "slot_grid")
    assert "objective perturbation, pure DP at n = 500" in note
    assert len(at.get("plotly_chart")) == 2  # both heatmaps, with the cell that ran


@pytest.mark.slow  # about 4 s: a sweep of three settings
def test_a_sweep_shows_what_dpci_warned_of_on_its_page():
    """At ε = 0.2 (n = 1,000, c = 1e-3) objective perturbation keeps ε' < ε₁/2 and warns that its intervals
    may under-cover (UnderCoverageWarning, raised in the sweep's background thread): the page says so,
    once, escaped, not only the server's log."""
    at = _app("pages/3_Compare_methods.py")
    at.query_params.update(
        {
            "cmp_over": '"epsilon"',
            "cmp_values_epsilon": "[0.2, 0.5, 1.0]",
            "cmp_methods": '[["objective", "pure"]]',
            "cmp_k": "20",
            "cmp_vi": "200",
            "cmp_m": "500",
            "cmp_n": "1000",
            "d": "2",
            "c": "0.001",
        }
    )
    at.run()
    _no_errors(at)
    [b for b in at.button if b.label == "Run"][0].click().run()
    job = _wait(at, "slot_cmp")
    at.run()
    _no_errors(at)
    said = [w.value for w in at.warning if "c = 0.001 leaves objective perturbation" in _shown(w.value)]
    assert len(said) == 1 and "ε₁ = 0.13 (n = 1000)" in _shown(said[0])  # once, at ε = 0.2 only
    assert "\\(n" in said[0]  # escaped Markdown
    assert job.warnings == [_shown(said[0]).removeprefix("**About these results:** ")]
    assert any("How length scales" in h.value for h in at.subheader)  # the fits drew


def test_several_warnings_of_a_job_are_said_in_one_box_each_once_and_escaped():
    def page():
        from types import SimpleNamespace

        from ui.background import show_warnings

        show_warnings(SimpleNamespace(warnings=["c = 1e-3 is *small*", "see [here](http://example.com)"]))
        show_warnings(SimpleNamespace(warnings=[]))

    at = AppTest.from_function(page).run()
    _no_errors(at)
    assert len(at.warning) == 1
    lines = at.warning[0].value.split("\n")
    assert lines[0] == "**About these results:**" and [_shown(v) for v in lines[1:]] == [
        "- c = 1e-3 is *small*",
        "- see [here](http://example.com)",
    ]
    assert "\\*small\\*" in lines[1] and "\\[here\\]" in lines[2]  # no emphasis, no link


def test_an_address_of_each_generation_opens_and_says_one_budget():
    """Old links keep opening through the one table (labels, field names, both budgets); the address
    is then the state's own, in the library's names: one budget, the split's shares, the dotted keys."""
    old = {"mechanism": "Output perturbation", "privacy": "ρ-zCDP", "epsilon": "0.5", "rho": "0.2", "phi1": "0.8"}
    at = _explorer(old)
    _no_errors(at)
    assert at.sidebar.select_slider(key="w_rho").value == 0.2
    assert at.query_params["budget"] in ("0.2", ["0.2"]) and not {"epsilon", "rho", "mechanism"} & set(at.query_params)
    assert "phi1" not in at.query_params and at.query_params["split.coefficients"] in ("0.8", ["0.8"])
    assert at.query_params["split.hessian"] in ("0.1", ["0.1"])  # half of what φ1 leaves, as a share
    at.sidebar.radio(key="w_privacy").set_value("pure").run()  # back to pure: the same guarantee, as ε
    assert at.sidebar.select_slider(key="w_epsilon").value == 0.63  # sqrt(2 · 0.2), to two digits
    assert at.query_params["budget"] in ("0.63", ["0.63"])


def test_a_notion_never_chosen_takes_the_budget_converted():
    """Switching to a notion whose budget was never set: the same pure ε in it (Proposition 1, ρ = ε²/2)."""
    at = _explorer({"mechanism": "output", "epsilon": "2.0"})
    at.sidebar.radio(key="w_privacy").set_value("zcdp").run()
    _no_errors(at)
    assert at.sidebar.select_slider(key="w_rho").value == 2.0  # 2² / 2
    assert ui_settings(at).spec.budget == 2.0 and ui_settings(at).spec.privacy == "zcdp"


def test_stored_releases_of_older_records_still_open():
    """Records written before release specifications (flat fields, labels in app settings) are read."""
    import ui.settings as app_settings

    old_cli = dict(
        source="command line", loss="huber", h=0.3, method="output", privacy="zcdp", budget=0.5,
        split=[0.9, 0.05, 0.05], c=0.01, level=0.9, m=2000, d=3, scaling="unit", seed=None,
    )  # fmt: skip
    s = app_settings.settings_from_spec(old_cli)
    assert (
        s.spec.loss.name,
        s.spec.loss.h,
        s.spec.method,
        s.spec.privacy,
        s.spec.budget,
        s.level,
        s.spec.n_samples,
        s.data.d,
    ) == (
        "huber",
        0.3,
        "output",
        "zcdp",
        0.5,
        0.9,
        2000,
        3,
    )
    old_app = {
        "app_settings": {"mechanism": "Output perturbation", "privacy": "ρ-zCDP", "dataset": "Adult (UCI census)"}
    }
    s = app_settings.settings_from_spec(old_app)
    assert (s.spec.method, s.spec.privacy, s.data.dataset) == ("output", "zcdp", "adult")
    new = app_settings.settings_from_spec({"release": s.spec.to_dict(), "data": {"d": 4}})
    assert new.spec == s.spec and new.data.d == 4


def test_the_settings_are_offered_as_the_python_call_that_makes_their_release():
    """The Explorer's settings panel shows the release specification as Python: run, it makes the same
    release (teaching mode: the same public seed)."""
    import numpy as np

    from dpci.data import make_synthetic_logistic

    at = _explorer({"dataset": "synthetic", "d": "2", "mechanism": "output", "privacy": "zcdp", "rho": "0.2"})
    at.session_state["settings_panel"] = True  # the panel is drawn only when opened
    at.run()
    _no_errors(at)
    code = next(c.value for c in at.code if "ReleaseSpec(" in c.value)
    assert "method='output'" in code and "privacy='zcdp'" in code and "budget=0.2" in code and "seed=0" in code
    X, y = make_synthetic_logistic(2_000, np.array([1.0, -0.5, 0.3]), random_state=0)
    namespace = {"X": X, "y": y}
    exec(code, namespace)
    assert namespace["release"].conf_int.shape == (3, 2)
    assert namespace["spec"] == ui_settings(at).spec


def _chart_text(chart) -> str:
    """A chart's spec as text, its non-ASCII characters as themselves (Plotly escapes them as \\uXXXX
    unless orjson is installed)."""
    return json.dumps(json.loads(chart.proto.spec), ensure_ascii=False)


def ui_settings(at):
    from ui.app_state import AppState

    return AppState.from_values(at.session_state["dpci_settings"])


def test_titles_say_labels_not_the_names_the_settings_hold():
    query = {"mechanism": "output", "privacy": "zcdp", "dataset": "synthetic", "d": "2", "rho": "0.2"}
    at = _explorer({**query, "estimand": "regularised"})
    _no_errors(at)
    specs = " ".join(_chart_text(chart) for chart in at.get("plotly_chart"))
    assert "intervals for θ₀(c): output perturbation, ρ-zCDP" in specs
    assert "output, zcdp" not in specs


def test_settings_a_method_cannot_take_are_not_offered_and_the_sidebar_says_why():
    """Kulkarni et al.'s method is for the logistic loss only: with the Huberized SVM it is not offered (the
    reason beside the choices), and an address asking for the pair draws the first method that can run."""
    at = _explorer({"mechanism": "kulkarni", "privacy": "zcdp", "model": "huber", "dataset": "synthetic", "d": "2"})
    _no_errors(at)
    assert at.get("plotly_chart") and at.session_state["dpci_settings"]["method"] != "kulkarni"
    assert any("Kulkarni et al. noise-aware Bayesian is not offered" in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize(
    "query",
    [
        {"method": "output", "budget": "0.3", "estimand": "regularised"},
        {"method": "objective", "budget": "1"},  # the default: θ
    ],
)
def test_the_c_control_recommends_a_c_from_public_facts_and_uses_it(query):
    """Under the sidebar's c: the recommended c (the library's, snapped to the slider), what it predicts,
    and a button; the button sets c and the recommendation is then the current c."""
    from dpci.recommend import recommend_c

    query = {"dataset": "synthetic", "d": "5", "n": "5000", **query}
    at = _explorer(query)
    _no_errors(at)
    said = [c.value for c in at.sidebar.caption if "Recommended: c =" in c.value]
    assert said and "no privacy cost" in said[0] and "At c = 1e-3: width" in said[0]
    from ui.choice_of_c import prediction_rows

    state = AppState.of(**{**query, "d": 5, "n": 5000, "budget": float(query["budget"])})
    rows = prediction_rows(state)
    facts = dict(method=query["method"], privacy="pure", budget=float(query["budget"]))
    rec = recommend_c(5_000, 6, **facts, estimand=state.view.estimand, stand_in=rows)
    use = [b for b in at.sidebar.button if b.label.startswith("Use the recommended c")]
    assert use
    use[0].click().run()
    _no_errors(at)
    chosen = at.session_state["dpci_settings"]["c"]
    assert chosen in C_VALUES and rec.c / 2.6 <= chosen <= rec.c * 2.6  # a neighbour on the slider
    assert not [b for b in at.sidebar.button if b.label.startswith("Use the recommended c")]


@pytest.mark.parametrize("privacy", ["pure", "zcdp"])
@pytest.mark.parametrize("mechanism", ["objective", "output"])
def test_on_adult_the_sidebar_says_what_gives_theta_and_one_press_asks_for_it(mechanism, privacy):
    """Where no c gives an interval for θ (Adult, d = 10) the sidebar says which budget or how many features
    would, predicted on the public rows; its button sets those features and c, after which the sidebar
    recommends a c for θ."""
    at = _explorer({"dataset": "adult", "mechanism": mechanism, "privacy": privacy})
    _no_errors(at)
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "No c gives an interval for θ here" in captions, captions
    assert "no budget up to" in captions or "θ has one from" in captions, captions
    press = [b for b in at.sidebar.button if b.label.startswith("Use d =")]
    if not press:
        assert "Fewer features give none at this budget either" in captions, captions
        return
    d, c = re.match(r"Use d = (\d+) and c = (\S+) ", press[0].label).groups()
    assert f"The first {d} feature" in captions, captions
    press[0].click().run()
    _no_errors(at)
    assert at.session_state["w_d"] == int(d)
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "No c gives an interval for θ" not in captions and "for θ" in captions, captions
    assert fmt_c(at.session_state["w_c"]) == c


def test_the_recommended_c_comes_after_the_chart(monkeypatch):
    """A new ε costs a new search for c (0.1-0.2 s on a 2-core machine): the Explorer keeps its place in the
    sidebar and draws it after the chart, so a slider move redraws the intervals first."""
    import ui.background
    import ui.choice_of_c as choice

    order = []
    advise, memo_chart = choice.advise, ui.background.memo_chart
    monkeypatch.setattr(choice, "advise", lambda *a, **k: order.append("advice") or advise(*a, **k))
    monkeypatch.setattr(ui.background, "memo_chart", lambda *a, **k: order.append("chart") or memo_chart(*a, **k))
    at = _explorer({"dataset": "synthetic", "mechanism": "output", "d": "3", "n": "2000"})
    order.clear()
    budget = next(s for s in at.select_slider if s.label.startswith("Total budget"))
    budget.set_value(EPSILONS[EPSILONS.index(budget.value) + 1]).run()
    _no_errors(at)
    assert order == ["chart", "advice"], order
    assert [c for c in at.sidebar.caption if "Recommended: c =" in c.value]


def test_intervals_for_theta_are_widened_by_the_bias_bound_and_say_so():
    """With a stated public bound B on ‖θ‖ the chart's intervals contain θ₀(c)'s, wider on each side by at
    least the bound the caption states; the Huberized SVM offers θ only so."""
    query = {"dataset": "synthetic", "mechanism": "output", "d": "3", "n": "2000", "c": "0.01"}
    regular = _explorer({**query, "estimand": "regularised"})
    huber = {**query, "model": "huber", "estimand": "regularised"}
    unstated = _explorer({**huber, "estimand": "unregularised"})
    free = _explorer({**query, "estimand": "unregularised", "theta_bound": "3"})
    _no_errors(unstated)
    _no_errors(free)
    a = _charted_private_bounds(regular.get("plotly_chart")[0])
    np.testing.assert_allclose(
        _charted_private_bounds(unstated.get("plotly_chart")[0]),
        _charted_private_bounds(_explorer(huber).get("plotly_chart")[0]),
    )  # no silent fallback
    assert any("For θ, state a public bound B on ‖θ‖" in c.value for c in unstated.caption)
    assert "intervals for θ:" not in _chart_text(unstated.get("plotly_chart")[0])  # titled for θ₀(c)
    b = _charted_private_bounds(free.get("plotly_chart")[0])
    caption = next(c.value for c in free.caption if "widened by" in c.value)
    bias = float(caption.split("widened by ±")[1].split(",")[0])
    assert 0 < bias <= 3
    assert np.all(a[:, 0] - b[:, 0] >= bias * (1 - 1e-3)) and np.all(b[:, 1] - a[:, 1] >= bias * (1 - 1e-3))
    assert any("θ₀(c)" in c.value and "paper's intervals cover" in c.value for c in regular.caption)
    assert _chart_text(free.get("plotly_chart")[0]).count("intervals for θ:") == 1


@pytest.mark.parametrize(
    "query, given",
    [
        ({"dataset": "synthetic", "d": "3", "n": "2000", "epsilon": "3"}, True),  # a curvature the noise keeps
        ({"dataset": "adult", "d": "10", "n": "2000"}, False),  # near-flat directions under the Hessian's noise
    ],
)
def test_theta_without_a_bound_comes_from_the_release_or_says_why_not(query, given):
    """θ by default, with no bound stated, by objective perturbation on the logistic model: the interval for θ
    from the release alone (dpci.theta), titled and captioned so; or, where this release gives none, θ₀(c)'s,
    titled so, with the reason. Present says the same."""
    at = _explorer(query)  # the default: theta
    _no_errors(at)
    title = _chart_text(at.get("plotly_chart")[0])
    captions = " ".join(c.value for c in at.caption)
    regular = _charted_private_bounds(_explorer({**query, "estimand": "regularised"}).get("plotly_chart")[0])
    shown = _charted_private_bounds(at.get("plotly_chart")[0])
    if given:
        assert "intervals for θ:" in title and "corrected for the penalty" in captions
        assert np.all(shown[:, 1] - shown[:, 0] >= regular[:, 1] - regular[:, 0])  # the correction's law is wider
    else:
        assert "intervals for θ₀(c):" in title and "No interval for θ" in captions
        np.testing.assert_allclose(shown, regular)
    present = _app("pages/5_Present.py")
    present.query_params.update(query)
    present.run()
    _no_errors(present)
    said = " ".join(m.value for m in present.markdown) + " ".join(i.value for i in present.info)
    if given:
        assert "corrected for the penalty" in said.replace("\\", "")
    else:
        assert "No interval for θ" in said


def test_present_states_the_estimand_in_words():
    at = _app("pages/5_Present.py")
    at.query_params.update(
        {"dataset": "synthetic", "d": "3", "n": "2000", "estimand": "unregularised", "theta_bound": "3"}
    )
    at.run()
    _no_errors(at)
    lines = [_shown(m.value) for m in at.markdown]
    assert any("coefficients without penalty, penalty bias included" in line for line in lines), lines[:8]


def test_teaching_mode_shows_no_spend_and_no_guarantee():
    """with a public seed the page said "ε spent 10" and "(10, 0)"; now it says what it is."""
    at = _explorer({"dataset": "synthetic", "epsilon": "10", "d": "2"})
    _no_errors(at)
    shown = [(m.label, m.value) for m in at.metric[:2]]
    assert shown == [("Teaching mode", "not private"), ("Guarantee", "none")]
    assert not any("spent" in m.label for m in at.metric)
    assert any("Teaching mode: not private" in c.value for c in at.caption)
    assert not any(h.value == "Privacy spent, step by step" for h in at.subheader)


def test_any_budget_can_be_typed_and_the_slider_says_what_it_means():
    """a finer ε control that still snaps to readable values, its help in words (e^ε)."""
    at = _explorer()
    at.sidebar.number_input(key="w_epsilon_typed").set_value(0.347).run()
    _no_errors(at)
    assert at.session_state["dpci_settings"]["budget"] == 0.35  # two significant digits
    slider = at.sidebar.select_slider(key="w_epsilon")
    assert slider.value == 0.35 and "e^ε = 1.42" in slider.help and "at most 59%" in slider.help
    assert at.query_params["budget"] in ("0.35", ["0.35"])
    at.sidebar.radio(key="w_privacy").set_value("zcdp").run()
    rho = at.sidebar.select_slider(key="w_rho")
    assert "implies (ε =" in rho.help and "δ = 1e-06" in rho.help


def test_a_slider_move_wins_over_the_typed_boxs_stale_value():
    """A browser reports every widget's value with each change. After a slider move the server sets the typed
    box too; a browser that has not received that yet reports the box's old value with the next slider move,
    and the old value must not pull the slider back (it did: presses lost under a class's load)."""
    at = _explorer({"dataset": "synthetic", "d": "2"})
    at.sidebar.select_slider(key="w_epsilon").set_value(1.25).run()
    assert at.sidebar.number_input(key="w_epsilon_typed").value == 1.25
    at.sidebar.number_input(key="w_epsilon_typed").set_value(1.0)  # the box as the browser still shows it
    at.sidebar.select_slider(key="w_epsilon").set_value(1.5).run()
    _no_errors(at)
    assert at.session_state["dpci_settings"]["budget"] == 1.5
    assert at.sidebar.select_slider(key="w_epsilon").value == 1.5
    assert at.sidebar.number_input(key="w_epsilon_typed").value == 1.5
    assert at.query_params["budget"] in ("1.5", ["1.5"])
    at.sidebar.number_input(key="w_epsilon_typed").set_value(0.9).run()  # a typed value alone still counts
    assert at.session_state["dpci_settings"]["budget"] == 0.9
    assert at.sidebar.select_slider(key="w_epsilon").value == 0.9


@pytest.mark.parametrize("fragment_tick", [False, True])
def test_a_typed_budget_applies_at_the_runs_start_unless_its_slider_moved_or_a_tick_reported_it(
    monkeypatch, fragment_tick
):
    """The typed box's rules (ui.state.type_setting), with a stand-in for Streamlit's session and run context:
    a value typed alone applies when the run starts; one reported with a slider move does not; and nothing a
    settings widget reports with a results fragment's tick alone applies (an echo of a value the server had
    replaced)."""
    from types import SimpleNamespace

    import streamlit.runtime.scriptrunner as scriptrunner

    from ui import state

    session = {state.STORE: {"budget": 1.0}}
    monkeypatch.setattr(state, "st", SimpleNamespace(session_state=session))
    tick = SimpleNamespace(fragment_ids_this_run=["results"] if fragment_tick else [])
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx", lambda: tick)
    state.type_setting("budget", 0.5)
    state.apply_typed_setting()
    assert session[state.STORE]["budget"] == (1.0 if fragment_tick else 0.5)
    session[state.WIDGET + "epsilon"] = 2.0  # the slider moved in the same interaction as a typed 0.3
    state.type_setting("budget", 0.3)
    state._store_widget("budget", state.WIDGET + "epsilon", state._write)
    state.apply_typed_setting()
    assert session[state.STORE]["budget"] == (1.0 if fragment_tick else 2.0)  # a tick's report is an echo
    assert state.TYPED not in session and state.MOVED not in session  # nothing left for a later run


def test_the_presentation_view_is_kept_in_the_address_and_shows_the_chart_alone():
    at = _explorer({"dataset": "synthetic", "d": "3"})
    assert at.metric  # the standard view: metrics (below the chart), the ledger table
    at.toggle(key="explorer_presentation").set_value(True).run()
    _no_errors(at)
    assert at.session_state["dpci_settings"]["view"] == "presentation"
    assert at.query_params["view"] in ("presentation", ["presentation"])
    assert at.get("plotly_chart") and not at.metric  # the chart, without the numbers a class does not need
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["font"]["size"] == 17


def test_the_explorer_shows_a_methods_caveat_about_its_release():
    """Kulkarni et al. on Adult's rows lean on their Gaussian covariate model: the Explorer says so beside
    the chart (the release's own caveat), not only the server's log."""
    at = _explorer(
        {"dataset": "adult", "mechanism": "kulkarni", "privacy": "zcdp", "rho": "0.5", "randomness": "teaching"}
    )
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in at.warning if "Kulkarni" in w.value or "covariate" in w.value]
    assert said, [w.value for w in at.warning]


@pytest.mark.parametrize(
    "query, wide",
    [
        ({"dataset": "synthetic", "mechanism": "output", "epsilon": "0.05", "d": "3", "n": "2000"}, True),
        (
            {
                "dataset": "synthetic",
                "mechanism": "output",
                "epsilon": "3",
                "d": "3",
                "c": "0.01",
                "estimand": "regularised",
            },
            False,
        ),
    ],
)
@pytest.mark.parametrize("page", ["Explorer", "Present"])
def test_intervals_too_wide_to_be_useful_are_called_so_on_the_explorer_and_present(page, query, wide):
    at = _explorer(query) if page == "Explorer" else _app("pages/5_Present.py")
    if page == "Present":
        at.query_params.update(query)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in at.warning if "Too wide to be useful" in w.value]
    assert bool(said) == wide, [w.value for w in at.warning]


def test_a_link_asking_for_a_method_the_model_cannot_use_says_what_is_shown_instead():
    """Kulkarni et al. fits logistic regression only and releases zCDP only: an address asking for it with
    the Huberized SVM, or with pure DP, is shown with what can run, and the sidebar says which."""
    huber = _explorer({"dataset": "synthetic", "d": "2", "n": "2000", "model": "huber", "mechanism": "kulkarni"})
    _no_errors(huber)
    said = " ".join(w.value for w in huber.sidebar.warning)
    assert "fits logistic regression only" in said and "shown with objective perturbation instead" in said, said
    pure = _explorer({"dataset": "synthetic", "d": "2", "n": "2000", "mechanism": "kulkarni", "privacy": "pure"})
    _no_errors(pure)
    said = " ".join(w.value for w in pure.sidebar.warning)
    assert "releases" in said and "only" in said and "instead" in said, said


@pytest.mark.parametrize(
    "estimand, said",
    [("unregularised", "No c gives an interval for θ here"), ("regularised", "moves a coefficient of θ₀(c)")],
)
def test_on_adult_no_c_is_offered_that_shrinks_the_coefficients(estimand, said):
    """On Adult (d = 10) no c gives an interval for θ, and every c at which θ₀(c)'s interval keeps its level
    moves a coefficient by more than 25%: the sidebar says which, and offers no button, so no press can
    move an estimate by shrinking it."""
    at = _explorer({"dataset": "adult", "estimand": estimand})
    _no_errors(at)
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert said in captions, captions
    assert not [b for b in at.sidebar.button if b.label.startswith("Use the recommended c")]
