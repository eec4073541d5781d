"""L2 sensitivities (Definition 4) under the replace-one-record neighbour relation.

Rows satisfy ||x|| <= 1 and labels y in {-1, +1}. Matrices are measured in the
Frobenius norm, i.e. the L2 norm of vec(M) (Appendix A.2).
"""

from __future__ import annotations

import numpy as np
import math

from .losses import HuberLoss, LogisticLoss


def hessian_sensitivity(loss, n: int) -> float:
    """Sensitivity of H[J_n(theta)] = (1/n) sum_i f''(z_i) x_i x_i^T + 2cI (Eq. 4.2).

    Logistic: 1/(2n) (Lemma 3). Huber: 1/(nh) (Lemma 5). Both are 2t/n.
    """
    if isinstance(loss, LogisticLoss):
        return 1.0 / (2.0 * n)  # Lemma 3
    if isinstance(loss, HuberLoss):
        return 1.0 / (n * loss.h)  # Lemma 5
    raise TypeError(f"No Hessian sensitivity is known for {loss!r}.")


def covariance_sensitivity(loss, n: int, theta) -> float:
    """Sensitivity of Sigma = (1/n) sum_i grad f_i grad f_i^T - 4c^2 theta theta^T (Eq. 4.3).

    Logistic: 2 S(||theta||)^2 / n (Lemma 2), evaluated at the released theta,
    which is already private, so using it costs no budget (ERRATA). Huber: 2/n
    (Lemma 4).
    """
    if isinstance(loss, LogisticLoss):
        norm = float(np.linalg.norm(theta))
        return 2.0 / (1.0 + math.exp(-norm)) ** 2 / n  # Lemma 2: 2 S(||theta||)^2 / n
    if isinstance(loss, HuberLoss):
        return 2.0 / n  # Lemma 4
    raise TypeError(f"No covariance sensitivity is known for {loss!r}.")


def output_sensitivity(n: int, c: float) -> float:
    """Sensitivity of the non-private minimiser of Eq. 5.1: 1/(nc) (Section 5.1).

    Chaudhuri et al. (2011) give 2/(n Lambda) for the regulariser (Lambda/2)||theta||^2;
    here the regulariser is c ||theta||^2, i.e. Lambda = 2c.
    """
    return 1.0 / (n * c)


def objective_gradient_sensitivity() -> float:
    """||beta' - beta||_2 <= 2 for the noise of objective perturbation (Appendix A.1)."""
    return 2.0
