"""Awan and Wang, *Simulation-based, finite-sample inference for privatized data* (JASA; arXiv 2303.05328): the
repro-samples confidence interval for logistic regression on one covariate, every released quantity private
(docs/related-methods.md states which reading of their paper and code this is).

The model (public; their logistic-regression example, dpci.data.awan_wang's design): rows (1, x) scaled by a
public ``row_scale`` (1/sqrt 2 on their design, so ||row|| <= 1), x = 2 B - 1 with B ~ Beta(a, b), (a, b) unknown, and
P(y = 1 | x) = S(beta0 + beta1 x). theta = (beta0, beta1) on (1, x); nuisance (a, b). dpci reports the
coefficients on the scaled rows, beta / row_scale.

The release (pure DP; their script ``linear_logistic/Repro_Logistic.R``, ``sdp_fun``), on their rows (1, x):

1. ``coefficients`` (phi1 = 0.9 eps): objective perturbation with K-norm noise (Awan and Slavkovic, *Structure
   and sensitivity in differential privacy: comparing K-norm mechanisms*, JASA 2021, its objective perturbation
   for logistic regression): minimise -(1/n) loglik(beta) + Delta / (2n) ||beta||^2 + b'beta / n, b with density
   proportional to exp(-(q phi1 / 2) ||b||_inf) (the per-row score (y - p)(1, x) has ||.||_inf <= 1, so a
   replaced row moves it by 2 in the l_inf norm), Delta = lambda / (exp((1 - q) phi1) - 1) with lambda = 1/2 >=
   ||(1, x)||^2 / 4 the largest eigenvalue of a row's Hessian, q = 0.85: phi1-DP.
2. ``moments`` (phi2 = 0.1 eps): (mean B, mean B^2) + N / (phi2 n), N from the K-norm mechanism of the
   sensitivity hull K of {(u - v, u^2 - v^2): u, v in [0, 1]} (a replaced row moves the sums by a point of K):
   phi2-DP. The law of x is not assumed known: its shape parameters are nuisance, informed by these moments.

Basic composition: eps in total. Everything after is post-processing of the released s = (beta~0, beta~1,
m1, m2) and of repro seeds drawn independently of the data.

The interval (their repro-sample test with its Monte Carlo-valid rank rule, as ``scoreMCE_theta`` and ``getCI`` run
it; the paper's text was not at hand, so this reading is of their script): draw R = 200 repro seeds u_1..u_R once
(uniforms for x and y, and both mechanisms' noise); for a candidate psi = (beta0, beta1, log a, log b), s_r(psi) is
the statistic the release would make on the data the model makes from u_r. psi is accepted when the Mahalanobis
depth of s among the R + 1 points {s_1(psi), ..., s_R(psi), s} (mean and covariance of all R + 1, as their
``depth.Mahalanobis``) ranks at least floor(alpha (R + 1)) + 1 from the shallowest: at the true psi the R + 1 points
are exchangeable, so it is rejected with probability at most alpha whatever R. The set of accepted psi is projected
on each coefficient: the interval runs from the smallest to the largest accepted coefficient (nuisance profiled
out), found by a search from the deepest psi outward and bisection to the last rejected point (conservative by the
tolerance), like their ``getCI``. Their search optimises the acceptance score with L-BFGS-B; ours minimises the
Mahalanobis distance by Gauss-Newton on the cloud's mean (dpci's reading, about 40 times cheaper; a miss narrows the
interval, as theirs would: on the same s and seeds theirs missed accepted psi and came out 6-27% narrower,
docs/related-methods.md). Their script starts the search at the TRUE parameter; ours starts at the private estimate
and moment estimates of (a, b). The reported interval is the hull of the projection and the estimate (a superset:
still valid).

Not registered by default (it fits one model on one covariate with a Beta law, and one release runs about
10^4 - 10^5 small logistic fits). Register it to use it: ``dpci.methods.register(ReproSamples())``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv, expit

from ..mechanisms import NoiseLaw
from .base import Method, PrivateRelease

STEPS = ("coefficients", "moments")
REPRO_SAMPLES = 200  # their R
SHARE_Q = 0.85  # their q: the coefficients' noise gets q phi1, the ridge's Jacobian (1 - q) phi1
LAMBDA = 0.5  # their lambda = d / 4: the largest eigenvalue of a row's Hessian S'(.)(1, x)(1, x)' for |x| <= 1
LINF_SENSITIVITY = 2.0  # their xi for norm = infinity: the score (y - p)(1, x) has ||.||_inf <= 1
BETA_BOX = 10.0  # their search box: |beta_j| <= 10, |log a|, |log b| <= 5
LOG_SHAPE_BOX = 5.0
# x = 2 F^-1(u) - 1 by interpolating the Beta quantile on probabilities logit-spaced over [-30, 30] (their qbeta is
# exact): error in x below 2e-6 at Beta(1/2, 1/2), 2e-4 at the box's U-shaped extremes, far below a row's effect
_GRID = expit(np.linspace(-30.0, 30.0, 8001))
FD_STEP = 0.05  # Gauss-Newton's finite-difference step in beta and in log a, log b
GN_ITERATIONS = 3
TOLERANCE = 0.01  # the bisection stops at this share of the coefficient's cloud sd (their tol: 1e-4)


# --- the K-norm mechanisms (Awan and Slavkovic 2021: radius Gamma(d + 1), direction uniform in K) ---------------
def moment_hull_upper(u):
    """The upper edge of K = conv{(u - v, u^2 - v^2): u, v in [0, 1]} over u in [-1, 1] (K = -K gives the lower):
    -u^2 below -1/2, the tangent u + 1/4 between, 1 - (1 - u)^2 above 1/2."""
    u = np.asarray(u, dtype=float)
    return np.where(u <= -0.5, -(u**2), np.where(u < 0.5, u + 0.25, 1.0 - (1.0 - u) ** 2))


def in_moment_hull(points) -> np.ndarray:
    """Whether each (u, v) lies in K."""
    p = np.atleast_2d(np.asarray(points, dtype=float))
    u, v = p[:, 0], p[:, 1]
    return (np.abs(u) <= 1.0) & (v <= moment_hull_upper(u)) & (v >= -moment_hull_upper(-u))


def uniform_in_moment_hull(rng, size: int) -> np.ndarray:
    """(size, 2) points uniform in K, by rejection from the square [-1, 1]^2 (K fills about a third of it)."""
    out = np.empty((0, 2))
    while len(out) < size:
        proposals = rng.uniform(-1.0, 1.0, (3 * (size - len(out)) + 8, 2))
        out = np.vstack([out, proposals[in_moment_hull(proposals)]])
    return out[:size]


def knorm_noise(rng, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(N1, N2), (size, 2) each: the l_inf K-norm draw (coefficients) and the moment hull's (moments), at unit
    scale: density proportional to exp(-||z||_K)."""
    n1 = rng.gamma(3.0, 1.0, (size, 1)) * rng.uniform(-1.0, 1.0, (size, 2))
    n2 = rng.gamma(3.0, 1.0, (size, 1)) * uniform_in_moment_hull(rng, size)
    return n1, n2


