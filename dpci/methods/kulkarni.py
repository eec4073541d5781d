"""Kulkarni et al., *Differentially private Bayesian inference for GLMs*: noise-aware Bayesian
logistic regression from Gaussian-noised sufficient statistics, under rho-zCDP only.

Released (each a Gaussian mechanism; the registry's shares phi1, phi2, phi3 of rho pay for them):

1. phi1 -> s1 = sum_i y_i x_i = sum_i a_i, the linear PASS-GLM statistic t1 (Section 3.2, Eq. 7).
   Replace-one sensitivity 2: ||t1(a) - t1(a')||^2 <= 2R^2 - 2<a, a'> <= 4 (Eq. 8, R = 1).
2. phi2 -> S2 = sum_i x_i x_i' = sum_i a_i a_i' (y^2 = 1), the quadratic statistic t2 (Eq. 7: the
   d(d+1)/2 distinct entries, off-diagonals times sqrt 2, i.e. the Frobenius geometry).
   Sensitivity sqrt 2: ||t2(a) - t2(a')||^2 = ||a||^4 + ||a'||^4 - 2<a, a'>^2 <= 2 (Eq. 9).
3. phi3 -> s3 = sum_i o_i a_i with o_i = sign(a_i,d) (the last column's sign): the first moment of the
   rows x_i oriented so that their last coordinate is >= 0 (for dpci's data, whose last column is the
   positive constant, this is sum_i x_i). Not in the paper: its covariate model x ~ N(0, Sigma) has no
   mean, so no intercept (ERRATA.md); we fit x ~ N(m, S) instead. Sensitivity 2 (each term has norm
   <= 1). It is a function of A = diag(y) X alone, and the likelihood depends on x only up to sign
   (a tanh(a'theta/2) = x tanh(x'theta/2)), so orienting the rows loses nothing.

Each step spends rho_i = Delta_i^2 / (2 sigma_i^2) (the Gaussian mechanism's zCDP, Bun & Steinke
Prop. 1.6), so sigma_i = Delta_i / sqrt(2 phi_i rho); the total is their sum (composition). We release
the three separately; Lemma 3.4.1's joint analysis of (t1, t2) would charge less rho for the same
noise (docs/related-methods.md). The release is a composition of Gaussian mechanisms, i.e. exactly
sqrt(2 rho)-Gaussian DP, so its tight (epsilon, delta) is the analytic Gaussian mechanism's (Balle &
Wang 2018, the paper's Eq. 2) at Delta/sigma = sqrt(2 rho): :func:`gaussian_epsilon`.

The posterior (Sections 2.3, 3.3, with the errata fixed): s1 | theta, m, S ~ N(n F, n W), the normal
approximation of the sum, with F = E[x tanh(x'theta/2)] (Eq. 6 has the sign wrong: E[y | x] =
tanh(x'theta/2)) and W = E[x x' sech^2(x'theta/2)], the conditional covariance of y x given x. Both are
exact expectations under x ~ N(m, S) reduced by Stein's lemma to one-dimensional expectations over
u = x'theta ~ N(m'theta, theta'S theta), computed by quadrature in :mod:`.kulkarni_moments` (no Taylor
expansion, which fails for |x'theta| > 1). z1 = s1 + N(0, sigma1^2 I); the covariate moments (m, S) come
from the noisy z3, Z2, with their privacy noise integrated out by K draws from its law (a pseudo-marginal
likelihood, the same draws for every theta). Prior theta ~ N(0, PRIOR_SD^2 I). The posterior of theta is
sampled by importance sampling from a Student-t proposal at its Gauss-Newton mode (two adaptive
rounds; self-normalised weights, then systematic resampling), giving the posterior mean and the
equal-tailed credible interval. The interval targets the unregularised theta (estimand_c = 0).

The credible interval is only as good as the Gaussian covariate model and the prior: every posterior
checks, from the release alone, whether either carries it, and says so (:func:`caveats`,
UnderCoverageWarning; measured on Adult's rows in docs/related-methods.md).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from ..accounting import Allocation
from ..exceptions import UnderCoverageWarning, warn
from ..intervals import quantile_interval
from ..mechanisms import NoiseLaw
from ..solver import row_major_transpose, weighted_gram
from .base import Method, PrivateRelease
from .kulkarni_moments import model_moments, tanh_moments  # noqa: F401 - tanh_moments re-exported

STATISTICS = ("linear statistic", "second moments", "first moment")  # the ledger's steps (phi1, phi2, phi3)
SENSITIVITIES = (2.0, math.sqrt(2.0), 2.0)  # Eq. 8, Eq. 9, and the oriented first moment (see above)
PRIOR_SD = 10.0  # theta ~ N(0, PRIOR_SD^2 I): weak for rows in the unit ball (|x'theta| <= ||theta||)
NUISANCE_DRAWS = 16  # draws of the covariate moments' privacy noise in the likelihood
MIN_ESS = 200  # below it the sampler warns
IS_DRAWS = 4000  # weighted draws of the final importance-sampling round (ESS is reported)
REPLICATE_DRAWS = 2000  # posterior draws per bootstrap replicate
PROPOSAL_DF = 5.0  # Student-t proposal's degrees of freedom


# --- privacy --------------------------------------------------------------------------------------
def noise_scales(alloc: Allocation) -> tuple[float, float, float]:
    """sigma_i = Delta_i / sqrt(2 rho_i) for the three statistics (so each spends exactly rho_i)."""
    return tuple(delta / math.sqrt(2.0 * rho) for delta, rho in zip(SENSITIVITIES, alloc.phi))  # type: ignore[return-value]


def gaussian_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of a Gaussian mechanism with Delta/sigma = mu (Balle & Wang 2018, Thm 8; Eq. 2)."""
    from scipy.stats import norm

    return float(norm.cdf(mu / 2 - epsilon / mu) - math.exp(epsilon) * norm.cdf(-mu / 2 - epsilon / mu))


