"""The recipes of docs/architecture.md, tried from scratch: a new loss with a parameter and a new
method with four budget steps, written in this file only (plus their registration calls), reach the
release specification, the estimator, the command line (the loss's parameter included), the bootstrap
and the Compare page -- with no edit anywhere else."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest
from sklearn.base import clone

import dpci
from dpci import methods
from dpci.losses import LOSSES, register_loss, unregister_loss
from dpci.spec import ReleaseSpec


@dataclass(frozen=True)
class SmoothedHingeLoss:
    """Rennie and Srebro's quadratically smoothed hinge with width g: f(z) = 0 for z >= 1,
    (1 - z)^2 / (2g) for 1 - g < z < 1, 1 - z - g/2 below; |f'| <= 1, |f''| <= t = 1/g."""

    g: float = 1.0
    name: str = "smoothed_hinge"

    def __post_init__(self):
        if not (np.isfinite(self.g) and self.g > 0):
            raise ValueError(f"the width g must be positive, got {self.g!r}.")

    @property
    def t(self):
        return 1.0 / self.g

    @property
    def kinks(self):
        return (1.0 - self.g, 1.0)

    def hessian_sensitivity(self, n):
        return 2.0 * self.t / n  # (|f''(z)| + |f''(z')|) / n, rows in the unit ball (as Lemma 5)

    def covariance_sensitivity(self, n, theta):
        return 2.0 / n  # |f'| <= 1 (as Lemma 4)

    def value_and_derivatives(self, z):
        z = np.asarray(z, dtype=float)
        u = np.clip(1.0 - z, 0.0, self.g)  # the quadratic piece's argument
        value = u * u / (2 * self.g) + np.maximum(1.0 - self.g - z, 0.0)
        return value, -u / self.g, np.where((z > 1.0 - self.g) & (z < 1.0), 1.0 / self.g, 0.0)

    def value(self, z):
        return self.value_and_derivatives(z)[0]

    def derivatives(self, z):
        return self.value_and_derivatives(z)[1:]

    def first_derivative(self, z, overwrite=False, weights=None):
        d1 = self.value_and_derivatives(z)[1]
        return d1 if weights is None else d1 * weights

    def second_derivative(self, z):
        return self.value_and_derivatives(z)[2]

    def weighted_derivatives(self, z, weights=None, second=False, out=None):
        _, d1, d2 = self.value_and_derivatives(z)
        w = 1.0 if weights is None else weights
        if out is not None:
            out[...] = d1 * w
            d1 = out
        else:
            d1 = d1 * w
        return d1, (d2 * w if second else None)


class FourStepOutput(methods.OutputPerturbation):
    """Output perturbation that also spends a fourth share on a private model of the features (the mean
    of x, Gaussian noise of sensitivity 2/n), as a parametric bootstrap would (Ferrando, Wang and Sheldon
    2022). The paper's three steps use phi1..phi3 as output perturbation does."""

    name = "four-step-output"
    label = "output perturbation with a feature model"
    short = "output+4"
    notions = ("zcdp",)
    colors = {"zcdp": "#56B4E9"}
    steps = ("coefficients", "hessian", "covariance", "feature model")
    step_labels = {**methods.Method.step_labels, "feature model": "the features' private mean"}
    splits = {"zcdp": (0.7, 0.1, 0.1, 0.1)}
    pure_steps = (False, False, False, False)

    def release(self, measurement, A, rng, closed_form=True):
        release = super().release(measurement, A, rng, closed_form)
        n = A.shape[0]
        sigma = (2.0 / n) / np.sqrt(2.0 * measurement.allocation.phi[3])  # Gaussian mechanism at rho4 (Bun and Steinke)
        self.feature_mean = np.abs(A).mean(axis=0) + rng.normal(0.0, sigma, A.shape[1])
        return release


@pytest.fixture
def recipes():
    register_loss(SmoothedHingeLoss)
    method = methods.register(FourStepOutput())
    yield method
    methods.unregister(method.name)
    unregister_loss("smoothed_hinge")


