"""The proven bound on the penalty's bias, from facts that hold for the data at hand (docs/choosing-c.md).

An interval for theta_0(c) covers theta = theta_0(0) once widened on both sides by a bound b on
||theta_0(c) - theta||. The bound b = min(B, 2cB / (mu + 2c)) needs two facts:

* B, a bound on ||theta|| the user states as public (no default: without it there is no interval for theta);
* mu, the population loss's strong convexity on the ball ||theta|| <= B, bounded below from the *released*
  private Hessian (post-processing: no privacy cost), with probability at least 1 - delta. The bound pays for
  the privacy noise on the Hessian, the sampling error between the rows and the population, the Hessian
  being taken at the private estimate rather than over the whole ball, and the ridge term 2c.

delta is paid from the interval's alpha (Bonferroni): the theta_0(c) interval is computed at alpha - delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..intervals import check_alpha
from ..losses import coerce_loss
from ..spec import ReleaseSpec
from .reference import min_curvature, positive

#: The share of alpha the curvature bound may fail with (split evenly between the Hessian's privacy noise
#: and the sampling error); the theta_0(c) interval keeps the rest. Bonferroni: both hold with 1 - alpha.
BOUND_SHARE = 0.2

NEEDS_BOUND = (
    "An interval for theta (without penalty) needs theta_bound, a bound B on ||theta|| that you state as "
    "public: pass theta_bound=B, or use estimand='regularised' for theta_0(c), the paper's estimand."
)


@dataclass(frozen=True)
class BiasBound:
    """b >= ||theta_0(c) - theta|| with probability at least 1 - ``delta`` (the interval pays it from alpha).

    ``value`` is b, ``curvature`` the proven lower bound mu on the population loss's strong convexity on
    the ball ||theta|| <= ``theta_bound`` (0: none proven, and b = B, the trivial bound)."""

    value: float
    curvature: float
    theta_bound: float
    delta: float

    @property
    def trivial(self) -> bool:
        """True when no curvature was proven: b is B itself (valid, and honestly wide)."""
        return self.value >= self.theta_bound


def hessian_noise_bound(law, d: int, delta: float) -> float:
    """q with P(||E||_op > q) <= delta for Algorithm 2's noise on a d x d matrix, E = (eta + eta') / 2
    with vec(eta) ~ ``law`` on d^2 coordinates (lines 1-9). ||E||_op <= ||E||_F <= ||eta||_F, whose law
    is exact: Gamma(d^2, 1/gamma) for the spherical Laplace (Eq. 3.2's radius), sigma chi(d^2) for the
    Gaussian (Algorithm 2, line 5)."""
    from scipy import stats

    k = d * d
    if law.kind == "spherical_laplace":
        return float(stats.gamma.isf(delta, k, scale=1.0 / law.scale))
    return float(law.scale * stats.chi.isf(delta, k))


def design_lower_bound(observed: float, n: int, delta: float) -> float:
    """A lower bound on lambda_min(E[x x']) that holds with probability >= 1 - delta when
    lambda_min((1/n) sum x_i x_i') >= ``observed`` (rows i.i.d., ||x|| <= 1).

    With v a unit eigenvector of lambda = lambda_min(E[x x']) (a fixed direction), X_i = (v'x_i)^2 lie in
    [0, 1] with mean lambda and variance <= lambda, and lambda_min of the rows' second moment is at most
    their mean. Bernstein's inequality (Boucheron, Lugosi and Massart, Theorem 2.10) bounds that mean by
    lambda + s(lambda), s(l) = a + sqrt(a^2 + b l), a = log(1/delta)/(3n), b = 2 log(1/delta)/n, with
    probability >= 1 - delta; lambda + s(lambda) grows with lambda, so lambda is at least the root l of
    l + s(l) = observed (0 when there is none above 0)."""
    a = math.log(1.0 / delta) / (3.0 * n)
    b = 2.0 * math.log(1.0 / delta) / n
    r = observed - a
    if r <= 0 or r * r <= a * a:  # observed <= 2a: even lambda = 0 explains it
        return 0.0
    # (r - l)^2 = a^2 + b l, the smaller root (the larger has r - l < 0)
    p = 2.0 * r + b
    return max(0.0, (p - math.sqrt(p * p - 4.0 * (r * r - a * a))) / 2.0)


def curvature_bound(hessian, c: float, n: int, noise, loss, theta_bound: float, delta: float) -> float:
    """mu, a lower bound on the population loss's strong convexity on ||theta|| <= B, with probability
    >= 1 - delta, from the released private Hessian (Algorithm 2's output; post-processing).

    1. The released matrix is H_n(theta~) + 2cI + E, eigenvalues floored at 2c (Algorithm 2, line 10-15;
       Eq. 4.2's H_n(theta) = (1/n) sum f''(theta.x_i) x_i x_i'): lambda_min(H_n) >= lambda_min(released)
       - 2c - ||E||_op, with ||E||_op <= q (delta / 2; :func:`hessian_noise_bound`). Where the floor acted,
       this is -q < 0, so the floor never makes the bound too large.
    2. f'' <= t (Section 3), so H_n(theta~) <= t (1/n) sum x_i x_i' whatever theta~ is: the rows' second
       moment has lambda_min >= lambda_min(H_n) / t.
    3. Sampling: :func:`design_lower_bound` (delta / 2) gives lambda_min(E[x x']).
    4. Every margin theta.x in the ball has |theta.x| <= B (||x|| <= 1), so the population Hessian there
       is >= min_{|z| <= B} f''(z) E[x x'].
    """
    floor = min_curvature(loss, theta_bound)
    if floor <= 0.0:
        return 0.0
    d = hessian.shape[0]
    data = float(np.linalg.eigvalsh(hessian)[0]) - 2.0 * c - hessian_noise_bound(noise, d, delta / 2.0)
    if data <= 0.0:
        return 0.0
    return floor * design_lower_bound(data / loss.t, n, delta / 2.0)


def bias_from_curvature(c: float, theta_bound: float, mu: float) -> float:
    """b(c) = min(B, 2cB / (mu + 2c)) (docs/choosing-c.md: first-order conditions and mu-strong convexity)."""
    return min(theta_bound, 2.0 * c * theta_bound / (mu + 2.0 * c))


def bias_bound(release, theta_bound, loss="logistic", alpha=None, *, method=None) -> BiasBound:
    """A proven bound on the penalty's bias ||theta_0(c) - theta|| for one release.

    Uses only B = ``theta_bound`` (stated public by the caller) and the release's private Hessian, whose
    noise law is public (:meth:`dpci.methods.Method.hessian_noise`): no data, no privacy cost. It holds
    with probability at least 1 - delta, delta = BOUND_SHARE * alpha, which the interval for theta pays
    (:func:`theta_interval`). A loss flat somewhere on the ball (the Huberized hinge: f'' = 0 off its band)
    proves no curvature from public facts: the bound is B itself, and it holds surely (delta = 0).

    Parameters
    ----------
    release : PrivateRelease
        The release (its c, n, allocation and private Hessian).
    theta_bound : float
        B, a public bound on ||theta|| (required: a bound is a proof only for the facts it is given).
    loss : str or Loss, default "logistic"
        The release's loss.
    alpha : float, optional
        1 - the level of the interval for theta (default: the release's).
    method : Method or str, optional
        The release's method (default: the one its allocation names).

    Returns
    -------
    BiasBound
        ``value`` b: widen each coefficient's interval by it on both sides.

    Raises
    ------
    ValueError
        No theta_bound, one that is not positive, or a method that releases no private Hessian.

    Examples
    --------
    >>> import dpci
    >>> X, y = dpci.data.make_synthetic_logistic(20_000, [1.0, -0.5, 0.2], random_state=0)
    >>> spec = dpci.ReleaseSpec("output", "zcdp", 1.0, None, dpci.LogisticLoss(), 0.05, 0.05, 500, 0)
    >>> bound = dpci.bias_bound(spec.release(X, y), theta_bound=2.0)  # a public seed: for teaching only
    >>> 0.0 < bound.curvature and bound.value < 2.0  # curvature proven from the private Hessian: b < B
    True
    >>> round(bound.delta, 12)  # its failure probability, paid from alpha = 0.05
    0.01
    """
    from .. import methods

    loss = coerce_loss(loss)
    method = methods.get(release.allocation.mechanism if method is None else method)
    reason = theta_refusal(method, theta_bound)
    if reason:
        raise ValueError(reason)
    B = positive("theta_bound", theta_bound)
    alpha = release.alpha if alpha is None else check_alpha(alpha)
    if min_curvature(loss, B) <= 0.0:
        return BiasBound(B, 0.0, B, 0.0)
    delta = BOUND_SHARE * alpha
    noise = method.hessian_noise(_measurement(release, method, loss), release.n)
    mu = curvature_bound(release.hessian, release.c, release.n, noise, loss, B, delta)
    return BiasBound(bias_from_curvature(release.c, B, mu), mu, B, delta)


def _measurement(release, method, loss):
    """The measurement ``release`` was made by (its allocation, loss, c and alpha), for ``method``."""
    alloc = release.allocation
    spec = ReleaseSpec(alloc.mechanism, alloc.privacy, alloc.budget, alloc.shares, loss, release.c, release.alpha)
    from ..methods import Measurement

    return Measurement(spec, method, alloc)


def theta_refusal(method, theta_bound) -> str | None:
    """Why a method's interval cannot be made one for theta with these facts (None: it can)."""
    if theta_bound is None:
        return NEEDS_BOUND
    if not method.releases_hessian:
        return (
            f"{method.label} releases no private Hessian with a known noise law, so no bound on the penalty's "
            "bias follows from its release: use estimand='regularised' (theta_0(c))."
        )
    return None


def theta_interval(release, bias: BiasBound | None, alpha=None) -> np.ndarray:
    """The (d, 2) interval: the release's own (``bias`` None), or for theta: the theta_0(c) interval at
    alpha - delta widened by b on both sides (it covers theta when both it covers theta_0(c) and the bound
    holds: Bonferroni)."""
    alpha = release.alpha if alpha is None else check_alpha(alpha)
    if bias is None:
        return release.interval(alpha)
    return release.interval(alpha - bias.delta) + np.array([-bias.value, bias.value])
