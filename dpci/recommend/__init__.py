"""Choosing the regulariser c from public facts, and naming the estimand (docs/choosing-c.md).

Every interval of the paper covers theta_0(c), the minimiser of the *penalised* population objective
(Eq. 3.1 with n -> infinity). A larger c shrinks both noises (output perturbation's sensitivity is
1/(nc), Section 5.1; objective perturbation's noise is divided by H + 2cI, Eq. 4.1) and the
estimand with them. So there are two questions, and two estimands:

* ``"regularised"``: the interval is for theta_0(c), the coefficients of the model fitted with the
  penalty c ||theta||^2 (the paper's meaning). Its width falls without end as c grows, because its
  target shrinks to 0; the recommendation therefore minimises the width plus twice the shrinkage
  |theta_0(c) - theta_0(0)| it expects on the public reference (a narrow interval of a shrunk
  target is not a useful one).
* ``"unregularised"``: the interval is for theta = theta_0(0), the coefficients without penalty (what
  odds ratios mean). The regularised interval is widened on both sides by a proven bound on the
  shrinkage bias (:func:`bias_bound`: a public bound B on ||theta|| the user states, and the curvature
  proven from the release's own private Hessian), so it covers theta whenever it covers theta_0(c) and
  the bound holds; the recommendation minimises the widened width it predicts on the reference.

Predictions use each method's own noise law (``coefficient_noise_law``) and the law of its Monte Carlo
interval (``offset_laws``: Eq. 4.1 for Algorithm 3, Eq. 5.2 for Algorithm 5) at the population Hessian
and gradient covariance of a *public reference*: the known-truth synthetic design of
:mod:`dpci.data.synthetic` (rows on the unit sphere with a constant, labels integrated out exactly)
with the stand-in's public guess of the coefficients, or a public stand-in the caller passes. Nothing
here reads private data, so nothing is charged: a recommendation costs no privacy.
"""

from .bias import BiasBound, bias_bound, theta_interval, theta_refusal
from .estimands import (
    ESTIMAND_WORDS,
    ESTIMANDS,
    check_estimand,
    describe_estimand,
    estimand_bias,
    interval_estimand,
)
from .reference import Reference, reference
from .search import Prediction, Recommendation, predict, recommend_c
from .theta_reach import gives_theta, least_budget_for_theta

__all__ = [
    "ESTIMANDS",
    "ESTIMAND_WORDS",
    "BiasBound",
    "Prediction",
    "Recommendation",
    "Reference",
    "bias_bound",
    "check_estimand",
    "describe_estimand",
    "estimand_bias",
    "gives_theta",
    "interval_estimand",
    "least_budget_for_theta",
    "predict",
    "recommend_c",
    "reference",
    "theta_interval",
    "theta_refusal",
]