def _synthetic(n):
    from dpci.data import make_synthetic_logistic

    return make_synthetic_logistic(n, np.array([1.2, -0.8, 0.3]), random_state=4)


def test_a_new_loss_and_a_four_step_method_in_the_specification(recipes):
    loss = dpci.get_loss("smoothed_hinge", g=0.3)
    assert loss == SmoothedHingeLoss(0.3) and dpci.get_loss("smoothed_hinge", 0.3) == loss  # the parameter arrives
    with pytest.raises(ValueError, match="its parameters: g"):
        dpci.get_loss("smoothed_hinge", h=0.3)
    spec = ReleaseSpec("four-step-output", "zcdp", 0.5, loss=loss, c=1e-2, n_samples=1_000, seed=3)
    assert spec.steps == {"coefficients": 0.7, "hessian": 0.1, "covariance": 0.1, "feature model": 0.1}
    assert ReleaseSpec.from_json(spec.to_json()) == spec
    assert json.loads(spec.to_json())["loss"] == {"name": "smoothed_hinge", "g": 0.3}
    spend = spec.measure().spend
    assert [s.step for s in spend.steps] == list(FourStepOutput.steps)
    assert spend.rho == pytest.approx(0.5)  # four steps compose to the whole budget (Proposition 4)
    with pytest.raises(ValueError, match="4 shares"):
        spec.replace(split=(0.5, 0.25, 0.25))
    X, y = _synthetic(3000)
    release = spec.release(X, y)
    assert release.conf_int.shape == (3, 2) and np.all(release.conf_int[:, 0] < release.conf_int[:, 1])
    assert recipes.feature_mean.shape == (3,)  # the fourth step ran


def test_they_work_in_the_estimator(recipes):
    est = dpci.PrivateERMClassifier(
        loss=dpci.get_loss("smoothed_hinge", g=0.3),
        method="four-step-output",
        privacy="zcdp",
        budget=0.5,
        c=1e-2,
        n_samples=1_000,
        random_state=0,
        classes=(-1, 1),
    )
    X, y = _synthetic(3000)
    est.fit(X, y)
    assert est.release_.conf_int.shape == (3, 2)
    explicit = clone(est).set_params(split=(0.6, 0.2, 0.1, 0.1)).fit(X, y)  # four shares, named steps
    assert explicit.release_.allocation.shares == (0.6, 0.2, 0.1, 0.1)
    assert [s.step for s in est.privacy_spent_.steps] == list(FourStepOutput.steps)
    assert "feature model" in str(est.summary()) or "features' private mean" in est.summary()


