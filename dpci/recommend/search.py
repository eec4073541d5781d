"""The recommendation: the c whose interval is narrowest for its estimand (the package docstring and
docs/choosing-c.md say why and how), and the prediction at a given c it is searched with."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from .. import methods
from ..accounting import Allocation
from ..exceptions import ReferenceWarning, RegularisationTooSmall, UnderCoverageWarning, WideIntervalWarning, warn
from ..intervals import hessian_and_covariance, too_wide
from ..losses import coerce_loss
from ..spec import ReleaseSpec
from ..theta import offers_theta
from .estimands import check_estimand, describe_estimand
from .reference import PUBLIC_SEED, Reference, min_curvature, positive, predicted_bias, reference, theta_bound_of
from .theta_width import theta_widths
from .widths import coverage, half_widths

C_RANGE = (1e-6, 1.0)  # the c searched (the app's slider ends at 1)
GRID_PER_DECADE = 3
COVERAGE_SLACK = 0.01  # predicted coverage may fall this far below the level (the prediction's own error)
MAX_MOVE = 0.25  # theta_0(c): no coefficient of the reference may be moved by more than this share of itself
NEAR_BEST = 0.1  # theta_0(c): scores within 10% of the best count as equally good; the least penalty wins
BISECTION_STEPS = 6  # between grid points (ratio 10^(1/3)): c to within ~1%, then two digits
GOLDEN_STEPS = 7  # of the search between grid points (their ratio 10^(1/3) shrinks to ~1.06; c keeps 2 digits)
MATRIX_DRAWS = 24  # draws of the interval's private matrices (Algorithm 2) averaged over
DEFAULT_REFERENCE_WORDS = (
    "This prediction is made on the default public reference, rows spread evenly over the unit ball (the smallest "
    "eigenvalue of E[xx'] is {:.3g}); it knows nothing of your data. Rows that concentrate in a few directions "
    "(a column mostly at one of its bounds, as Adult's capital-loss) get intervals many times wider. For a "
    "prediction of your data pass stand_in=(X, y): public rows with the same columns and scaling (an earlier "
    "public release of the same survey, or a synthetic sample from its documentation), never the private rows."
)
NO_PRIVACY_COST = "none: computed from public facts only (n, d, the method, the budget and split, the loss, alpha)"


@dataclass(frozen=True)
class Prediction:
    """What an interval at one c is predicted to be, per coefficient and in summary.

    ``widths``: expected widths (for the unregularised estimand: widened by ``bias`` on both sides);
    ``coverages``: predicted coverage of the estimand; ``shrinkage``: the reference's
    max_j |theta_0(c)_j - theta_0(0)_j| (an estimate, for both estimands); ``bias``: the proven bound
    the unregularised interval is widened by (None for the regularised estimand).
    """

    c: float
    estimand: str
    widths: np.ndarray
    coverages: np.ndarray
    shrinkage: float
    bias: float | None
    noise_share: np.ndarray  # the privacy noise's share of each coefficient's variance
    honest_half: np.ndarray | None = field(default=None, repr=False)  # a covering interval's, for one that is not
    bias_is_flat: bool = False  # the bias bound is ||theta|| <= B at every c (the loss gives no curvature)
    typical: float = math.nan  # the median |coefficient| of the estimand on the reference
    #: The non-private (sandwich) interval's width at the same c: 2 z_{1-alpha/2} times the sampling sd.
    nonprivate_widths: np.ndarray | None = field(default=None, repr=False)
    #: The interval for theta from the release (dpci.theta): ``bias`` is then its correction's allowance.
    from_release: bool = False
    #: The largest share of itself by which the penalty moves a coefficient of the reference (:func:`moved`).
    moved: float = 0.0
    #: The share of the reference's drawn releases that give an interval for theta (1 for other estimands).
    given: float = 1.0

    @property
    def width(self) -> float:
        """The mean expected width over the coefficients."""
        return float(np.mean(self.widths))

    @property
    def coverage(self) -> float:
        """The lowest predicted coverage over the coefficients."""
        return float(np.min(self.coverages))

    @property
    def effective_width(self) -> float:
        """The mean width, or a covering interval's where this one does not account for the privacy noise."""
        return self.width if self.honest_half is None else max(self.width, 2.0 * float(np.mean(self.honest_half)))

    @property
    def score(self) -> float:
        """What the recommendation minimises. For theta_0(c): the half-width relative to a typical
        coefficient of theta_0(c), how far such a coefficient stands from being told apart from 0 (a
        larger c shrinks both the interval and what it estimates, so the width alone would always choose
        the largest c). For theta: the width with its bias bound, in theta's own units (plus twice the
        expected shrinkage where the bias bound is flat and cannot choose c)."""
        if self.bias is None:
            return self.effective_width / (2.0 * self.typical) if self.typical > 0 else math.inf
        return self.effective_width + (2.0 * self.shrinkage if self.bias_is_flat else 0.0)


