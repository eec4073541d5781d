"""The method registry: the paper's methods as registered objects, their privacy maps against
hand values, and a method defined outside the package reaching the estimators, the sweeps, the
command line and the Compare page without editing any file of dpci."""

import math

import numpy as np
import pytest
from scipy import stats

import dpci
from dpci import methods
from dpci.accounting import Split, epsilon_from_rho, rho_from_epsilon
from dpci.mechanisms import NoiseLaw, PerturbedFit
from dpci.solver import minimise_erm
from dpci.spec import ReleaseSpec


class DoubledGaussianOutput(methods.OutputPerturbation):
    """A method written outside dpci: Gaussian output perturbation with twice Algorithm 4's sigma.

    Its privacy map is output perturbation's (a doubled sigma spends a quarter of the rho, so the
    ledger over-counts: safe). Only what differs is written here."""

    name = "doubled-gaussian-output"
    label = "output perturbation, doubled noise"
    short = "output x2"
    notions = ("zcdp",)
    colors = {"zcdp": "#009E73"}

    def coefficient_noise_law(self, measurement, n):
        law = super().coefficient_noise_law(measurement, n)
        return NoiseLaw(law.kind, 2.0 * law.scale)

    def perturb(self, measurement, A, rng):
        result = minimise_erm(A, measurement.loss, measurement.c)
        law = self.coefficient_noise_law(measurement, A.shape[0])
        beta = law.sample(rng, A.shape[1])
        return PerturbedFit(result.theta + beta, law, None, result.n_iter, beta)


@pytest.fixture
def outside_method():
    method = methods.register(DoubledGaussianOutput())
    yield method
    methods.unregister(method.name)


def test_the_papers_methods_are_registered():
    assert methods.available()[:2] == ("objective", "output")
    assert methods.pairs(["objective", "output"]) == (
        ("objective", "pure"),
        ("objective", "zcdp"),
        ("output", "pure"),
        ("output", "zcdp"),
    )
    assert set(methods.PAPER_PAIRS) == set(methods.pairs(methods.PAPER))
    assert methods.get("output").describe("zcdp") == "output perturbation, zCDP"
    assert methods.color("objective", "pure") != methods.color("output", "pure")


def test_unknown_and_duplicate_methods_are_refused_clearly():
    with pytest.raises(ValueError, match="unknown method 'laplace'.*'objective', 'output'"):
        methods.get("laplace")
    with pytest.raises(ValueError, match="already registered"):
        methods.register(methods.ObjectivePerturbation())
    with pytest.raises(ValueError, match="dpci's own methods"):
        methods.unregister("output")
    with pytest.raises(TypeError, match="Method instance"):
        methods.register("objective")


def test_privacy_maps_against_hand_values():
    # zCDP, objective, rho = 0.5, split (0.65, 0.2, 0.15): Algorithm 1 runs at eps1 = sqrt(2 * 0.325) (Theorem 2)
    a = methods.get("objective").allocate(0.5, (0.65, 0.2, 0.15), "zcdp")
    assert [s.rho for s in a.spend.steps] == pytest.approx([0.325, 0.1, 0.075])
    assert a.coef_epsilon == pytest.approx(0.806225774829855)
    assert [s.epsilon for s in a.spend.steps][1:] == [None, None]
    assert a.spend.rho == pytest.approx(0.5) and a.spend.epsilon is None
    # pure, output, eps = 2, Table 2 (0.8, 0.1, 0.1): eps_i and rho_i = eps_i^2 / 2 (Proposition 1)
    b = methods.get("output").allocate(2.0, None, "pure")
    assert [s.epsilon for s in b.spend.steps] == pytest.approx([1.6, 0.2, 0.2])
    assert [s.rho for s in b.spend.steps] == pytest.approx([1.28, 0.02, 0.02])
    # the noise is read from the same allocation: sigma = (1/(nc)) / sqrt(2 rho1) (Algorithm 4, line 6)
    z = ReleaseSpec("output", "zcdp", 0.5, c=1e-2).measure()
    law = methods.get("output").coefficient_noise_law(z, 1000)
    assert law.scale == pytest.approx(0.1 / math.sqrt(2 * 0.45))


def test_a_method_refuses_a_notion_it_does_not_support(outside_method):
    with pytest.raises(ValueError, match="privacy .*'doubled-gaussian-output'.*must be one of 'zcdp'"):
        outside_method.allocate(1.0, None, "pure")
    with pytest.raises(ValueError, match="must be one of 'zcdp'"):
        dpci.PrivateLogisticRegression(method=outside_method.name, privacy="pure").fit(*_data(300))


