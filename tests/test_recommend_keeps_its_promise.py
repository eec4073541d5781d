"""The Explorer's recommended c keeps its promise on the shipped datasets: at the slider's recommended c,
the width it predicts is within a factor 2 of the median width of 15 releases on the same rows (for θ: of
those that give an interval, at least a quarter of them, and where many give none the prediction said some
would not),
for every method with a c, both notions, three budgets and both estimands (θ, the default, from the release
alone where the method and model give it; θ₀(c)), or there is no recommendation, with the reason. Uploads get
no prediction: their geometry is private."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpci import ReleaseSpec
from dpci import methods as registry
from dpci.theta import offers_theta
from ui.app_state import AppState
from ui.choice_of_c import NO_PREDICTION_ON_UPLOADS, advise
from ui.datasets import load_data

DATASETS = [("adult", 3), ("adult", 5), ("adult", 10), ("synthetic", 5)]
# Adult's first three features give an interval for θ from the release at the middle and largest budgets (with
# capital-gain or capital-loss among them no c does; docs/theta.md): there the θ cells must be predicted.
BUDGETS = {"pure": (0.3, 1.0, 3.0), "zcdp": (0.05, 0.5, 4.5)}  # rho = epsilon^2 / 2 for the same three
WITH_C = [m for m in registry.available() if registry.get(m).uses_c]
FACTOR = 2.0
RELEASES = 15


def _cells():
    for method in WITH_C:
        for privacy in registry.get(method).notions:
            for dataset, d in DATASETS:
                for budget in BUDGETS[privacy]:
                    for estimand in ("unregularised", "regularised"):
                        yield method, privacy, dataset, d, budget, estimand


def _settings(method, privacy, dataset, d, budget, estimand) -> AppState:
    return AppState.of(dataset=dataset, d=d, method=method, privacy=privacy, estimand=estimand, budget=budget)


def _width(spec, X, y, loss, theta: bool) -> float:
    """The mean width of one release's interval: for theta from the release (dpci.theta) or its own."""
    from dpci.theta import theta_release

    release = spec.release(X, y)
    interval = theta_release(release, loss, np.random.default_rng(0)).conf_int if theta else release.conf_int
    return float(np.mean(interval[:, 1] - interval[:, 0]))


@pytest.mark.slow
@pytest.mark.parametrize("method, privacy, dataset, d, budget, estimand", list(_cells()))
def test_the_predicted_width_is_within_a_factor_2_of_the_realised(method, privacy, dataset, d, budget, estimand):
    s = _settings(method, privacy, dataset, d, budget, estimand)
    X, y = load_data(s)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        advice = advise(s, *X.shape)
    theta = offers_theta(registry.get(method), s.spec.loss)
    if (dataset, d, estimand, theta) == ("adult", 3, "unregularised", True) and budget >= BUDGETS[privacy][1]:
        assert advice.recommendation is not None and advice.recommendation.from_release, advice.message
    if advice.recommendation is None:
        assert advice.message, "no recommendation and no reason"
        return
    c = advice.slider_c if advice.slider_c is not None else advice.recommendation.c
    predicted = advice.at_slider.width
    rng = np.random.default_rng(11)
    spec = ReleaseSpec(method=method, privacy=privacy, budget=budget, c=c, loss=s.spec.loss)
    widths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(RELEASES):
            seeded = spec.replace(seed=int(rng.integers(2**31)))
            widths.append(_width(seeded, X, y, s.spec.loss, advice.at_slider.from_release))
    given = np.isfinite(widths)  # a release that gives no interval for theta says so (its width is infinite)
    assert given.sum() >= RELEASES // 4, f"c = {c:g}: {given.sum()} of {RELEASES} releases gave an interval"
    if given.mean() <= 0.6:  # many gave none: the prediction must have said some would not (8 draws of its own)
        assert advice.at_slider.given < 1.0, f"{(~given).sum()} of {RELEASES} releases gave no interval, unannounced"
    realised = float(np.median(np.asarray(widths)[given]))
    assert predicted / FACTOR <= realised <= predicted * FACTOR, (
        f"c = {c:g}: predicted width {predicted:.3g}, realised median {realised:.3g}"
    )


def test_an_upload_gets_no_prediction_and_says_why(monkeypatch):
    import ui.choice_of_c as choice

    monkeypatch.setattr(choice, "load_data", lambda s: pytest.fail("an upload's rows were read for a prediction"))
    advice = advise(AppState.of(dataset="upload"), 500, 4)
    assert advice.recommendation is None and advice.message == NO_PREDICTION_ON_UPLOADS
