"""L2 sensitivities (Definition 4) under the replace-one-record neighbour relation.

Rows satisfy ||x|| <= 1 and labels y in {-1, +1}. Matrices are measured in the
Frobenius norm, i.e. the L2 norm of vec(M) (Appendix A.2). The loss-specific ones
(Lemmas 2-5) are carried by each loss (:mod:`dpci.losses`); these functions read them.
"""

from __future__ import annotations


def hessian_sensitivity(loss, n: int) -> float:
    """Sensitivity of H[J_n(theta)] = (1/n) sum_i f''(z_i) x_i x_i^T + 2cI (Eq. 4.2): Lemmas 3 and 5."""
    return loss.hessian_sensitivity(n)


def covariance_sensitivity(loss, n: int, theta) -> float:
    """Sensitivity of Sigma = (1/n) sum_i grad f_i grad f_i^T - 4c^2 theta theta^T (Eq. 4.3): Lemmas 2 and 4."""
    return loss.covariance_sensitivity(n, theta)


def output_sensitivity(n: int, c: float) -> float:
    """Sensitivity of the non-private minimiser of Eq. 5.1: 1/(nc) (Section 5.1).

    Chaudhuri et al. (2011) give 2/(n Lambda) for the regulariser (Lambda/2)||theta||^2;
    here the regulariser is c ||theta||^2, i.e. Lambda = 2c.
    """
    return 1.0 / (n * c)


def objective_gradient_sensitivity() -> float:
    """||beta' - beta||_2 <= 2 for the noise of objective perturbation (Appendix A.1)."""
    return 2.0