@dataclass(frozen=True)
class Recommendation(Prediction):
    """:func:`recommend_c`'s answer: the :class:`Prediction` at the recommended ``c``, and

    ``useful``: whether its expected half-width is below a typical coefficient of its estimand (so such
    a coefficient would be told apart from 0); ``advice``: what to change when it is not, or a note (Wu
    et al.'s method picks its own c); ``curve``: (c, width, score) over the c searched, for a chart;
    ``privacy_cost``: none.
    """

    useful: bool = True
    advice: str = ""
    curve: tuple[np.ndarray, np.ndarray, np.ndarray] = field(default=(), repr=False)  # type: ignore[assignment]
    method: str = ""
    privacy_cost: str = NO_PRIVACY_COST

    @property
    def estimand_text(self) -> str:
        return describe_estimand(self.estimand)


@dataclass(frozen=True, eq=False)
class _Problem:
    measurement: methods.Measurement  # the release at the settings asked for (its c is the one varied)
    n: int
    loss: object
    alpha: float
    estimand: str
    ref: Reference
    theta_bound: float | None

    @property
    def method(self) -> methods.Method:
        return self.measurement.method

    @property
    def alloc(self) -> Allocation:
        return self.measurement.allocation

    @property
    def from_release(self) -> bool:
        """Theta with no bound stated, of a method and loss whose release gives an interval for it alone
        (dpci.theta): the prediction is that interval's, on the reference."""
        return self.estimand == "unregularised" and self.theta_bound is None and offers_theta(self.method, self.loss)

    @property
    def flat_bias(self) -> bool:
        """No curvature on the ball ||theta|| <= B (a Huber loss flat there): the bias bound is B at every c,
        so it cannot choose c; the regularised score (width plus the expected shrinkage) does."""
        B = theta_bound_of(self.ref, self.theta_bound)
        return min_curvature(self.loss, B) * self.ref.design_min_eigenvalue <= 0.0

    def valid(self, c: float) -> bool:
        """Whether the method runs at c without its caution (objective perturbation keeps eps' >= eps1/2)."""
        at_c = self.measurement.at_c(c)
        try:
            self.method.coefficient_noise_law(at_c, self.n)
        except RegularisationTooSmall:
            return False
        return self.method.advice(at_c, self.n) is None

    def predict(self, c: float, start=None) -> tuple[Prediction, np.ndarray]:
        """The prediction at c (and theta_0(c) of the reference, a warm start for the next c). The interval's
        private matrices are drawn MATRIX_DRAWS times with the same public seed at every c."""
        loss, n, method = self.loss, self.n, self.method
        theta_c = self.ref.theta0(c, loss, start)
        hessian, covariance = hessian_and_covariance(self.ref.A, loss, theta_c, c, self.ref.weights)
        at_c = self.measurement.at_c(c)
        error = method.offset_law(at_c, hessian, covariance, n)
        shift = theta_c - self.ref.theta
        shrinkage = float(np.max(np.abs(shift)))
        if self.from_release:  # theta's interval draws its own releases (theta_width)
            return self._predict_from_release(at_c, theta_c, (hessian, covariance), error, shrinkage), theta_c
        rng = np.random.default_rng(PUBLIC_SEED)
        drawn = method.interval_matrices(at_c, hessian, covariance, theta_c, n, rng, MATRIX_DRAWS)
        halves = half_widths(method.interval_law(method.offset_law(at_c, drawn[0], drawn[1], n)), self.alpha)
        bias = None if self.estimand == "regularised" else predicted_bias(c, loss, self.ref, self.theta_bound)
        widened = halves + (bias or 0.0)
        target = theta_c if bias is None else self.ref.theta
        cover = coverage(error, widened, np.zeros_like(shift) if bias is None else shift)
        share = moved(theta_c, self.ref.theta)
        honest = half_widths(error, self.alpha) if not method.accounts_for_privacy_noise else None
        flat = bias is not None and self.flat_bias
        prediction = Prediction(
            c,
            self.estimand,
            2.0 * widened.mean(axis=0),
            cover,
            shrinkage,
            bias,
            error.noise_share,
            honest,
            flat,
            float(np.median(np.abs(target))),
            2.0 * NormalDist().inv_cdf(1.0 - self.alpha / 2.0) * error.sampling_sd,
            moved=share,
        )
        return prediction, theta_c

    def _predict_from_release(self, at_c, theta_c, at_theta_c, error, shrinkage) -> Prediction:
        """dpci.theta's interval predicted on the reference (:mod:`.theta_width`); ``at_theta_c`` the reference's
        (Hessian, covariance) at theta_c. Its coverage is the level (a calibrated simulation with its
        allowance); where too few releases give it, its width is infinite."""
        ref, loss, c = self.ref, self.loss, at_c.spec.c
        made = theta_widths(
            at_c,
            loss,
            lambda at: hessian_and_covariance(ref.A, loss, at, c, ref.weights),
            theta_c,
            at_theta_c,
            self.n,
            self.alpha,
        )
        return Prediction(
            at_c.spec.c,
            self.estimand,
            made.widths,
            np.full(theta_c.shape, 1.0 - self.alpha),
            shrinkage,
            made.allowance,
            error.noise_share,
            typical=float(np.median(np.abs(self.ref.theta))),
            nonprivate_widths=2.0 * NormalDist().inv_cdf(1.0 - self.alpha / 2.0) * error.sampling_sd,
            from_release=True,
            given=made.given,
        )

    def covers(self, prediction: Prediction) -> bool:
        """Whether the predicted coverage keeps to the level (within COVERAGE_SLACK, the tables' error)."""
        return prediction.coverage >= 1.0 - self.alpha - COVERAGE_SLACK

    def admits(self, prediction: Prediction) -> bool:
        """Whether a c may be recommended: its interval keeps its level, and for theta_0(c) the penalty moves
        no coefficient of the reference by more than MAX_MOVE of itself (a narrow interval is not bought by
        shrinking what it estimates)."""
        return self.covers(prediction) and (self.estimand != "regularised" or prediction.moved <= MAX_MOVE)

    def score(self, c: float) -> float:
        """What the search minimises at c: the prediction's score, or infinity where it is not admitted."""
        if not self.valid(c):
            return math.inf
        prediction = self.predict(c)[0]
        return prediction.score if self.admits(prediction) else math.inf