def gaussian_epsilon(rho: float, delta: float) -> float:
    """The tight epsilon at ``delta`` of a composition of Gaussian mechanisms spending ``rho`` in total:
    it is one Gaussian mechanism with Delta/sigma = sqrt(2 rho) (Gaussian DP composes exactly)."""
    from scipy.optimize import brentq

    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
    mu = math.sqrt(2.0 * rho)
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(mu, hi) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-12))


# --- statistics and their noise -------------------------------------------------------------------
def orientation(A) -> np.ndarray:
    """o_i = sign of the last coordinate of a_i (+1 at 0): o_i a_i = x_i when that column is positive."""
    return np.where(A[:, -1] >= 0.0, 1.0, -1.0)


def statistics(A, weights=None):
    """(s1, S2, s3) = (sum w a, sum w a a', sum w o a) with row multiplicities ``weights`` (default 1)."""
    w = np.ones(A.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    AT = row_major_transpose(A)
    return AT @ w, weighted_gram(AT, w), AT @ (w * orientation(A))


def symmetric_noise(rng, d: int, sigma: float) -> np.ndarray:
    """The noise of t2 seen as a symmetric matrix: N(0, sigma^2) on the diagonal and, since each
    off-diagonal is released as sqrt(2) a_j a_k + N(0, sigma^2), N(0, sigma^2/2) off it."""
    G = sigma * rng.standard_normal((d, d))
    upper = np.triu(G, 1) / math.sqrt(2.0)
    return upper + upper.T + np.diag(np.diag(G))


def add_noise(stats, sigmas, rng):
    """The released (z1, Z2, z3): each statistic plus its Gaussian noise, in this order."""
    s1, S2, s3 = stats
    d = len(s1)
    return (
        s1 + sigmas[0] * rng.standard_normal(d),
        S2 + symmetric_noise(rng, d, sigmas[1]),
        s3 + sigmas[2] * rng.standard_normal(d),
    )


def _psd(S):
    vals, vecs = np.linalg.eigh(S)
    return (vecs * np.maximum(vals, 0.0)) @ vecs.T


def covariate_draws(Z2, z3, sigmas, n: int, k: int, rng):
    """K draws of the covariate model's (m, S) given the noisy Z2, z3 (flat prior on the latent sums,
    so each is the release minus a fresh draw of its noise), S = S2/n - m m' projected onto the PSD
    cone. With ``k`` = 1, the plug-in estimate itself (no draw)."""
    d = len(z3)
    if k == 1:
        m = z3 / n
        return m[None], _psd(Z2 / n - np.outer(m, m))[None]
    ms = (z3 - sigmas[2] * rng.standard_normal((k, d))) / n
    Ss = np.array([_psd((Z2 - symmetric_noise(rng, d, sigmas[1])) / n - np.outer(m, m)) for m in ms])
    return ms, Ss


# --- posterior --------------------------------------------------------------------------------------
def log_likelihood(thetas, z1, ms, Ss, n: int, sigma1: float, block: int = 256) -> np.ndarray:
    """log p(z1 | theta) for each row of ``thetas``: the normal approximation of s1 plus its privacy
    noise, with the covariate moments' privacy noise integrated out to second order. Over the K draws
    (m_k, S_k): z1 ~ N(n mean_k F_k, n mean_k W_k + n^2 cov_k F_k + sigma1^2 I), the moments of the
    mixture of the K normals (one draw, K = 1: the plug-in likelihood). Moment matching keeps the
    likelihood smooth and unimodal in theta, where the mixture itself is lumpy when the draws differ."""
    thetas = np.atleast_2d(thetas)
    d, k = thetas.shape[1], len(ms)
    out = np.empty(len(thetas))
    eye = sigma1**2 * np.eye(d)
    for start in range(0, len(thetas), block):
        F, W = model_moments(thetas[start : start + block, None, :], ms[None], Ss[None])
        mean = F.mean(axis=1)
        omega = n * W.mean(axis=1) + eye
        if k > 1:
            spread = F - mean[:, None]
            omega += (n * n / (k - 1)) * np.einsum("bki,bkj->bij", spread, spread)
        chol = np.linalg.cholesky(omega)
        r = np.linalg.solve(chol, (z1 - n * mean)[..., None])[..., 0]
        logdet = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)
        out[start : start + block] = -0.5 * np.einsum("bj,bj->b", r, r) - logdet - 0.5 * d * math.log(2 * math.pi)
    return out


