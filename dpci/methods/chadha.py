"""Chadha, Duchi and Kuditipudi, *Resampling methods for private statistical inference* (arXiv 2402.07131):
a private bag of little bootstraps for the unregularised logistic-regression coefficients theta, with every
release charged (docs/related-methods.md states which reading of their algorithm this is).

The release, on margin rows A = y x with ||a_i|| <= 1 (the constant column included in the norm):

1. ``estimate`` (phi1): objective perturbation (Algorithm 1 of the paper dpci follows; Chaudhuri et al.
   Theorem 6), eps1-DP, at the c where it keeps eps' = eps1 / 2 (:func:`estimate_c`, of order 1/(n eps1),
   far below the sampling error). Their code adds H^-1-shaped noise with a Hessian computed without noise
   and a gradient bound that leaves out the constant column; this estimate needs neither.
2. ``interval`` (phi2): their private bag of little bootstraps (Sections 3-4, with the coverage search of
   their code, ``fast_abthresh_blb_sens_alldim``, and their symmetric sets). The rows are split into s
   disjoint subsets by a permutation drawn independently of the data. On subset i, R replicates, each a
   resample of n rows from its b rows, run the estimator of step 1 (its noise law included); t_ij is the
   (1 - alpha) quantile of |theta_rep,j - theta_i,j|, theta_i the subset's own fit (their statistic
   sqrt(n)(theta_X - theta_s), unscaled). The smallest symmetric set whose median coverage over the
   subsets reaches 1 - alpha is the median of t_1j, ..., t_sj; it is released per coefficient j by the
   inverse-sensitivity (exponential) mechanism on log t in [log lo, log hi] (their ``priv_med_gumbel``), aimed
   a public margin of ranks above the median (:func:`target_rank`: their median drawn privately lands below
   the widths too often; a higher rank is conservative),
   at eps_j = phi2 / d (pure) or sqrt(2 phi2 / d) (zCDP). Replacing one row changes one subset, so one
   t_ij per coefficient: each median's rank utility has sensitivity 1 and it is eps_j-DP; the d medians
   compose to phi2 (pure) or d eps_j^2 / 2 = phi2 (zCDP, Bun and Steinke Prop. 1.4). Their code charges
   the whole interval budget to every coefficient and redraws the threshold's noise at every query.

Not registered by default: the app offers only methods that keep their coverage, and this one under-covers
at small budgets (docs/related-methods.md gives the table). Register it to use it:
``dpci.methods.register(ChadhaBootstrap())``.

The interval is theta~_j -/+ T_j. The objective perturbation's ridge c leaves a bias 2c H^-1 theta that
the bootstrap does not see; at c = O(1/(n eps1)) it is small against T (measured in the docs).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from ..accounting import Allocation
from ..batch import minimise_erm_batch
from ..exceptions import UnderCoverageWarning, warn
from ..losses import LogisticLoss
from ..mechanisms import NoiseLaw, c_for_epsilon_prime, objective_noise_law, objective_perturbation
from ..solver import ConvergenceError, minimise_erm
from .base import Method, PrivateRelease
from .paper import solve_replicates

STEPS = ("estimate", "interval")
SUBSET_CONSTANT = 10.0  # their const_inv_sens: s = ceil(10 log n / eps) subsets
# each subset keeps at least 10 d rows; s = ceil(10 log n / eps_j) is rarely reached below it. The private median's
# rank error is about 2 / eps_j whatever s, so more subsets make it a smaller share of them. Measured (n = 4,000,
# d = 5, eps = 5, eps_j = 0.5, 40 data sets; the median drawn privately at the median rank): 20 d rows (s = 40)
# covered 0.83 (worst coefficient 0.79), 10 d rows (s = 80) 0.97 (0.96): the smaller subsets' widths are wider
# (exact median 4.3 -> 5.0), the private draw no longer falls below them (docs/related-methods.md).
MIN_SUBSET_ROWS_PER_COEF = 10
MIN_SUBSETS = 3
REPLICATE_TOL = 1e-8
REPLICATES = 100  # resamples per subset (their n^0.5 b / log n is ~1,000; 100 settle a median of quantiles)
FLOOR = 2.0  # lo = FLOOR / sqrt(n): see width_range
RANGE = 1e3  # hi = RANGE * lo
# The private quantile lands in the empty log-range below the subsets' widths with weight up to
# log(RANGE) exp(-eps_j s / 4 - RANK_MARGIN / 2), and its rank error 2 / eps_j is a large share of s when s eps_j
# is small. Measured on the same 40 data sets' widths (n = 4,000, d = 5, s = 80, margin 2 / eps_j; exact
# coverage from the mechanism's law): s eps_j = 20 covered 0.95 (worst coefficient 0.93), 16 0.93 (0.91),
# 12 0.90 (0.87), 8 0.88 (0.83) (docs/related-methods.md).
LEAST_SUBSETS_TIMES_EPSILON = 20.0
# The released quantile aims RANK_MARGIN / eps_j ranks above the median (at most s/4; :func:`target_rank`): a
# conservative reading of their median that the rank noise rarely takes below it. Measured (n = 4,000, d = 5,
# eps = 5, s = 80, eps_j = 0.4; 40 data sets' widths, 200 draws each; coverage, worst coefficient, median width):
# the median 0.966, 0.948, 4.33; margins of 1/eps_j 0.973, 0.960, 4.49 and 2/eps_j 0.977, 0.966, 4.64; the
# second keeps s eps_j = 20 covering (above) for 3% of width.
RANK_MARGIN = 2.0
THIN_CAVEAT = (
    "chadha: {s} subsets at epsilon {eps:.3g} per coefficient (s x epsilon = {prod:.3g}, below {least:g}): the "
    "private median of the widths is often drawn below them, so these intervals are likely to cover less often "
    "than their level says (measured 0.58 instead of 0.95 at n = 4,000, epsilon = 1, d = 5). Use more rows or "
    "a larger budget."
)


# --- privacy map ---------------------------------------------------------------------------------
def coefficient_epsilons(alloc: Allocation, d: int) -> tuple[float, float]:
    """(eps1 of the estimate, eps_j of each coefficient's private median): pure DP, phi1 and phi2 / d;
    zCDP, each a pure mechanism costing eps^2 / 2, sqrt(2 phi1) and sqrt(2 phi2 / d)."""
    phi1, phi2 = alloc.phi
    if alloc.privacy == "pure":
        return phi1, phi2 / d
    return math.sqrt(2.0 * phi1), math.sqrt(2.0 * phi2 / d)


def estimate_c(eps1: float, n: int, t: float) -> float:
    """The ridge c of the estimate: objective perturbation keeps eps' = eps1 / 2 there (Algorithm 1, line 1)."""
    return c_for_epsilon_prime(eps1, n, t)


def subset_count(n: int, d: int, eps_j: float) -> int:
    """s = ceil(10 log n / eps_j) (their rule, at each coefficient's own epsilon), at most n / (10 d) so each
    subset has at least 10 d rows; refuses fewer than 3 subsets (too few rows)."""
    most = n // (MIN_SUBSET_ROWS_PER_COEF * d)
    if most < MIN_SUBSETS:
        raise ValueError(
            f"Chadha et al.'s bootstrap needs at least {MIN_SUBSETS} subsets of {MIN_SUBSET_ROWS_PER_COEF} d rows: "
            f"n = {n} rows are too few for d = {d} coefficients (at least "
            f"{MIN_SUBSETS * MIN_SUBSET_ROWS_PER_COEF * d} needed)."
        )
    return int(min(most, max(MIN_SUBSETS, math.ceil(SUBSET_CONSTANT * math.log(n) / eps_j))))


def width_range(n: int) -> tuple[float, float]:
    """The public range [lo, hi] of the released half-widths. lo = 2/sqrt(n): for a well-specified logistic
    model with rows in the unit ball the Hessian is at most I/4, so each coefficient's sampling sd is at least
    2/sqrt(n) and a 95% half-width at least 3.9/sqrt(n); lo keeps half of it, so a release drawn below all the
    widths still keeps half the narrowest interval the model allows. hi = 1,000 lo leaves room for a small
    Hessian's widths (the census-like design's are about 100 lo); a wider subset width is clipped to hi."""
    lo = FLOOR / math.sqrt(n)
    return lo, RANGE * lo


# --- the private pieces --------------------------------------------------------------------------
def target_rank(s: int, epsilon: float) -> float:
    """The rank the private quantile aims at: s/2 + min(RANK_MARGIN / epsilon, s/4). Above the median so that
    the mechanism's rank error (about 2/epsilon) rarely takes the release below the subsets' median width; a
    public function of s and epsilon, so the utility keeps its sensitivity 1."""
    return s / 2.0 + min(RANK_MARGIN / epsilon, s / 4.0)


def _gap_law(values, lo: float, hi: float, epsilon: float, rank: float | None):
    """(edges, probabilities) of the gaps between the sorted log-values: each gap's log-length times
    exp(-epsilon |k - rank| / 2), k the number of values below it (rank None: the median, s/2)."""
    ends = np.log([lo, hi])  # one log for ends and values: a value clipped to hi then leaves no negative gap
    z = np.sort(np.clip(np.log(np.clip(np.asarray(values, dtype=float), lo, hi)), ends[0], ends[1]))
    edges = np.concatenate([ends[:1], z, ends[1:]])
    s = len(z)
    rank = s / 2.0 if rank is None else rank
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(edges)) - epsilon * np.abs(np.arange(s + 1) - rank) / 2.0
    logw -= logw.max()
    p = np.exp(logw)
    return edges, p / p.sum()


