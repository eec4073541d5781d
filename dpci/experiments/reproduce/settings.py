"""Sizes of every experiment of Section 7 (:data:`FULL`, :data:`QUICK`) and the constants they share."""

from __future__ import annotations

from dataclasses import dataclass

from ...losses import LogisticLoss
from ..sweeps import METHODS

EXPERIMENTS = ("7.3", "7.4", "7.5", "7.6", "7.7", "7.8")
C = 1e-3  # the paper's regularisation coefficient throughout Section 7
ALPHA = 0.05
NOMINAL = 1 - ALPHA
LOSS = LogisticLoss()
TITLES = {
    "7.3": "Allocation of the privacy budget (Table 2, Figures 1-8)",
    "7.4": "Empirical sample complexity (Figures 9-12)",
    "7.5": "Overhead on sample complexity (Figure 13)",
    "7.6": "Private intervals vs variability intervals (Figures 14-16)",
    "7.7": "Curve fits of the length (Figures 17-19)",
    "7.8": "Run time (Table 3)",
}


@dataclass(frozen=True)
class Settings:
    """Sizes of every experiment. :data:`FULL` follows the paper where compute allows;
    :data:`QUICK` is small enough for CI (< 5 minutes on 2 cores) while every assertion keeps
    its power (margins are stated next to each check)."""

    name: str
    k: int  # coverage repetitions per setting (the paper: 1,000; 100,000 in Section 7.3)
    grid_k: int  # k of the Section 7.4 heatmaps
    m: int  # Monte Carlo samples per interval (the paper: 10,000)
    n_vi: int  # bootstrap replicates of a variability interval (the paper: 10,000)
    # 7.3 -- all rows of Adult (the paper does not state n for Figures 1-8)
    split_k: int
    phi1_ds: tuple
    phi2_ds: tuple
    phi1_pure: tuple
    phi1_zcdp: tuple
    phi2_shares: tuple
    split_methods: tuple
    # 7.4
    grid_ns: tuple
    grid_ds: tuple
    paper_scaling_ns: tuple
    kdd_grid_ns: tuple
    kdd_grid_eps: tuple
    # 7.5
    match_nonprivate_ns: tuple
    match_step: int
    match_k: int
    match_kdd_max: int
    # 7.6
    vi_ns: tuple
    vi_ds: tuple
    vi_eps: tuple
    vi_n: int
    # 7.7
    fit_ns: tuple
    fit_eps: tuple
    fit_n: int
    fit_d: int
    # 7.8
    runtime_repeats_adult: int
    runtime_repeats_kdd: int
    runtime_losses: tuple
    runtime_kdd: bool
    grid_kdd: bool = True
    vi_kdd: bool = True
    match_kdd: bool = True
    seed: int = 20_240


FULL = Settings(
    name="full",
    k=1_000,
    grid_k=1_000,
    m=10_000,
    n_vi=10_000,
    split_k=1_000,
    phi1_ds=(1, 5),
    phi2_ds=(1, 10),
    phi1_pure=(0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9),
    phi1_zcdp=(0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98),
    phi2_shares=(0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875),
    split_methods=METHODS,
    grid_ns=(500, 1_000, 2_000, 3_000, 4_500, 6_000, 10_000, 20_000),
    grid_ds=tuple(range(1, 11)),
    paper_scaling_ns=(500, 1_000, 2_000, 3_000, 4_500, 6_000, 10_000, 20_000),
    kdd_grid_ns=(1_000, 2_000, 5_000, 10_000, 20_000, 50_000),
    kdd_grid_eps=(0.1, 0.2, 0.5, 1.0, 2.0),
    match_nonprivate_ns=(1_000, 2_500, 5_000, 7_500, 10_000),
    match_step=2_500,
    match_k=1_000,
    match_kdd_max=492_500,
    vi_ns=(1_000, 2_000, 5_000, 10_000, 15_000, 20_000, 30_000),
    vi_ds=tuple(range(1, 11)),
    vi_eps=(0.1, 0.2, 0.5, 1.0, 2.0, 4.0),
    vi_n=15_000,
    fit_ns=(500, 1_000, 1_500, 2_000, 3_000, 4_500, 6_000, 8_000, 10_000, 15_000, 20_000, 30_000),
    fit_eps=(0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0),
    fit_n=10_000,
    fit_d=5,
    runtime_repeats_adult=100,
    runtime_repeats_kdd=10,
    runtime_losses=("logistic", "huber"),
    runtime_kdd=True,
)

QUICK = Settings(
    name="quick",
    k=200,
    grid_k=1_000,
    m=2_000,
    n_vi=1_000,
    split_k=200,
    phi1_ds=(5,),
    phi2_ds=(),
    phi1_pure=(0.3, 0.65, 0.9),
    phi1_zcdp=(0.1, 0.5, 0.9, 0.98),
    phi2_shares=(),
    split_methods=(("objective", "pure"), ("output", "zcdp")),
    grid_ns=(1_000, 4_500),
    grid_ds=(1, 10),
    paper_scaling_ns=(500, 4_500),
    kdd_grid_ns=(),
    kdd_grid_eps=(),
    match_nonprivate_ns=(1_000, 2_500),
    match_step=2_500,
    match_k=100,
    match_kdd_max=0,
    vi_ns=(2_000, 6_000, 15_000),
    vi_ds=(),
    vi_eps=(),
    vi_n=15_000,
    fit_ns=(1_000, 2_000, 4_000, 8_000, 16_000),
    fit_eps=(),
    fit_n=10_000,
    fit_d=5,
    runtime_repeats_adult=3,
    runtime_repeats_kdd=0,
    runtime_losses=("logistic",),
    runtime_kdd=False,
    grid_kdd=False,
    vi_kdd=False,
    match_kdd=False,
)