def _problem(
    n,
    d,
    *,
    method,
    privacy,
    budget,
    loss="logistic",
    split=None,
    alpha=0.05,
    estimand=None,
    theta_bound=None,
    guess=None,
    stand_in=None,
) -> _Problem:
    from ..intervals import check_count

    n = check_count("n", n, 2)
    method = methods.get(method)
    if not method.uses_c:
        raise ValueError(
            f"{method.label} has no regulariser c: its interval is already for the unregularised coefficients."
        )
    loss = coerce_loss(loss)
    measurement = ReleaseSpec(method.name, privacy, budget, split, loss, alpha=alpha).measure()
    ref = reference(d, loss, guess=guess, stand_in=stand_in, theta_bound=theta_bound)
    if ref.d != d:
        raise ValueError(f"the stand-in has {ref.d} columns; d = {d} coefficients were asked for.")
    theta_bound = None if theta_bound is None else positive("theta_bound", theta_bound)
    if estimand is None:  # the interval the estimators give by default (estimator_base.default_estimand)
        estimand = "unregularised" if theta_bound is not None or offers_theta(method, loss) else "regularised"
    return _Problem(measurement, n, loss, measurement.alpha, check_estimand(estimand), ref, theta_bound)


def predict(n, d, c, **facts) -> Prediction:
    """The expected width, coverage and shrinkage of the interval at a given c (public facts only; no
    privacy cost). ``facts``: the keywords of :func:`recommend_c`. Raises RegularisationTooSmall where
    the method cannot run at c."""
    problem = _problem(n, d, **facts)
    c = positive("c", c)
    problem.method.coefficient_noise_law(problem.measurement.at_c(c), problem.n)  # raises below the bound
    return problem.predict(c)[0]