def private_median(values, lo: float, hi: float, epsilon: float, rng, rank: float | None = None) -> float:
    """The inverse-sensitivity quantile of ``values`` clipped to [lo, hi], on the log scale, at ``rank`` (None:
    the median, s/2): the gap k between sorted points (k of them below it) is drawn with probability
    proportional to its log-length times exp(-epsilon |k - rank| / 2), then a point uniformly in it. Changing
    one value moves k by at most 1 for every output, so the utility has sensitivity 1 and the draw is
    epsilon-DP (McSherry and Talwar)."""
    edges, p = _gap_law(values, lo, hi, epsilon, rank)
    k = int(rng.choice(len(p), p=p))
    return float(math.exp(rng.uniform(edges[k], edges[k + 1])))


def median_cdf(values, lo: float, hi: float, epsilon: float, rank: float | None = None):
    """The exact CDF of :func:`private_median`'s output (for tests): piecewise linear in log t."""
    edges, mass = _gap_law(values, lo, hi, epsilon, rank)
    lengths = np.diff(edges)
    s = len(mass) - 1
    below = np.concatenate([[0.0], np.cumsum(mass)])

    def cdf(t):
        u = np.log(np.clip(np.asarray(t, dtype=float), lo, hi))
        k = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, s)
        frac = np.divide(u - edges[k], lengths[k], out=np.zeros_like(u), where=lengths[k] > 0)
        return below[k] + mass[k] * frac

    return cdf


