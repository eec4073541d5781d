"""Wu, Fredrikson, Wu, Jha and Naughton, *Revisiting differentially private regression*
(``../shared/papers/wu-et-al-revisiting-dp-regression.md``), as one registered method: output
perturbation with their stability constant (Theorem 14) and their data-independent regulariser
(Section 4.2), the interval built as WKL's Algorithm 5 builds it for output perturbation.

In WKL's objective J(theta) = (1/n) sum f(y theta'x) + c ||theta||^2, Wu's (lambda/2)||w||^2 is
c ||theta||^2, so lambda = 2c, and every loss of dpci is rho = 1 Lipschitz (|f'| <= 1, ||x|| <= 1).
Theorem 14's bound 4 rho / (lambda n) is then 2/(nc): twice Chaudhuri et al.'s 1/(nc), which
WKL's output perturbation uses (``../shared/papers/ERRATA.md``: Theorem 14 is loose by 2). So at
equal budget and c the noise is twice as large; the method also trains at its own c, not the
user's (``estimand_c`` tells the bootstrap which theta_0 it targets). See docs/related-methods.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting import Allocation, PrivacySpend, StepSpend, epsilon_from_rho
from ..ledger.hooks import admit_release
from ..mechanisms import NoiseLaw, PerturbedFit
from ..solver import minimise_erm
from .base import Measurement, PrivateRelease
from .paper import OutputPerturbation

# Theorem 14 (Appendix A.4): the minimiser of a lambda-strongly convex objective with a rho-Lipschitz
# loss is 4 rho / (lambda n) l2-RO stable (the proof's 2 rho / n ||u - v|| over (lambda/2)||u - v||^2
# gives 4; Chaudhuri et al.'s tighter argument gives 2, ERRATA).
THEOREM14_FACTOR = 4.0
LIPSCHITZ = 1.0  # rho of Theorem 14 for dpci's losses: |f'| <= 1 and ||x|| <= 1 (WKL Section 3)


def wu_sensitivity(n: int, c: float) -> float:
    """Theorem 14's l2 sensitivity 4 rho / (lambda n) with lambda = 2c and rho = 1: 2/(nc).

    Theorem 14 needs no bound on ||w|| (the remark after Theorem 16), so WKL's unconstrained
    objective qualifies; Algorithm 2's 4 (rho + lambda R) would only add to it.
    """
    return THEOREM14_FACTOR * LIPSCHITZ / (2.0 * c * n)


def wu_noise_law(n: int, c: float, phi: float, privacy: str) -> NoiseLaw:
    """Algorithm 2, line 2: p(kappa) ~ exp(-lambda n eps ||kappa|| / (4 rho)), i.e. Theorem 8's spherical
    Laplace with gamma = eps / (2/(nc)) = eps n c / 2. zCDP: the Gaussian mechanism at the same l2
    sensitivity (Section 2.4 allows Gaussian noise; WKL Proposition 3), sigma = (2/(nc)) / sqrt(2 rho1)."""
    sens = wu_sensitivity(n, c)
    if privacy == "pure":
        return NoiseLaw("spherical_laplace", phi / sens)
    return NoiseLaw("gaussian", sens / math.sqrt(2.0 * phi))


def wu_epsilon(alloc: Allocation) -> float:
    """The epsilon_p of the coefficients' mechanism: phi1 under pure DP; under zCDP the epsilon whose
    pure mechanism would cost the same rho1, sqrt(2 rho1) (WKL Proposition 1; docs/paper-notes.md)."""
    phi1 = alloc.phi[0]
    return phi1 if alloc.privacy == "pure" else epsilon_from_rho(phi1)


def wu_lambda(n: int, d: int, epsilon: float) -> float:
    """Section 4.2, "Data-Independent Output Perturbation": lambda ~ sqrt(d / (n eps_p)) (from the proof
    of Theorem 21, A.8, with its rho/R and log factors dropped, as the paper's experiments do; R = 1)."""
    return math.sqrt(d / (n * epsilon))


def wu_c(n: int, d: int, epsilon: float) -> float:
    """The data-independent c in WKL's objective: c = lambda / 2 (c ||theta||^2 = (lambda/2) ||w||^2)."""
    return wu_lambda(n, d, epsilon) / 2.0


class WuOutputPerturbation(OutputPerturbation):
    """Output perturbation at Wu et al.'s sensitivity (Theorem 14) and data-independent c (Section 4.2);
    the interval is WKL's Algorithm 5 with that noise law. Ignores the c it is given."""

    corrects_penalty = False  # its interval is its own: for theta_0(c) at the c it chooses
    noise_reducible = False  # its own interval, not the one an accuracy-first search reduces
    name = "wu"
    label = "Wu et al. output perturbation"
    short = "Wu"
    colors = {"pure": "#CC79A7", "zcdp": "#882255"}
    # splits: output perturbation's Table 2 shares (the coefficients' step is the same mechanism)
    description = (
        "Wu et al.'s output perturbation: noise at their sensitivity 2/(nc) (twice Algorithm 4's) and their "
        "data-independent c = sqrt(d/(n eps1))/2 (your c is not used); interval by Algorithm 5."
    )
    how_it_trains = "picks its own c from n, d and the budget, trains normally and adds noise scaled to 2/(nc)"

    def training_c(self, measurement: Measurement, n: int, d: int) -> float:
        """The c it trains at: Section 4.2's data-independent choice at the coefficients' epsilon."""
        return wu_c(n, d, wu_epsilon(measurement.allocation))

    def estimand_c(self, measurement, n, d):
        return self.training_c(measurement, n, d)

    def own_c(self, measurement, n, d):
        return self.training_c(measurement, n, d)

    def coefficient_noise_law(self, measurement, n):
        """The noise law when training at the measurement's c (callers outside pass theirs only to check
        settings, which never fail here; the methods below pass one at the c it trains at)."""
        alloc = measurement.allocation
        return wu_noise_law(n, measurement.c, alloc.phi[0], alloc.privacy)

    def perturb(self, measurement, A, rng):
        result = minimise_erm(A, measurement.loss, measurement.c)
        law = self.coefficient_noise_law(measurement, A.shape[0])
        beta = law.sample(rng, A.shape[1])
        return PerturbedFit(result.theta + beta, law, None, result.n_iter, beta)

    def own_measurement(self, measurement: Measurement, A) -> Measurement:
        """The measurement at the c it trains at on A (:meth:`training_c`)."""
        return measurement.at_c(self.training_c(measurement, *A.shape))

    def release(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        """Wu's noise law and Algorithm 5's interval at the c it trains at (:meth:`training_c`)."""
        return self.release_at(self.own_measurement(measurement, A), A, rng, closed_form)

    def release_at(self, measurement, A, rng, closed_form=True) -> PrivateRelease:
        """Wu's noise law and Algorithm 5's interval at the measurement's own c (a privately selected
        one, say: :func:`tuned_release`)."""
        return super().release(measurement, A, rng, closed_form=closed_form)

    def replicate_coefficients(self, measurement, A, weights, rngs, start, block):
        return super().replicate_coefficients(self.own_measurement(measurement, A), A, weights, rngs, start, block)

    def replicate_interval(self, measurement, A, theta, law, rng, weights):
        own = self.own_measurement(measurement, A)
        law = self.coefficient_noise_law(own, A.shape[0])
        return super().replicate_interval(own, A, theta, law, rng, weights)


# --- private selection of c: Wu et al.'s Algorithm 5 (Section 4.2), with the corrected utility sensitivity ----------

# Section 4.2: Lambda is a geometric progression of ratio 2 from 0.002 to 0.256 (k = 8); c = lambda / 2.
WU_GRID = tuple(0.002 * 2**k / 2.0 for k in range(8))
WU_RADIUS = 1.0  # Section 4.2, "We put R = 1" (the hypothesis ball the noisy models are projected to)
SELECTION_SHARE = 0.2  # of the total budget; the rest runs the release with its usual split (our choice)


def utility_sensitivity(loss, radius: float, m: int) -> float:
    """Replace-one sensitivity of u(w) = -(mean loss of w on the m validation rows) for ||w|| <= R:
    every margin lies in [-R, R], so (dpci's losses being non-increasing) each loss value lies in
    [f(R), f(-R)] and the mean moves by at most (f(-R) - f(R)) / m (R / m for the logistic loss).
    Algorithm 5's R^2 ignores the 1/|S'| and the loss's range (ERRATA: (R+1)^2/|S'| for squared loss)."""
    low, high = loss.value(np.array([radius, -radius]))
    return float(high - low) / m


def project(w, radius: float) -> np.ndarray:
    """Onto the R-ball (ERRATA: Algorithm 5's sensitivity needs ||w_i|| <= R before the loss is taken)."""
    norm = float(np.linalg.norm(w))
    return w if norm <= radius else w * (radius / norm)


def exponential_mechanism(utilities, epsilon: float, sensitivity: float, rng) -> tuple[int, np.ndarray]:
    """Algorithm 5, step 3: index i with probability ~ exp(epsilon u_i / (2 Delta u)) (epsilon-DP)."""
    logits = epsilon * np.asarray(utilities, dtype=float) / (2.0 * sensitivity)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return int(rng.choice(len(p), p=p)), p


@dataclass(frozen=True)
class Selection:
    """What the tuning releases: the chosen c (private), plus the utilities and probabilities used
    (secret: they are computed from the data; kept for tests, never published)."""

    c: float
    index: int
    grid: tuple[float, ...]
    utilities: np.ndarray
    probabilities: np.ndarray


def select_c(A, loss, budget, privacy, rng, grid=WU_GRID, radius=WU_RADIUS) -> Selection:
    """Algorithm 5: m + 1 disjoint chunks (a data-independent random partition), a Wu model per c on
    chunks 1..m at the whole ``budget`` (pure epsilon or zCDP rho), projected to the R-ball, scored on
    the last chunk, one picked by the exponential mechanism. A row lies in one chunk only, so the whole
    selection spends ``budget`` once (parallel composition); under zCDP the exponential mechanism runs
    at epsilon = sqrt(2 rho), which costs rho (Proposition 1)."""
    n = A.shape[0]
    chunks = np.array_split(rng.permutation(n), len(grid) + 1)
    held_out = A[chunks[-1]]
    utilities = np.empty(len(grid))
    for i, (c, rows) in enumerate(zip(grid, chunks[:-1])):
        w = minimise_erm(A[rows], loss, c).theta + wu_noise_law(len(rows), c, budget, privacy).sample(rng, A.shape[1])
        utilities[i] = -float(np.mean(loss.value(held_out @ project(w, radius))))
    epsilon = budget if privacy == "pure" else epsilon_from_rho(budget)
    index, p = exponential_mechanism(utilities, epsilon, utility_sensitivity(loss, radius, len(held_out)), rng)
    return Selection(grid[index], index, tuple(grid), utilities, p)


def tuned_allocation(budget, split, privacy, selection_share=SELECTION_SHARE) -> tuple[float, Allocation]:
    """(the selection's budget, the release's allocation whose ledger has the selection as a first step).

    The release runs Wu's three steps on (1 - s) of the budget with ``split``; the ledger's four steps
    compose (Proposition 4) to the whole budget."""
    wu = WuOutputPerturbation()
    rest = wu.allocate(budget * (1.0 - selection_share), split, privacy)
    sel = selection_share * rest.budget / (1.0 - selection_share)
    step = StepSpend(
        "selection", selection_share, sel if privacy == "pure" else None, sel**2 / 2 if privacy == "pure" else sel
    )
    scaled = tuple(StepSpend(s.step, s.share * (1.0 - selection_share), s.epsilon, s.rho) for s in rest.spend.steps)
    spend = PrivacySpend(privacy, wu.name, (step, *scaled))
    return sel, Allocation(privacy, wu.name, sel + rest.budget, rest.shares, rest.phi, rest.coef_epsilon, spend)


def tuned_release(A, spec, rng, grid=WU_GRID, radius=WU_RADIUS, selection_share=SELECTION_SHARE):
    """Select c privately (Algorithm 5), then Wu's release at it on all rows (sequential composition).
    ``spec`` (a :class:`dpci.ReleaseSpec` of method "wu") gives the notion, the whole budget, the split
    of the release's three steps, the loss, alpha and m; its c is not used. Returns (release,
    selection); release.c is the selected c, release.spend the four-step ledger."""
    wu = WuOutputPerturbation()
    if spec.method != wu.name:  # its split is the shares of Wu's three steps
        raise ValueError(f"tuned_release releases with method 'wu'; the spec says {spec.method!r}.")
    privacy, budget, loss = spec.privacy, spec.budget, spec.loss
    sel, alloc = tuned_allocation(budget, spec.split, privacy, selection_share)
    record = dict(
        function="tuned_release",
        loss=repr(loss),
        method=wu.name,
        privacy=privacy,
        budget=float(budget),
        split=list(spec.split),
        selection_share=selection_share,
        alpha=spec.alpha,
        n_samples=spec.n_samples,
    )
    admit_release(A, alloc.spend, record, rng, f"Wu et al.'s tuned release (c chosen privately), budget {budget:g}")
    selection = select_c(A, loss, sel, privacy, rng, grid, radius)
    measurement = Measurement(spec, wu, alloc).at_c(selection.c)
    return wu.release_at(measurement, A, rng), selection