def test_they_work_on_the_command_line_and_the_loss_parameter_arrives(recipes, tmp_path, capsys, monkeypatch):
    from dpci.experiments.cli import main

    monkeypatch.setenv("DPCI_BUDGET", "rho=5,delta=1e-6")  # the server's default budget, in zCDP
    X, y = _synthetic(2000)
    csv = tmp_path / "data.csv"
    rows = ["a,b,label"] + [f"{a:.6f},{b:.6f},{'yes' if t > 0 else 'no'}" for (a, b, _), t in zip(X, y)]
    csv.write_text("\n".join(rows) + "\n")
    record = tmp_path / "record.json"
    bounds = tmp_path / "bounds.json"
    bounds.write_text('{"a": [-1, 1], "b": [-1, 1]}')
    argv = [
        "release",
        "--data",
        str(csv),
        "--target",
        "label",
        "--positive",
        "yes",
        "--bounds",
        str(bounds),
        "--rho",
        "0.5",
        "--method",
        "four-step-output",
        "--loss",
        "smoothed_hinge",
        "--loss-param",
        "g=0.3",
        "--c",
        "0.01",
        "--m",
        "1000",
        "--database",
        f"sqlite:///{tmp_path / 'ledger.sqlite3'}",
        "--record",
        str(record),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    stored = json.loads(record.read_text())
    spec = ReleaseSpec.from_dict(stored["specification"]["release"])
    assert spec.loss == SmoothedHingeLoss(0.3) and spec.method == "four-step-output"
    assert list(spec.steps) == list(FourStepOutput.steps) and set(stored["specification"]["release"]["split"]) == set(
        FourStepOutput.steps
    )
    assert main([*argv[:-2], "--loss-param", "h=0.3"]) == 2
    assert "no parameter 'h'" in capsys.readouterr().err
    assert main([*argv[:-2], "--h", "0.3"]) == 2  # a shorthand of another loss is refused, not dropped
    assert "--h is a parameter of other losses" in capsys.readouterr().err


def test_they_work_in_the_bootstrap_and_a_split_sweep(recipes):
    from dpci.experiments.bootstrap import variability_intervals
    from dpci.experiments.sweeps import iter_split_sweep

    X, y = _synthetic(2000)
    vi = variability_intervals(
        X,
        y,
        ReleaseSpec(
            loss=dpci.get_loss("smoothed_hinge", g=0.3), method="four-step-output", privacy="zcdp", budget=0.5, c=1e-2
        ),
        n_replicates=64,
        random_state=0,
    )
    assert vi.bounds.shape == (3, 2) and np.all(vi.bounds[:, 0] < vi.bounds[:, 1])
    last = list(
        iter_split_sweep(
            X, y, dpci.ReleaseSpec("four-step-output", "zcdp", 0.5, loss=dpci.get_loss("smoothed_hinge", g=0.3),
            c=1e-2, n_samples=200), vary="phi1", shares=(0.55, 0.85), n_replicates=4,
        )
    )[-1]  # fmt: skip
    assert last.finished and sorted(last.frame["phi4"].unique()) == pytest.approx([0.05, 0.15])  # the rest, shared
    with pytest.raises(ValueError, match="three steps"):
        next(iter_split_sweep(X, y, dpci.ReleaseSpec("four-step-output", "zcdp", 0.5), vary="phi2"))


def test_they_work_on_the_compare_page(recipes):
    from streamlit.testing.v1 import AppTest

    from tests.test_app import ROOT, TIMEOUT

    at = AppTest.from_file(str(ROOT / "pages/3_Compare_methods.py"), default_timeout=TIMEOUT)
    at.query_params.update(
        {"dataset": "synthetic", "loss": "smoothed_hinge", "cmp_methods": json.dumps([["four-step-output", "zcdp"]])}
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    chooser = next(ms for ms in at.multiselect if ms.label == "Methods")
    assert chooser.value == [("four-step-output", "zcdp")]
    assert at.session_state["dpci_settings"]["loss"] == "smoothed_hinge"
    assert "smoothed_hinge" in LOSSES


PAGE = """
import streamlit as st

import ui.background
import ui.data
import ui.sidebar
import ui.state
from dpci.experiments.sweeps import iter_split_sweep

settings = ui.sidebar.page("Shares of phi1", "How the coefficients' share changes the intervals.", unused=("split",))
X, y, names, _ = ui.data.load_data(settings)
reps = ui.state.kept_widget(st.select_slider, "Repetitions", [8, 16], "recipe_reps", default=8)
key = ui.data.results_key(settings, "recipe", reps)
job = ui.background.sweep_job(
    "recipe",
    key,
    lambda: iter_split_sweep(
        X, y, settings.spec.replace(n_samples=200, seed=None, split=None), vary="phi1",
        n_replicates=reps, random_state=settings.data.seed,
    ),
    "Run",
)
ui.background.sweep_fragment(job, lambda state: st.dataframe(state.frame))
"""


def test_a_page_made_by_the_recipe_runs(tmp_path):
    """docs/architecture.md's 'Add a page', followed from scratch: the sidebar, a kept widget, a results
    key from the specification, a background sweep and its results fragment."""
    from streamlit.testing.v1 import AppTest

    from tests.test_app import ROOT, TIMEOUT

    page = tmp_path / "8_Recipe.py"
    page.write_text(PAGE)
    at = AppTest.from_file(str(page), default_timeout=TIMEOUT)
    at.query_params.update({"randomness": "teaching", "dataset": "synthetic", "d": "2", "n": "1000"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.slider(key="w_split.coefficients").disabled  # the settings it does not use are greyed out
    at.button[0].click().run()
    job = at.session_state["slot_recipe"].job
    assert job.wait(120) and job.error is None, job.error
    at.run()
    assert not at.exception and at.dataframe and set(at.dataframe[0].value["phi1"]) >= {0.5, 0.9}
    assert ROOT.joinpath("pages").is_dir()  # the recipe's page lives outside pages/ and still works


def test_the_explorer_offers_the_new_losss_parameter_and_every_share_of_the_four_steps(recipes):
    """Registering the loss and the method (nothing else) gives the Explorer a control for g and one for
    each share but the last; their values reach the state, the address, the release specification and
    the record the ledger stores."""
    from streamlit.testing.v1 import AppTest

    from tests.test_app import ROOT, TIMEOUT
    from ui.app_state import AppState
    from ui.privacy import spec_of
    from ui.settings import settings_from_spec

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    query = {"randomness": "teaching", "dataset": "synthetic", "d": "2", "n": "2000", "c": "0.01"}
    at.query_params.update({**query, "loss": "smoothed_hinge", "method": "four-step-output", "privacy": "zcdp"})
    at.run()
    at.run()  # the first tick draws the settings
    assert not at.exception, [e.value for e in at.exception]
    g = at.sidebar.slider(key="w_loss.g")
    assert (g.label, g.value, g.min, g.max) == ("Loss parameter g", 1.0, 0.1, 10.0)  # around its default
    g.set_value(0.3).run()
    shares = [at.sidebar.slider(key=f"w_split.{step}") for step in FourStepOutput.steps[:-1]]
    assert [s.label.split(":")[0] for s in shares] == ["φ1", "φ2", "φ3"]
    # the default split is round and sums to 1: 0.65, then half of what is left, the last two equal
    assert [s.value for s in shares] == [0.65, 0.5, 0.5]
    assert any("shares 0.65 / 0.175 / 0.0875 / 0.0875," in c.value for c in at.sidebar.caption)
    for slider, value in zip(shares, (0.5, 0.5, 0.5)):
        slider.set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    store = at.session_state["dpci_settings"]
    assert store["loss.g"] == 0.3 and at.query_params["loss.g"] == "0.3"
    # the address holds every step's share, the last's too (the sliders show fractions of the rest)
    assert at.query_params["split.covariance"] == "0.125" and at.query_params["split.feature model"] == "0.125"
    spec = AppState.from_values(store).spec
    assert spec.loss == SmoothedHingeLoss(0.3) and spec.split == pytest.approx((0.5, 0.25, 0.125, 0.125), abs=1e-12)
    record = spec_of(AppState.from_values(store), "Explorer")
    assert record["release"]["loss"] == {"name": "smoothed_hinge", "g": 0.3}
    assert record["release"]["split"] == pytest.approx(
        {"coefficients": 0.5, "hessian": 0.25, "covariance": 0.125, "feature model": 0.125}
    )
    assert "loss.g" not in record["app"] and settings_from_spec(record).value("loss.g") == 0.3  # said once
    from dpci.ledger import Ledger  # the release the Explorer drew, as the ledger recorded it

    book = Ledger.from_config()
    key = book.key_of("dpci shipped data: synthetic", scope=at.session_state["_visitor"])
    drawn = [r["spec"] for r in book.history(key) if r["spec"].get("loss", {}).get("name") == "smoothed_hinge"]
    assert {"name": "smoothed_hinge", "g": 0.3} in [r["loss"] for r in drawn]
    assert any(r.get("split") == pytest.approx(record["release"]["split"]) for r in drawn)