def test_split_value_type():
    s = Split.from_rest(0.6, 0.25)
    assert s == pytest.approx((0.6, 0.1, 0.3)) and s.phi2_rest == pytest.approx(0.25)
    assert Split.even_rest(0.8) == pytest.approx((0.8, 0.1, 0.1))
    assert Split.coerce(x for x in (0.5, 0.25, 0.25)) == (0.5, 0.25, 0.25)  # a generator is three shares
    with pytest.raises(ValueError, match="sum to 1"):
        Split(0.5, 0.2, 0.2)
    with pytest.raises(ValueError, match="positive"):
        Split(1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="3 shares"):
        Split.coerce((0.5, 0.5))
    assert rho_from_epsilon(1.0) == 0.5 and epsilon_from_rho(0.5) == 1.0


def test_a_regularisation_too_small_error_carries_the_bound():
    X, y = _data(150)
    with pytest.raises(dpci.RegularisationTooSmall) as err:
        dpci.PrivateLogisticRegression(c=1e-6, budget=1.0, random_state=0).fit(X, y)
    bound = 0.25 / (2 * 150 * math.expm1(0.65))  # t / (2 n (e^eps1 - 1)), eps1 = 0.65 (Table 2)
    assert err.value.smallest_c == pytest.approx(bound)
    assert err.value.suggested_c > bound and isinstance(err.value, ValueError)


def _data(n, seed=1):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 2))
    X = np.column_stack([Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1.0), np.ones(n)]) / np.sqrt(2)
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-X @ [1.5, -1.0, 0.3])), 1, -1)
    return X, y


def test_an_outside_method_is_usable_everywhere(outside_method):
    from dpci.experiments.bootstrap import variability_intervals
    from dpci.experiments.cli import build_parser
    from dpci.experiments.sweeps import iter_split_sweep

    assert outside_method.name in methods.available()
    X, y = _data(2000)
    # the estimator: method= names it, and the ledger is the method's own privacy map
    est = dpci.PrivateLogisticRegression(
        method=outside_method.name, privacy="zcdp", budget=0.5, c=1e-2, random_state=0
    ).fit(X, y)
    assert est.privacy_spent_ == outside_method.allocate(0.5, None, "zcdp").spend
    assert "doubled noise" in str(est.summary())
    # its noise law reached the release: sigma twice Algorithm 4's
    plain = ReleaseSpec("output", "zcdp", 0.5, c=1e-2).measure()
    # sigma = 2 (1 / (n c)) / sqrt(2 rho1), rho1 = 0.9 * 0.5 (Table 2; Algorithm 4, line 6)
    assert est.release_.coef_noise.scale == pytest.approx(2 * (1 / (2000 * 1e-2)) / math.sqrt(2 * 0.45))
    assert est.release_.coef_noise.scale == pytest.approx(
        2 * methods.get("output").coefficient_noise_law(plain, 2000).scale
    )
    # a sweep and the bootstrap
    last = list(
        iter_split_sweep(
            X,
            y,
            dpci.ReleaseSpec(outside_method.name, "zcdp", 0.5, loss=dpci.LogisticLoss(), c=1e-2, n_samples=200),
            shares=(0.5, 0.9),
            n_replicates=8,
        )
    )[-1]
    assert set(last.frame["mechanism"]) == {outside_method.name} and last.finished
    vi = variability_intervals(
        X,
        y,
        ReleaseSpec(loss=dpci.LogisticLoss(), method=outside_method.name, privacy="zcdp", budget=0.5, c=1e-2),
        n_replicates=64,
        random_state=0,
    )
    assert np.all(vi.bounds[:, 0] < vi.bounds[:, 1])
    # the command line's choices
    args = build_parser().parse_args(
        [
            "sweep",
            "coverage",
            "--out",
            "x.csv",
            "--method",
            outside_method.name,
            "--methods",
            f"{outside_method.name}:zcdp,output:pure",
        ]
    )
    assert args.mechanism == outside_method.name
    assert args.methods == ((outside_method.name, "zcdp"), ("output", "pure"))