def subset_widths(A, loss, c: float, law: NoiseLaw, s: int, replicates: int, alpha: float, rng) -> np.ndarray:
    """(s, d): t_ij, the (1 - alpha) quantile over R replicates of |theta_rep,j - theta_i,j| on subset i.

    A replicate draws n rows from the subset's b and runs the estimate of step 1 on them: the minimiser of
    (1/n) sum_rep f + c ||theta||^2 + beta'theta / n, beta from ``law``; divided by b/n it is the solver's
    objective on the b rows with multiplicities w, (1/b) sum w f + (n c / b) ||theta||^2 + beta'theta / b."""
    n, d = A.shape
    chunks = np.array_split(rng.permutation(n), s)
    out = np.empty((s, d))
    for i, rows in enumerate(chunks):
        Ai = np.asfortranarray(A[rows])
        b = len(rows)
        try:
            centre = minimise_erm(Ai, loss, c, tol=REPLICATE_TOL).theta  # theta_X: the subset rows' estimand
        except ConvergenceError:
            out[i] = np.inf
            continue
        weights = rng.multinomial(n, np.full(b, 1.0 / b), size=replicates).astype(float)
        noise = law.sample(rng, d, replicates)
        # tol 1e-8: a replicate is simulated, never released; on a subset the tiny ridge leaves the Hessian
        # near-singular, and the release's 1e-10 can be out of reach (a width moves by far less than 1e-8)
        try:
            reps = minimise_erm_batch(Ai, loss, c * n / b, weights, noise, tol=REPLICATE_TOL)
        except ConvergenceError:  # a nearly separated subset: counted as infinitely wide (clipped to hi)
            out[i] = np.inf
            continue
        out[i] = np.quantile(np.abs(reps - centre), 1.0 - alpha, axis=0)
    return out


def half_widths(A, loss, c, law, eps_j, alpha, rng, replicates=REPLICATES) -> np.ndarray:
    """The released half-widths T_j: each coefficient's private median of its subsets' widths."""
    n, d = A.shape
    widths = subset_widths(A, loss, c, law, subset_count(n, d, eps_j), replicates, alpha, rng)
    lo, hi = width_range(n)
    rank = target_rank(len(widths), eps_j)
    return np.array([private_median(widths[:, j], lo, hi, eps_j, rng, rank) for j in range(d)])


def thin_caveats(n: int, d: int, eps_j: float) -> tuple[str, ...]:
    """The caveat (also warned, UnderCoverageWarning) when s eps_j is below LEAST_SUBSETS_TIMES_EPSILON."""
    s = subset_count(n, d, eps_j)
    if s * eps_j >= LEAST_SUBSETS_TIMES_EPSILON:
        return ()
    message = THIN_CAVEAT.format(s=s, eps=eps_j, prod=s * eps_j, least=LEAST_SUBSETS_TIMES_EPSILON)
    warn(message, UnderCoverageWarning, stacklevel=3)
    return (message,)