def ridge(eps1: float, q: float = SHARE_Q) -> float:
    """Their Delta = lambda / (exp((1 - q) eps1) - 1): the ridge objective perturbation needs at eps1."""
    return LAMBDA / math.expm1((1.0 - q) * eps1)


# --- the statistic -------------------------------------------------------------------------------------------
def fit_perturbed(x, y, b, delta: float, start=None, iterations: int = 100) -> np.ndarray:
    """(R, 2): for each row r of x, y (R, n), the minimiser of -(1/n) sum [y log p + (1 - y) log(1 - p)] +
    delta / (2n) ||beta||^2 + b_r'beta / n, p = S(beta0 + beta1 x); Newton's method on all R at once (strictly
    convex), each step at most 1 long, until every step is below 1e-10."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    beta = np.zeros((x.shape[0], 2)) if start is None else np.array(start, dtype=float)
    for _ in range(iterations):
        p = expit(beta[:, :1] + beta[:, 1:] * x)
        w, r = p * (1.0 - p), y - p
        g0 = r.sum(axis=1) - delta * beta[:, 0] - b[:, 0]
        g1 = (r * x).sum(axis=1) - delta * beta[:, 1] - b[:, 1]
        h00, h01, h11 = w.sum(axis=1) + delta, (w * x).sum(axis=1), (w * x * x).sum(axis=1) + delta
        det = h00 * h11 - h01**2
        step = np.column_stack([h11 * g0 - h01 * g1, h00 * g1 - h01 * g0]) / det[:, None]
        size = np.abs(step).max(axis=1, keepdims=True)
        beta += step / np.maximum(1.0, size)
        if size.max() < 1e-10:  # g and the Hessian are both sums: the step is in beta's units
            break
    return beta


def statistic(x, y, n1, n2, eps1: float, eps2: float, start=None) -> np.ndarray:
    """(R, 4): s = (beta~0, beta~1, m1, m2) of the release on rows (1, x_r), labels y_r in {0, 1}, with the
    unit-scale K-norm draws n1, n2 (R, 2): b = 2 / (q eps1) n1, moments of B = (x + 1) / 2 plus n2 / (eps2 n)."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    n = x.shape[1]
    b = LINF_SENSITIVITY / (SHARE_Q * eps1) * n1
    beta = fit_perturbed(x, y, b, ridge(eps1), start)
    B = (x + 1.0) / 2.0
    moments = np.column_stack([B.mean(axis=1), (B * B).mean(axis=1)]) + n2 / (eps2 * n)
    return np.column_stack([beta, moments])