def test_variability_of_the_outside_method_is_twice_as_wide_as_output_perturbation(outside_method):
    """With the noise dominating (n = 2,000, small rho), doubling sigma doubles the spread of the
    private estimates: the ratio of the variability intervals' lengths is close to 2."""
    from dpci.experiments.bootstrap import variability_intervals

    X, y = _data(2000)
    kw = dict(n_replicates=2000, random_state=0)
    spec = dpci.ReleaseSpec("output", "zcdp", 0.005, loss=dpci.LogisticLoss(), c=1e-2)
    wide = variability_intervals(X, y, spec.replace(method=outside_method.name, split=None), **kw)
    base = variability_intervals(X, y, spec, **kw)
    ratio = np.diff(wide.bounds).ravel() / np.diff(base.bounds).ravel()
    assert ratio == pytest.approx(2.0, rel=0.12)
    # and the coordinates of the estimates are normal with that spread (KS, fixed seed)
    sigma = 2 * methods.get("output").coefficient_noise_law(spec.measure(), 2000).scale
    # the privacy noise dominates here: the spread of the estimates is the noise's sigma (2,000 draws: ~2% SE)
    assert np.std(base.estimates[:, 0]) == pytest.approx(sigma / 2, rel=0.1)
    centred = (wide.estimates[:, 0] - np.median(wide.estimates[:, 0])) / np.std(wide.estimates[:, 0])
    assert stats.kstest(centred, "norm").pvalue > 0.01


def test_the_compare_page_lists_an_outside_method(outside_method):
    from streamlit.testing.v1 import AppTest

    from tests.test_app import ROOT, TIMEOUT

    at = AppTest.from_file(str(ROOT / "pages/3_Compare_methods.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    chooser = next(ms for ms in at.multiselect if ms.label == "Methods")
    assert (outside_method.name, "zcdp") in chooser.options or any("output x2, zCDP" in str(o) for o in chooser.options)
    assert set(map(tuple, chooser.value)) == set(methods.PAPER_PAIRS)  # the default is the paper's four


def test_the_naive_interval_is_output_perturbation_without_the_privacy_noise():
    """Same privacy map and the same released coefficients and matrices as output perturbation (same
    seed); under zCDP its covariance is Algorithm 5's U = sigma^2 I + H^-1 Sigma H^-1 / n without sigma^2 I."""
    X, y = _data(2000)
    naive, output = methods.get("naive"), methods.get("output")
    assert naive.allocate(0.5, None, "zcdp").spend.steps == output.allocate(0.5, None, "zcdp").spend.steps
    assert not naive.accounts_for_privacy_noise and output.accounts_for_privacy_noise
    a = dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), "naive", "zcdp", 0.5, c=1e-2, random_state=4)
    b = dpci.private_confidence_intervals(X, y, dpci.LogisticLoss(), "output", "zcdp", 0.5, c=1e-2, random_state=4)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.hessian, b.hessian)
    sigma2 = b.coef_noise.scale**2
    np.testing.assert_allclose(a.normal_cov + sigma2 * np.eye(3), b.normal_cov, rtol=1e-12)
    assert np.all(np.diff(a.conf_int) < np.diff(b.conf_int))


@pytest.mark.slow
def test_the_naive_interval_under_covers_where_privacy_noise_dominates():
    """Known-truth logistic model (theta = (1.5, -1, 0.5)), nominal 95%: at n = 2,000, epsilon = 0.5 the
    privacy noise dominates and the naive interval covers about a third of the time (measured 0.35 +/- 0.02)
    while output perturbation's covers (0.97); at n = 50,000, epsilon = 30 the noise is negligible and the
    naive interval covers as a textbook one does."""
    from dpci.data import make_synthetic_logistic, population_theta0

    theta = np.array([1.5, -1.0, 0.5])

    def coverage(method, n, eps, c, reps):
        theta0, rng, hits = population_theta0(theta, c, loss="logistic"), np.random.default_rng(3), []
        for _ in range(reps):
            X, y = make_synthetic_logistic(n, theta, random_state=rng)
            ci = dpci.private_confidence_intervals(
                X, y, dpci.LogisticLoss(), method, "pure", eps, c=c, n_samples=1000, random_state=rng
            ).conf_int
            hits.append(((ci[:, 0] <= theta0) & (theta0 <= ci[:, 1])).mean())
        return float(np.mean(hits))

    assert coverage("naive", 2_000, 0.5, 1e-3, 200) < 0.6  # SE ~ 0.02
    assert coverage("output", 2_000, 0.5, 1e-3, 200) >= 0.93
    assert coverage("naive", 50_000, 30.0, 1e-2, 100) >= 0.90  # SE ~ 0.015 around 0.95