def recommend_c(
    n,
    d,
    *,
    method,
    privacy,
    budget,
    loss="logistic",
    split=None,
    alpha=0.05,
    estimand=None,
    theta_bound=None,
    guess=None,
    stand_in=None,
) -> Recommendation:
    """The regulariser c that makes the narrowest useful interval, from public facts only.

    Parameters
    ----------
    n : int
        The number of rows (public in the paper: every noise scale uses it).
    d : int
        The number of coefficients, the constant included.
    method : str
        A registered method (:func:`dpci.methods.available`) that takes a c.
    privacy : {"pure", "zcdp"}
        The privacy notion; ``budget`` is epsilon or rho.
    budget : float
        The release's total budget.
    loss : str or Loss, default "logistic"
        The loss with its parameters.
    split : sequence of float, optional
        One share per step of the method (default: the method's, the paper's Table 2).
    alpha : float, default 0.05
        1 - the confidence level.
    estimand : {"unregularised", "regularised"}, optional
        What the interval is for, as the estimators' ``conf_int`` by default: "unregularised", theta, the
        coefficients without penalty (:mod:`dpci.theta`'s interval from the release alone, for logistic
        regression by the paper's methods; with ``theta_bound``, the theta_0(c) interval widened by the
        penalty's bias bound); "regularised", theta_0(c), the coefficients fitted with the penalty (the
        paper's; the default where theta is not offered, as for the Huberized SVM).
    theta_bound : float, optional
        A public bound on ||theta|| for the bias bound (for the Huberized SVM, default: the reference's).
    guess : sequence of float, optional
        The public guess of the coefficients behind the default reference (d values, the constant last).
    stand_in : (X, y), optional
        A public dataset to predict on instead of the default reference (never the private data).

    Returns
    -------
    Recommendation
        ``.c``, the expected ``.width`` (mean over the coefficients) and ``.widths``, the predicted
        ``.coverage`` (lowest over the coefficients), ``.bias`` (the unregularised estimand's bias bound;
        None for the regularised), ``.shrinkage``, ``.useful``, ``.advice`` and the ``.curve`` searched.
        It costs no privacy: nothing here reads private data.

    Raises
    ------
    ValueError
        A method without c (Kulkarni et al.'s), an unknown estimand, invalid settings, or no c in
        [1e-6, 1] at which the method runs without its under-coverage caution.

    Warns
    -----
    WideIntervalWarning
        No c gives a useful interval (the advice says what to change).

    Examples
    --------
    >>> import dpci
    >>> from dpci.data import make_synthetic_logistic
    >>> X, y = make_synthetic_logistic(4_000, [1.5, -1.0, 0.5, 0.3], random_state=0)  # public rows like yours
    >>> rec = dpci.recommend_c(30_000, 4, method="objective", privacy="pure", budget=1, stand_in=(X, y))
    >>> rec.estimand, rec.useful, 0.1 < rec.width < 0.5  # theta's interval from the release, by default
    ('unregularised', True, True)
    """
    facts = dict(method=method, privacy=privacy, budget=budget, loss=loss, split=split, alpha=alpha)
    problem = _problem(n, d, **facts, estimand=estimand, theta_bound=theta_bound, guess=guess, stand_in=stand_in)
    if stand_in is None:
        warn(DEFAULT_REFERENCE_WORDS.format(problem.ref.design_min_eigenvalue), ReferenceWarning, stacklevel=2)
    own = problem.method.own_c(problem.measurement, problem.n, d)
    if own is not None:
        best = problem.predict(own)[0]
        note = f"{problem.method.label} picks its own c (c = {own:.3g}); the c you give is not used."
        return _finish(problem, best, note, (np.array([own]), np.array([best.width]), np.array([best.score])))
    grid = np.geomspace(*C_RANGE, round(GRID_PER_DECADE * math.log10(C_RANGE[1] / C_RANGE[0])) + 1)
    valid = [c for c in grid if problem.valid(c)]
    if not valid:
        raise ValueError(
            f"No c in [{C_RANGE[0]:g}, {C_RANGE[1]:g}] lets {problem.method.label} run with n = {problem.n:,} and "
            f"this budget without under-covering: {problem.method.remedy}."
        )
    predictions, start = [], None
    for c in valid:
        prediction, start = problem.predict(c, start)
        predictions.append(prediction)
    scores = np.array([p.score if problem.admits(p) else math.inf for p in predictions])
    curve = (np.array(valid), np.array([p.width for p in predictions]), scores)
    if problem.from_release and not np.isfinite(scores).any():
        return _no_theta(problem, predictions[0], curve)
    covering = [p for p in predictions if problem.covers(p)]
    if not np.isfinite(scores).any() and covering:
        return _all_shrink(problem, min(covering, key=lambda p: p.moved), curve)
    if not np.isfinite(scores).any():  # e.g. the naive interval where privacy noise dominates at every c
        best = max(predictions, key=lambda p: p.coverage)
        note = (
            f"At no c does {problem.method.label}'s interval keep its level (predicted coverage at most "
            f"{best.coverage:.2f} at c = {best.c:.2g}, where it is highest)."
        )
        warn(note, UnderCoverageWarning, stacklevel=2)
        return _finish(problem, best, note, curve)
    if problem.estimand == "regularised":
        c = _least_penalty(problem, valid, scores)
    else:
        c = _refine(problem, valid, scores, int(np.argmin(scores)))
    return _finish(problem, problem.predict(c)[0], "", curve)