def design_from_margins(A, row_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(x, y01) from dpci's margin rows A = y (1, x) row_scale: y = sign(A_0), x = A_1 y / row_scale in [-1, 1]."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[1] != 2:
        raise ValueError(
            f"Awan and Wang's repro samples fit an intercept and one covariate: X needs 2 columns (the constant "
            f"{row_scale:.6g}, then x {row_scale:.6g}), got shape {A.shape}."
        )
    if not np.allclose(np.abs(A[:, 0]), row_scale, rtol=1e-9, atol=0.0):
        raise ValueError(
            f"the first column of X must be the constant row_scale = {row_scale:.6g} (their rows (1, x) scaled); "
            "set ReproSamples(row_scale=...) to the public scale your rows use."
        )
    y = np.sign(A[:, 0])
    x = A[:, 1] * y / row_scale
    if np.abs(x).max() > 1.0 + 1e-9:
        raise ValueError(f"the covariate must lie in [-row_scale, row_scale] = +-{row_scale:.6g} (x in [-1, 1]).")
    return np.clip(x, -1.0, 1.0), (y > 0).astype(float)


@dataclass(frozen=True)
class Seeds:
    """R repro seeds, drawn once and shared by every candidate psi (their seed, U, N1, N2): the uniforms of x
    (kept as positions on the quantile grid), of y, and both mechanisms' unit draws."""

    where: np.ndarray  # (R, n) grid cell of each x uniform
    frac: np.ndarray  # (R, n) its position inside the cell
    uy: np.ndarray  # (R, n)
    n1: np.ndarray  # (R, 2)
    n2: np.ndarray  # (R, 2)

    @classmethod
    def draw(cls, rng, count: int, n: int) -> Seeds:
        ux = np.clip(rng.random((count, n)), _GRID[0], _GRID[-1])
        where = np.clip(np.searchsorted(_GRID, ux, side="right") - 1, 0, len(_GRID) - 2)
        frac = (ux - _GRID[where]) / (_GRID[where + 1] - _GRID[where])
        uy = rng.random((count, n))
        n1, n2 = knorm_noise(rng, count)
        return cls(where, frac, uy, n1, n2)

    def covariate(self, log_a: float, log_b: float) -> np.ndarray:
        """x = 2 F^-1(u) - 1 under Beta(a, b), for every seed."""
        q = betaincinv(math.exp(log_a), math.exp(log_b), _GRID)
        lo = q[self.where]
        return 2.0 * (lo + self.frac * (q[self.where + 1] - lo)) - 1.0


def moment_start(m1: float, m2: float) -> tuple[float, float]:
    """(log a, log b) by the method of moments from the private (m1, m2), inside the box (Beta(1, 1) when the
    noisy moments admit no Beta law)."""
    var = m2 - m1 * m1
    if not (0.0 < m1 < 1.0) or var <= 0.0 or var >= m1 * (1.0 - m1):
        return 0.0, 0.0
    total = m1 * (1.0 - m1) / var - 1.0
    log_a, log_b = np.clip(np.log([m1 * total, (1.0 - m1) * total]), -LOG_SHAPE_BOX, LOG_SHAPE_BOX)
    return float(log_a), float(log_b)


# --- the confidence set and its projection ---------------------------------------------------------------------
class ReproSearch:
    """The repro-samples test of psi = (beta0, beta1, log a, log b) against the released s, with fixed seeds."""

    def __init__(self, s, seeds: Seeds, eps1: float, eps2: float, alpha: float):
        self.s, self.seeds, self.eps1, self.eps2 = np.asarray(s, dtype=float), seeds, eps1, eps2
        count = len(seeds.uy)
        self.rank = math.floor(alpha * (count + 1)) + 1  # accept when at least this many are no deeper than s
        self._start: np.ndarray | None = None
        self.evaluations = 0

    def cloud(self, psi) -> np.ndarray:
        """(R, 4): the statistics the seeds give at psi (warm-started from the last fits)."""
        x = self.seeds.covariate(psi[2], psi[3])
        y = (self.seeds.uy <= expit(psi[0] + psi[1] * x)).astype(float)
        out = statistic(x, y, self.seeds.n1, self.seeds.n2, self.eps1, self.eps2, self._start)
        self._start = out[:, :2]
        self.evaluations += 1
        return out

    def test(self, cloud) -> tuple[bool, float]:
        """(accepted, d2 of s): the Mahalanobis depth rank of s among the R + 1 points (their depth.Mahalanobis
        on rbind(synth, s_dp); a rank counts the points no deeper than s, ties included). A degenerate cloud (no
        covariance: only at the search box's edges) is counted as rejected."""
        points = np.vstack([cloud, self.s])
        centred = points - points.mean(axis=0)
        cov = centred.T @ centred / (len(points) - 1)
        try:
            z = np.linalg.solve(np.linalg.cholesky(cov), centred.T)
        except np.linalg.LinAlgError:
            return False, math.inf
        d2 = (z * z).sum(axis=0)
        return int((d2 >= d2[-1]).sum()) >= self.rank, float(d2[-1])

    def _residual(self, cloud):
        """s - the cloud's mean, whitened by the cloud's covariance (Gauss-Newton's residual)."""
        L = np.linalg.cholesky(np.cov(cloud.T) + 1e-12 * np.eye(4))
        return L, np.linalg.solve(L, self.s - cloud.mean(axis=0))

    def improve(self, psi, free, iterations=GN_ITERATIONS):
        """(accepted psi or None, last psi): Gauss-Newton on the Mahalanobis distance of s from the cloud's mean
        over the ``free`` coordinates of psi, stopping at the first accepted psi (any psi accepted will do)."""
        psi = np.array(psi, dtype=float)
        cloud = self.cloud(psi)
        if self.test(cloud)[0]:
            return psi, psi
        for _ in range(iterations):
            try:
                L, r = self._residual(cloud)
            except np.linalg.LinAlgError:
                break
            J = np.empty((4, len(free)))
            for k, j in enumerate(free):
                probe = psi.copy()
                probe[j] += FD_STEP
                other = self.cloud(probe)
                if self.test(other)[0]:
                    return probe, probe
                J[:, k] = np.linalg.solve(L, other.mean(axis=0) - cloud.mean(axis=0)) / FD_STEP
            step = np.linalg.lstsq(J, r, rcond=1e-8)[0]
            psi = clip_to_box(psi + np.bincount(free, weights=step, minlength=4))
            cloud = self.cloud(psi)
            if self.test(cloud)[0]:
                return psi, psi
        return None, psi

    def centre(self) -> tuple[np.ndarray | None, np.ndarray]:
        """The deepest psi found from the private estimate and the moments' (a, b): (accepted psi or None, last)."""
        start = np.array([self.s[0], self.s[1], *moment_start(self.s[2], self.s[3])])
        return self.improve(clip_to_box(start), [0, 1, 2, 3], iterations=2 * GN_ITERATIONS)

    def endpoint(self, j: int, psi, direction: float, sd: float) -> float:
        """The last rejected value of coefficient j beyond the accepted psi (bisection to TOLERANCE sd): steps
        of 2 sd outward until a rejection (or the box), then halving the bracket."""
        inside, nuisance = float(psi[j]), np.array(psi, dtype=float)
        step = 2.0 * sd
        outside = None
        while outside is None:
            value = float(np.clip(inside + direction * step, -BETA_BOX, BETA_BOX))
            found = self.probe(j, value, nuisance)
            if found is None:
                outside = value
            elif abs(value) >= BETA_BOX:
                return value
            else:
                inside, nuisance, step = value, found, 1.5 * step
        while abs(outside - inside) > TOLERANCE * sd:
            middle = 0.5 * (inside + outside)
            found = self.probe(j, middle, nuisance)
            if found is None:
                outside = middle
            else:
                inside, nuisance = middle, found
        return outside

    def probe(self, j: int, value: float, psi):
        """An accepted psi with coefficient j at ``value`` (the other three searched), or None."""
        start = np.array(psi, dtype=float)
        start[j] = value
        return self.improve(start, [k for k in range(4) if k != j])[0]


def clip_to_box(psi) -> np.ndarray:
    """psi inside their search box."""
    box = np.array([BETA_BOX, BETA_BOX, LOG_SHAPE_BOX, LOG_SHAPE_BOX])
    return np.clip(psi, -box, box)


def repro_intervals(search: ReproSearch, coefficients=(0, 1)) -> tuple[np.ndarray, tuple[str, ...]]:
    """(2, 2) bounds on (beta0, beta1) (their units), each of ``coefficients`` the hull of the accepted set's
    projection and the estimate (another: the search box); with a caveat when no psi was accepted (the interval
    is then the estimate alone)."""
    estimate = search.s[:2]
    bounds = np.tile([-BETA_BOX, BETA_BOX], (2, 1)).astype(float)
    accepted, _ = search.centre()
    if accepted is None:
        bounds[list(coefficients)] = np.column_stack([estimate, estimate])[list(coefficients)]
        return bounds, ("repro: no parameter was accepted; the interval is the estimate alone.",)
    sd = search.cloud(accepted)[:, :2].std(axis=0)
    for j in coefficients:
        lo = search.endpoint(j, accepted, -1.0, sd[j])
        hi = search.endpoint(j, accepted, 1.0, sd[j])
        bounds[j] = [min(lo, estimate[j]), max(hi, estimate[j])]
    return bounds, ()


# --- the registered method ---------------------------------------------------------------------------------------
class ReproSamples(Method):
    """Awan and Wang's repro-samples interval for logistic regression on one Beta covariate (one adapter over
    the functions above). ``row_scale`` is the public factor the rows (1, x) were scaled by."""

    name = "repro"
    label = "Awan–Wang repro samples"
    short = "repro"
    notions = ("pure",)
    colors = {"pure": "#CC79A7"}
    steps = STEPS
    step_labels = {"coefficients": "the coefficients", "moments": "the covariate's moments"}
    pure_steps = (True, True)
    splits = {"pure": (0.9, 0.1)}  # their ep1 = 0.9 ep, ep2 = 0.1 ep
    losses = ("logistic",)
    uses_c = False  # their ridge Delta / (2n) is fixed by eps1; the interval targets the unregularised theta
    max_replicates = 20  # one release runs thousands of batched fits
    description = (
        "Awan and Wang's repro samples: objective perturbation (K-norm noise) and private moments of the covariate; "
        "the interval collects every parameter whose simulated releases hold the observed one at Mahalanobis "
        "depth rank >= alpha (R + 1). One covariate with a Beta law on [-1, 1]; logistic loss only."
    )
    how_it_trains = "fits with a noisy objective, then simulates the release at candidate parameters"
    remedy = "use more rows or a larger budget"

    def __init__(
        self, row_scale: float = 1.0 / math.sqrt(2.0), repro_samples: int = REPRO_SAMPLES, coefficients=(0, 1)
    ):
        if not (isinstance(row_scale, (int, float)) and 0.0 < row_scale <= 1.0 / math.sqrt(2.0) + 1e-12):
            raise ValueError(
                f"row_scale must be in (0, 1/sqrt 2] so that rows (1, x) lie in the unit ball, got {row_scale!r}."
            )
        if not (isinstance(repro_samples, int) and repro_samples >= 20):
            raise ValueError(f"repro_samples must be an integer >= 20 (theirs: 200), got {repro_samples!r}.")
        if not (set(coefficients) <= {0, 1} and coefficients):
            raise ValueError(f"coefficients must name some of 0 (intercept) and 1 (slope), got {coefficients!r}.")
        self.row_scale, self.repro_samples = float(row_scale), repro_samples
        #: the coefficients whose interval is searched; another is reported as the search box, +-10 / row_scale
        #: (each projection is searched alone: a bench measuring the slope saves half the time)
        self.coefficients = tuple(coefficients)

    def estimand_c(self, measurement, n, d) -> float:
        return 0.0

    def own_c(self, measurement, n, d):
        """Their ridge Delta / (2n) ||beta||^2 written on dpci's rows: c = Delta row_scale^2 / (2n)."""
        return ridge(measurement.allocation.phi[0]) * self.row_scale**2 / (2.0 * n)

    def check_settings(self, measurement, n) -> None:
        if getattr(measurement.loss, "name", None) != "logistic":
            raise ValueError("Awan and Wang's repro samples fit logistic regression only.")
        if math.floor(measurement.alpha * (self.repro_samples + 1)) < 1:
            raise ValueError(
                f"alpha = {measurement.alpha:g} is too small for {self.repro_samples} repro samples: "
                "alpha (R + 1) must be at least 1 (the test could never reject)."
            )

    def coefficient_noise_law(self, measurement, n) -> NoiseLaw:
        """A stand-in for pages that size noise: the spherical Laplace with the per-coordinate variance of the
        coefficients' linear noise b on dpci's rows (row_scale 2 / (q eps1) Gamma(3) U[-1, 1]^2: 4 k^2)."""
        self.check_settings(measurement, n)
        k = self.row_scale * LINF_SENSITIVITY / (SHARE_Q * measurement.allocation.phi[0])
        return NoiseLaw("spherical_laplace", math.sqrt(3.0) / (2.0 * k))

    def release(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        """s by steps 1-2 (from ``rng``, after the ledger admitted the release), then the projection of the repro
        confidence set; the spec's c, m and ``closed_form`` are not used. Another alpha rescales the half-widths
        by the normal quantiles' ratio (``normal_cov``), an approximation."""
        from scipy.stats import norm

        alloc, alpha = measurement.allocation, measurement.alpha
        x, y = design_from_margins(A, self.row_scale)
        n = len(x)
        self.check_settings(measurement, n)
        eps1, eps2 = alloc.phi
        n1, n2 = knorm_noise(rng, 1)
        s = statistic(x, y, n1, n2, eps1, eps2)[0]  # the release: everything below is post-processing
        search = ReproSearch(s, Seeds.draw(rng, self.repro_samples, n), eps1, eps2, alpha)
        bounds, said = repro_intervals(search, self.coefficients)
        theta, conf = s[:2] / self.row_scale, bounds / self.row_scale
        half = np.maximum(theta - conf[:, 0], conf[:, 1] - theta)
        cov = np.diag((half / norm.ppf(1.0 - alpha / 2.0)) ** 2)
        law = self.coefficient_noise_law(measurement, n)
        c = self.own_c(measurement, n, 2)
        return PrivateRelease(theta, None, None, conf, alpha, n, c, alloc, law, None, cov, caveats=said)