def log_posterior(thetas, z1, ms, Ss, n, sigma1, prior_sd=PRIOR_SD):
    """Unnormalised log posterior: the likelihood above plus the N(0, prior_sd^2 I) prior."""
    thetas = np.atleast_2d(thetas)
    return log_likelihood(thetas, z1, ms, Ss, n, sigma1) - 0.5 * np.einsum("ij,ij->i", thetas, thetas) / prior_sd**2


def posterior_mode(z1, m, S, n, sigma1, prior_sd=PRIOR_SD, max_iter=100):
    """Gauss-Newton for the posterior mode with the plug-in (m, S): r = z1 - n F(theta), Jacobian
    n W / 2 (dF/dtheta = E[x x' g'] = W / 2), Omega = n W + sigma1^2 I held fixed per step, backtracking
    on the full log posterior. Returns the mode and the inverse of the Gauss-Newton precision."""
    d = len(z1)
    prior_prec = np.eye(d) / prior_sd**2
    ms, Ss = m[None], S[None]
    theta = np.linalg.lstsq(S + np.outer(m, m) + prior_prec / n, 2.0 * z1 / n, rcond=None)[0]  # tanh(u/2) ~ u/2
    value = log_posterior(theta, z1, ms, Ss, n, sigma1, prior_sd)[0]
    for _ in range(max_iter):
        F, W = model_moments(theta, m, S)
        omega_inv = np.linalg.inv(n * W + sigma1**2 * np.eye(d))
        J = n * W / 2.0
        precision = J @ omega_inv @ J + prior_prec
        step = np.linalg.solve(precision, J @ omega_inv @ (z1 - n * F) - prior_prec @ theta)
        t = 1.0
        while t > 1e-8:
            cand = log_posterior(theta + t * step, z1, ms, Ss, n, sigma1, prior_sd)[0]
            if cand >= value - 1e-12 * abs(value):
                break
            t /= 2.0
        theta, done = theta + t * step, t * np.linalg.norm(step) <= 1e-10 * (1.0 + np.linalg.norm(theta))
        value = max(value, cand)
        if done or t <= 1e-8:
            break
    F, W = model_moments(theta, m, S)
    J = n * W / 2.0
    precision = J @ np.linalg.inv(n * W + sigma1**2 * np.eye(d)) @ J + prior_prec
    return theta, np.linalg.inv(precision)