def _least_penalty(problem: _Problem, grid, scores) -> float:
    """The smallest c whose score is within NEAR_BEST of the best on the grid: among the c that tell a
    typical coefficient from 0 about as well, the one that shrinks theta_0(c) least. Bisection in log c
    between that grid point and its smaller neighbour, then c rounded up to two significant digits."""
    limit = float(np.min(scores)) * (1.0 + NEAR_BEST)
    i = int(np.flatnonzero(scores <= limit)[0])
    if i == 0:
        return float(grid[0])
    lo, hi = math.log(grid[i - 1]), math.log(grid[i])
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if problem.score(math.exp(mid)) <= limit:
            hi = mid
        else:
            lo = mid
    rounded = float(f"{math.exp(hi):.2g}")
    return rounded if problem.score(rounded) <= limit else float(grid[i])


def _refine(problem: _Problem, grid, scores, i) -> float:
    """Golden-section search in log c between the grid's neighbours of its best point, then c rounded
    to two significant digits (the grid's point where rounding makes it worse)."""
    lo, hi = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, len(grid) - 1)])

    def score(log_c):
        return problem.score(math.exp(log_c))

    golden = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
    fa, fb = score(a), score(b)
    for _ in range(GOLDEN_STEPS):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - golden * (hi - lo)
            fa = score(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + golden * (hi - lo)
            fb = score(b)
    rounded = float(f"{math.exp(a if fa <= fb else b):.2g}")
    return rounded if score(math.log(rounded)) <= scores[i] else float(grid[i])


def _no_theta(problem: _Problem, least: Prediction, curve) -> Recommendation:
    """No c gives an interval for theta from the release on the reference: say so, and return the least
    penalty the method runs at (the c whose theta_0(c) is nearest theta), marked not useful."""
    advice = (
        f"No c in [{C_RANGE[0]:g}, {C_RANGE[1]:g}] gives an interval for θ from {problem.method.label}'s release on "
        f"{problem.ref.description} (n = {problem.n:,}, d = {problem.ref.d}): at every c most releases' private "
        "Hessians have a direction whose curvature is at most 4c, where the data say too little to undo the "
        "penalty at this budget. More rows or budget, fewer coefficients, or the interval for θ₀(c) "
        f"(estimand='regularised'). Returned: the least penalty the method runs at, c = {least.c:.2g}."
    )
    return _not_useful(problem, least, advice, curve)


def _all_shrink(problem: _Problem, least: Prediction, curve) -> Recommendation:
    """Every c whose interval keeps its level moves a coefficient of theta_0(c) by more than MAX_MOVE of
    itself: say so, and return the one that moves them least, marked not useful."""
    advice = (
        f"Every c at which {problem.method.label}'s interval keeps its level moves a coefficient of θ₀(c) by more "
        f"than {MAX_MOVE:.0%} of itself on {problem.ref.description} (by {least.moved:.0%} at the least, "
        f"c = {least.c:.2g}): no interval here is for coefficients near those without penalty. More rows or "
        "budget let a smaller c run."
    )
    return _not_useful(problem, least, advice, curve)


def _not_useful(problem: _Problem, chosen: Prediction, advice: str, curve) -> Recommendation:
    warn(advice, WideIntervalWarning, stacklevel=4)
    return _recommendation(problem, chosen, False, advice, curve)


def _recommendation(problem: _Problem, chosen: Prediction, useful: bool, advice: str, curve) -> Recommendation:
    fields = {k: getattr(chosen, k) for k in Prediction.__dataclass_fields__}
    return Recommendation(**fields, useful=useful, advice=advice, curve=curve, method=problem.method.name)


def moved(theta_c, theta) -> float:
    """max_j |theta_0(c)_j - theta_j| / |theta_j|: the largest share of itself by which the penalty moves a
    coefficient (a coefficient below 5% of the largest is measured against that 5%)."""
    scale = np.maximum(np.abs(theta), 0.05 * float(np.max(np.abs(theta))))
    return float(np.max(np.abs(theta_c - theta) / scale))


def _finish(problem: _Problem, best: Prediction, note: str, curve) -> Recommendation:
    typical = best.typical
    useful = not too_wide(best.width / 2.0, typical)
    advice = note
    if not useful:
        advice = (
            f"No c gives a useful interval here: the narrowest expected width is {best.width:.3g} "
            f"(for {describe_estimand(best.estimand)}), more than twice a typical coefficient of what it "
            f"estimates ({typical:.2g}, on the public reference): it could not tell such a coefficient from 0. To narrow it: {problem.method.remedy}."
            + (f" {note}" if note else "")
        )
        warn(advice, WideIntervalWarning, stacklevel=3)
    if best.bias is not None and best.width >= 2.0 * theta_bound_of(problem.ref, problem.theta_bound):
        advice += (
            " The interval is no narrower than the bound on ||θ|| itself: the bias bound decides it, not the data."
        )
    return _recommendation(problem, best, useful, advice, curve)