# --- the registered method -----------------------------------------------------------------------
class ChadhaBootstrap(Method):
    """Chadha et al.'s private bag of little bootstraps, charged honestly (one adapter over the functions above)."""

    name = "chadha"
    label = "Chadha et al. private bootstrap"
    short = "Chadha"
    colors = {"pure": "#009E73", "zcdp": "#006D4F"}
    steps = STEPS
    step_labels = {"estimate": "the estimate", "interval": "the interval's widths"}
    pure_steps = (True, True)  # objective perturbation and d exponential mechanisms: pure under both notions
    # their script's eps_param_frac is 0.5; the estimate's noise enters every replicate's width as well, through
    # a Hessian as small as 3e-4 on the census-like design, so a larger share narrows the widths: measured (n =
    # 4,000, eps = 5, s = 80, margin 2 / eps_j) 0.5, 0.6, 0.7 gave 5.24, 4.64, 4.47 (coverage 0.979, 0.977,
    # 0.966); 0.6 keeps s eps_j larger at small budgets.
    splits = {"pure": (0.6, 0.4), "zcdp": (0.6, 0.4)}
    losses = ("logistic",)
    uses_c = False  # it picks its own ridge, of order 1/(n eps1), and targets the unregularised theta
    max_replicates = 200  # each replicate's interval runs s R fits
    description = (
        "Objective perturbation at a tiny c for the estimate; interval widths from a private bag of little "
        "bootstraps (Chadha et al.): each coefficient's median over subsets, released by the exponential "
        "mechanism. Targets the unregularised coefficients; logistic loss only."
    )
    how_it_trains = "fits with a noisy objective, then bootstraps little subsets and releases each width's median"
    remedy = "use more rows or a larger budget (each subset needs 10 d rows)"

    def estimand_c(self, measurement, n, d) -> float:
        return 0.0

    def own_c(self, measurement, n, d):
        return estimate_c(coefficient_epsilons(measurement.allocation, d)[0], n, LogisticLoss().t)

    def variability_key(self, measurement):
        alloc = measurement.allocation
        return (alloc.privacy, round(alloc.phi[0], 12))  # a replicate's coefficients use phi1 only

    def check_settings(self, measurement, n) -> None:
        if getattr(measurement.loss, "name", None) != "logistic":
            raise ValueError(
                "Chadha et al.'s bootstrap fits logistic regression only here (its width floor is the logistic "
                "model's). Choose objective or output perturbation for another model."
            )

    def coefficient_noise_law(self, measurement, n) -> NoiseLaw:
        """The estimate's noise (objective perturbation at its own c; the measurement's c is not used)."""
        self.check_settings(measurement, n)
        eps1, t = coefficient_epsilons(measurement.allocation, 1)[0], measurement.loss.t
        return objective_noise_law(eps1, n, estimate_c(eps1, n, t), t)

    def release(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        """theta~ by step 1, T by step 2; the spec's c, m and ``closed_form`` are not used. Another alpha
        rescales T by the normal quantiles' ratio (``normal_cov``: (T / z)^2), an approximation."""
        loss, alloc, alpha = measurement.loss, measurement.allocation, measurement.alpha
        n, d = A.shape
        law = self.coefficient_noise_law(measurement, n)
        eps1, eps_j = coefficient_epsilons(alloc, d)
        said = thin_caveats(n, d, eps_j)
        own = estimate_c(eps1, n, loss.t)
        theta = objective_perturbation(A, loss, own, eps1, rng).theta
        half = half_widths(A, loss, own, law, eps_j, alpha, rng)
        conf = np.column_stack([theta - half, theta + half])
        cov = np.diag((half / norm.ppf(1.0 - alpha / 2.0)) ** 2)
        return PrivateRelease(theta, None, None, conf, alpha, n, own, alloc, law, None, cov, caveats=said)

    def replicate_coefficients(self, measurement, A, weights, rngs, start, block) -> np.ndarray:
        loss, alloc = measurement.loss, measurement.allocation
        n, d = A.shape
        law = self.coefficient_noise_law(measurement, n)
        noise = np.array([law.sample(rng, d) for rng in rngs])
        own = estimate_c(coefficient_epsilons(alloc, d)[0], n, loss.t)
        return solve_replicates(A, loss, own, weights, noise, start, block)

    def replicate_interval(self, measurement, A, theta, law, rng, weights) -> np.ndarray:
        """The replicate's own widths (its rows repeated by their multiplicities) around its ``theta``."""
        loss, alloc, alpha = measurement.loss, measurement.allocation, measurement.alpha
        rows = np.repeat(A, np.asarray(weights, dtype=int), axis=0)
        n, d = rows.shape
        eps1, eps_j = coefficient_epsilons(alloc, d)
        half = half_widths(rows, loss, estimate_c(eps1, n, loss.t), law, eps_j, alpha, rng)
        return np.column_stack([theta - half, theta + half])