def _t_draws(rng, center, cov, size, df=PROPOSAL_DF):
    """Multivariate Student-t draws and their log densities (up to the same constant)."""
    d = len(center)
    chol = np.linalg.cholesky(cov + 1e-300 * np.eye(d))
    z = rng.standard_normal((size, d))
    chi = rng.chisquare(df, size) / df
    draws = center + (z @ chol.T) / np.sqrt(chi)[:, None]
    maha = np.einsum("ij,ij->i", z, z) / chi
    return draws, -0.5 * (df + d) * np.log1p(maha / df) - np.log(np.diag(chol)).sum()


def _weighted_moments(draws, logw):
    w = np.exp(logw - logw.max())
    w /= w.sum()
    mean = w @ draws
    centred = draws - mean
    return w, mean, (centred * w[:, None]).T @ centred


def systematic_resample(rng, weights, size: int) -> np.ndarray:
    """Indices of ``size`` draws by systematic resampling of normalised ``weights``."""
    positions = (rng.uniform() + np.arange(size)) / size
    return np.minimum(np.searchsorted(np.cumsum(weights), positions), len(weights) - 1)


def sample_posterior(z1, ms, Ss, plug_in, n, sigma1, rng, n_draws, prior_sd=PRIOR_SD):
    """Posterior draws of theta given z1 and the covariate draws (ms, Ss): (mean, draws, ESS).

    Adaptive importance sampling: round 1 (IS_DRAWS/4 draws) from a t proposal at the Gauss-Newton
    mode (with the plug-in covariate moments ``plug_in`` = (m, S)) with twice its covariance; rounds 2
    and 3 (IS_DRAWS/4) and the final round (IS_DRAWS) from t proposals with the previous round's
    weighted mean and 1.5 x (last: 1.2 x) its covariance; the final weighted draws are resampled
    systematically into ``n_draws`` equally weighted ones. A low effective sample size
    (ESS < MIN_ESS) warns: the credible bounds are then Monte Carlo noisy."""
    center, cov = posterior_mode(z1, *plug_in, n, sigma1, prior_sd)
    for size, inflate in ((IS_DRAWS // 4, 2.0), (IS_DRAWS // 4, 1.5), (IS_DRAWS // 4, 1.5), (IS_DRAWS, 1.2)):
        draws, logq = _t_draws(rng, center, inflate * cov, size)
        logw = log_posterior(draws, z1, ms, Ss, n, sigma1, prior_sd) - logq
        w, center, cov = _weighted_moments(draws, logw)
    ess = 1.0 / float(w @ w)
    if ess < MIN_ESS:
        warn(
            f"kulkarni: the importance sampler's effective sample size is {ess:.0f} of {IS_DRAWS} draws; the "
            "credible bounds are Monte Carlo noisy (the posterior is far from its Gauss-Newton approximation).",
            UnderCoverageWarning,
            stacklevel=3,
        )
    return center, draws[systematic_resample(rng, w, n_draws)], ess


# --- when the credible interval cannot be trusted -------------------------------------------------------
# A bias of b posterior sds leaves a 95% interval covering P(|Z + b| <= 1.96): 0.93 at b = 0.4.
# On Adult's rows the worst coefficient's bias is 0.058 posterior sd per unit of covariate_model_reliance
# (2.0 sd at 35, docs/related-methods.md): above RELIANCE_MAX, rows like them bias it by over 0.4 sd.
RELIANCE_MAX = 7.0
PRIOR_SHARE_MAX = 0.3  # largest posterior sd over PRIOR_SD above it: the prior shrinks ||theta|| > 13
COVARIATE_CAVEAT = (
    "Kulkarni et al.: these credible intervals rest on the method's Gaussian model of the covariates (Section 3.1): "
    f"the model's non-linear moments move the noisy statistic by more than {RELIANCE_MAX:g} noise standard "
    "deviations here, so covariates that are not Gaussian (one-hot or skewed columns) bias the posterior. Measured "
    "on Adult's rows (d = 10, a moderate known truth, ρ = 0.5): coverage 0.92 on average and 0.62 for capital "
    "gain at nominal 0.95 (0.98 when the same rows are replaced by Gaussian ones). Prefer the paper's methods "
    "(objective or output perturbation) for these data."
)
PRIOR_CAVEAT = (
    f"Kulkarni et al.: the N(0, {PRIOR_SD:g}²) prior carries at least one direction of the posterior (its sd there is over "
    f"{PRIOR_SHARE_MAX:g} of the prior's): the data barely inform it, and the intervals cover only coefficients "
    f"of norm below about {0.4 / PRIOR_SHARE_MAX * PRIOR_SD:.0f} (the unregularised θ on Adult has norm about 180)."
)


def covariate_model_reliance(theta, m, S, n: int, sigma1: float) -> np.ndarray:
    """||Omega^(-1/2) n (F(theta) - E[x x'] theta / 2)||, Omega = n W + sigma1^2 I, for each row of ``theta``
    (batched over leading axes): how many noise sds of z1 the Gaussian covariate model's non-linear part
    moves the mean of z1. The linear part E[x x'] theta / 2 = (S + m m') theta / 2 holds for every law of x
    with the released second moments; the rest is the Gaussian model's. A law whose non-linear part differs
    from it by delta moves the posterior mean by delta's whitened norm in posterior sds at most, in every
    coefficient (to first order, Cauchy-Schwarz in the metric of the posterior precision J Omega^-1 J <= P)."""
    theta = np.asarray(theta, dtype=float)
    F, W = model_moments(theta, m, S)
    chol = np.linalg.cholesky(n * W + sigma1**2 * np.eye(theta.shape[-1]))
    r = n * (F - theta @ (S + np.outer(m, m)) / 2.0)
    return np.linalg.norm(np.linalg.solve(chol, r[..., None])[..., 0], axis=-1)


def caveats(draws, plug_in, n: int, sigma1: float, prior_sd: float = PRIOR_SD) -> list[str]:
    """The warnings a posterior deserves, from its draws and the release alone (post-processing): the
    Gaussian covariate model carries it (:func:`covariate_model_reliance` with the plug-in covariate moments
    exceeds RELIANCE_MAX with posterior probability at least 0.9, so that a reliance just below it, whose
    estimate scatters across it, stays quiet), or the prior does (the largest posterior sd s over
    PRIOR_SHARE_MAX prior sds). The prior pulls the posterior mean by -P^-1 theta / prior_sd^2, at most
    ||theta|| s / prior_sd^2 posterior sds in every coefficient (Cauchy-Schwarz), so below 0.4 only for
    ||theta|| < 0.4 prior_sd^2 / s."""
    said: list[str] = []
    if len(draws) < 2:
        return said
    m, S = plug_in
    some = draws[:: max(1, len(draws) // 500)]  # 500 of the equally weighted draws settle a 10% quantile
    if np.quantile(covariate_model_reliance(some, m, S, n, sigma1), 0.1) > RELIANCE_MAX:
        said.append(COVARIATE_CAVEAT)
    if np.linalg.eigvalsh(np.atleast_2d(np.cov(draws.T))).max() > (PRIOR_SHARE_MAX * prior_sd) ** 2:
        said.append(PRIOR_CAVEAT)
    return said


class KulkarniBayesian(Method):
    """Noise-aware Bayesian logistic regression from noisy sufficient statistics (Kulkarni et al.)."""

    max_replicates = 500  # a posterior per replicate: ~0.1-0.3 s of CPU each
    name = "kulkarni"
    label = "Kulkarni et al. noise-aware Bayesian"
    short = "Kulkarni"
    notions = ("zcdp",)
    losses = ("logistic",)
    uses_c = False  # a posterior, no regulariser: its interval is for the unregularised theta
    colors = {"zcdp": "#CC79A7"}
    # phi1 -> s1 (sum y x), phi2 -> S2 (sum x x'), phi3 -> s3 (oriented sum x): see docs/related-methods.md
    splits = {"zcdp": (0.6, 0.3, 0.1)}
    steps = STATISTICS
    step_labels = {
        "linear statistic": "the sum of y·x",
        "second moments": "the sum of x·xᵀ",
        "first moment": "the oriented sum of x",
    }
    description = (
        "Gaussian noise on the sums of y x, x x' and x (zCDP); a noise-aware Bayesian posterior for the "
        "coefficients (Kulkarni et al., errata fixed) and its equal-tailed credible interval. Targets the "
        "unregularised coefficients; logistic loss only. Assumes Gaussian covariates: it warns where that matters."
    )
    how_it_trains = "releases noisy sums of y·x, x·xᵀ and x and computes the posterior of θ from them"
    prior_sd = PRIOR_SD

    def __init__(self) -> None:
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()  # replicate theta -> posterior offsets
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """Sent to a worker process without its lock (which cannot be pickled) or its cache (the
        worker's own replicates fill its own)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_cache", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._cache = OrderedDict()
        self._lock = threading.Lock()

    # --- privacy map ---
    def approx_dp(self, measurement, delta: float) -> float:
        """The tight epsilon at ``delta`` of the whole release of ``measurement`` (analytic Gaussian
        mechanism, at the rho its allocation spends)."""
        return gaussian_epsilon(measurement.allocation.spend.rho, delta)

    def estimand_c(self, measurement, n, d) -> float:
        return 0.0  # the unregularised theta (the prior's ridge equivalent, 1/(2 n PRIOR_SD^2), is negligible)

    # --- releasing ---
    def check_settings(self, measurement, n) -> None:
        if getattr(measurement.loss, "name", None) != "logistic":
            raise ValueError(
                f"{self.label[:1].upper() + self.label[1:]} fits logistic regression only (its statistics and "
                "posterior are those of logistic regression, Section 3.2). Choose objective or output "
                "perturbation for another model."
            )
        self.check_notion(measurement.allocation.privacy)

    def coefficient_noise_law(self, measurement, n) -> NoiseLaw:
        """The law of the noise on the linear statistic sum y x, from which theta is inferred."""
        self.check_settings(measurement, n)
        return NoiseLaw("gaussian", noise_scales(measurement.allocation)[0])

    def posterior(self, A, alloc, rng, n_draws, weights=None):
        """The noisy statistics of A (with row multiplicities ``weights``) and the posterior drawn from them."""
        sigmas, n = noise_scales(alloc), A.shape[0]
        z1, Z2, z3 = add_noise(statistics(A, weights), sigmas, rng)
        plug_in = covariate_draws(Z2, z3, sigmas, n, 1, rng)
        ms, Ss = covariate_draws(Z2, z3, sigmas, n, NUISANCE_DRAWS, rng)
        plug_in = (plug_in[0][0], plug_in[1][0])
        mean, draws, ess = sample_posterior(z1, ms, Ss, plug_in, n, sigmas[0], rng, n_draws, self.prior_sd)
        said = caveats(draws, plug_in, n, sigmas[0], self.prior_sd)
        for message in said:
            warn(message, UnderCoverageWarning, stacklevel=3)
        return mean, draws, ess, tuple(said)

    def release(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        """One release: the noisy statistics, then the posterior mean and the equal-tailed interval.
        The spec's c is not used (the prior regularises; see estimand_c); ``closed_form`` has no effect."""
        n, m, alloc = A.shape[0], measurement, measurement.allocation
        law = self.coefficient_noise_law(m, n)
        mean, draws, _, said = self.posterior(A, alloc, rng, int(m.n_samples))
        offsets = draws - mean
        conf = quantile_interval(mean, offsets, m.alpha)
        return PrivateRelease(mean, None, None, conf, m.alpha, n, m.c, alloc, law, offsets, None, caveats=said)

    # --- bootstrap ---
    def replicate_coefficients(self, measurement, A, weights, rngs, start, block) -> np.ndarray:
        """Posterior means on replicates (row multiplicities ``weights``), replicate b's noise and
        sampler drawing from ``rngs[b]``; each replicate's posterior draws are kept (a small LRU cache)
        for :meth:`replicate_interval` of the same replicate."""
        alloc = measurement.allocation
        self.check_settings(measurement, A.shape[0])
        theta = np.empty((len(weights), A.shape[1]))
        for b, (w, rng) in enumerate(zip(weights, rngs)):
            mean, draws, _, _ = self.posterior(A, alloc, rng, REPLICATE_DRAWS, w)
            theta[b] = mean
            with self._lock:
                self._cache[mean.tobytes()] = draws - mean
                while len(self._cache) > 4096:
                    self._cache.popitem(last=False)
        return theta

    def replicate_interval(self, measurement, A, theta, law, rng, weights) -> np.ndarray:
        """The credible interval of the replicate whose posterior mean is ``theta`` (computed by
        :meth:`replicate_coefficients` in this process; its REPLICATE_DRAWS posterior draws)."""
        with self._lock:
            offsets = self._cache.get(np.asarray(theta, dtype=float).tobytes())
        if offsets is None:
            raise RuntimeError(
                "kulkarni: replicate_interval needs the replicate's posterior, computed by replicate_coefficients "
                "in the same process; call that first."
            )
        return quantile_interval(theta, offsets, measurement.alpha)
