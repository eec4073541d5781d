"""The naive interval: what an analyst does by default, and why the paper exists.

Private coefficients from output perturbation (Algorithm 4), the private Hessian and gradient
covariance (Algorithm 2, the same budget split and sensitivities as Algorithm 5), and the textbook
sandwich interval theta~ -/+ z sqrt(diag(H~^{-1} Sigma~ H~^{-1} / n)). It leaves the privacy noise
out of the interval (Algorithm 5 adds sigma^2 I or draws beta), so it under-covers wherever that
noise matters. A teaching baseline; its privacy is exactly output perturbation's.
"""

from __future__ import annotations

from ..intervals import normal_interval, sandwich_covariance
from .base import OffsetLaw
from .paper import OutputPerturbation


class NaiveInterval(OutputPerturbation):
    """Output perturbation's release with an interval that ignores the privacy noise (under-covers by design)."""

    corrects_penalty = False  # a baseline that leaves the privacy noise out, by design
    noise_reducible = False  # its own interval, not the one an accuracy-first search reduces
    name = "naive"
    label = "naive interval (ignores privacy noise)"
    short = "naive"
    colors = {"pure": "#999999", "zcdp": "#555555"}
    accounts_for_privacy_noise = False
    description = (
        "Output perturbation's private coefficients with a textbook sandwich interval from the private "
        "matrices: it leaves the privacy noise out, so it covers less often than its level says (a teaching "
        "baseline, not a method to publish with)."
    )

    def interval_law(self, law):
        return OffsetLaw(law.sampling_sd, law.noise_weight, None)  # the sandwich alone: no privacy noise

    def finish(self, measurement, theta, hessian, covariance, n, coef_noise, rng, closed_form):
        sandwich = sandwich_covariance(hessian, covariance, n)  # no sigma^2 I, no beta: the privacy noise left out
        return normal_interval(theta, sandwich, measurement.alpha), None, sandwich
