"""A release taken apart step by step, for teaching (the "How it works" page).

:func:`walkthrough` runs exactly the steps of :func:`dpci.release.private_confidence_intervals`
with the same random stream, so for the same seed it reproduces the same interval, and
keeps every intermediate quantity. Some of them (the noise draws, the non-private
estimate and matrices) are secret in a real release: they are shown here only to teach.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import methods
from .intervals import hessian_and_covariance, quantile_interval
from .ledger.hooks import note_not_private
from .mechanisms import NoiseLaw, floor_eigenvalues, noisy_symmetric
from .noise import check_random_state
from .solver import margin_rows, minimise_erm
from .spec import keyword_spec


@dataclass(frozen=True)
class Walkthrough:
    theta_hat: np.ndarray  # non-private minimiser (secret)
    theta_private: np.ndarray  # released coefficients
    coef_noise: np.ndarray  # beta of Algorithm 1 or 4 (secret)
    coef_law: NoiseLaw
    hessian: np.ndarray  # at theta~, before noise (secret)
    hessian_noisy: np.ndarray  # noisy and symmetrised, before the eigenvalue floor
    hessian_private: np.ndarray
    covariance: np.ndarray
    covariance_noisy: np.ndarray
    covariance_private: np.ndarray
    offsets: np.ndarray  # Monte Carlo draws of theta_0 - theta~ (or None for the closed form)
    conf_int: np.ndarray
    c: float
    sensitivities: tuple[float, float]


def walkthrough(
    X,
    y,
    loss,
    mechanism="objective",
    privacy="pure",
    budget=1.0,
    split=None,
    c=1e-3,
    alpha=0.05,
    n_samples=10_000,
    random_state=None,
) -> Walkthrough:
    """Every step of one release of a paper method (:class:`dpci.methods.PaperMethod`), with the same
    draws as ``private_confidence_intervals`` (and the same parameters, but ``closed_form``)."""
    spec, _ = keyword_spec(
        loss,
        mechanism=mechanism,
        privacy=privacy,
        budget=budget,
        split=split,
        c=c,
        alpha=alpha,
        n_samples=n_samples,
        random_state=random_state,
    )
    measurement = spec.measure()
    method, alloc, s, loss = (
        measurement.method,
        measurement.allocation,
        spec,
        spec.loss,
    )  # the loss as the release has it
    if not isinstance(method, methods.PaperMethod):
        raise ValueError(f"the walkthrough takes apart the paper's methods (Algorithms 3 and 5), not {method.label}.")
    A = margin_rows(X, y)
    # It shows the non-private fit and the noise itself, so no guarantee covers what it shows, whatever
    # its randomness: recorded as not private (never counted), before anything is computed.
    record = dict(function="walkthrough", loss=repr(loss), method=method.name, privacy=privacy, budget=budget, c=c)
    note_not_private(A, record, f"How it works: {method.describe(privacy)} taken apart (shows the noise: not private)")
    rng = check_random_state(random_state)
    n = A.shape[0]
    theta_hat = minimise_erm(A, loss, s.c).theta
    fit = method.perturb(measurement, A, rng)
    theta = fit.theta
    # A copy of the stream: the matrices and Monte Carlo below replay what intervals_at draws.
    replay = np.random.Generator(type(rng.bit_generator)())
    replay.bit_generator.state = rng.bit_generator.state
    H, S = hessian_and_covariance(A, loss, theta, s.c)
    sens = (loss.hessian_sensitivity(n), loss.covariance_sensitivity(n, theta))
    H_noisy = noisy_symmetric(H, sens[0], alloc.phi[1], s.privacy, replay)
    S_noisy = noisy_symmetric(S, sens[1], alloc.phi[2], s.privacy, replay)
    release = method.interval_at(measurement, A, theta, fit.noise_law, rng, closed_form=False)
    if release.offsets is None:
        raise ValueError(
            f"How it works takes apart a Monte Carlo interval (Algorithms 3 and 5); the {method.label} "
            "draws none. Choose objective or output perturbation."
        )
    assert release.hessian is not None and release.covariance is not None
    np.testing.assert_allclose(floor_eigenvalues(H_noisy, s.c), release.hessian)  # same draws as the release
    return Walkthrough(
        theta_hat,
        theta,
        fit.noise,
        fit.noise_law,
        H,
        H_noisy,
        release.hessian,
        S,
        S_noisy,
        release.covariance,
        release.offsets,
        quantile_interval(theta, release.offsets, s.alpha),
        s.c,
        sens,
    )
