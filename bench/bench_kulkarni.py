"""Kulkarni et al.'s noise-aware Bayesian interval on Adult (d = 10, 30,162 rows, 11 columns with the
constant): the time of one release and its ratio to one scikit-learn LogisticRegression fit in the same
run, and the interval widths next to output perturbation's (Algorithm 5, zCDP) at the same rho.

    python bench/bench_kulkarni.py [--rho 0.5] [--repeats 3]

Wall and CPU seconds are both printed: on a shared machine the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _clock(func, repeats):
    """Median wall and CPU seconds of ``repeats`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = func()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus)), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rho", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    from sklearn.linear_model import LogisticRegression

    import dpci
    from dpci.data import load_adult
    from dpci.solver import margin_rows, minimise_erm

    data = load_adult(d=10)
    X, y = data.X, data.y
    loss = dpci.LogisticLoss()
    dpci.private_confidence_intervals(X[:500], y[:500], loss, "kulkarni", "zcdp", args.rho, random_state=0)  # warm

    def kulkarni():
        return dpci.private_confidence_intervals(X, y, loss, "kulkarni", "zcdp", args.rho, random_state=1)

    def sklearn():
        return LogisticRegression(C=1e6, fit_intercept=False, max_iter=1000).fit(X, y)

    def output():
        return dpci.private_confidence_intervals(X, y, loss, "output", "zcdp", args.rho, c=1e-3, random_state=1)

    k_wall, k_cpu, rel = _clock(kulkarni, args.repeats)
    s_wall, s_cpu, _ = _clock(sklearn, args.repeats)
    o_wall, o_cpu, out = _clock(output, args.repeats)
    print(f"Adult: n = {X.shape[0]:,}, d = {X.shape[1]} (with the constant), rho = {args.rho}")
    print(f"kulkarni release : {k_wall:.3f} s wall, {k_cpu:.3f} s CPU")
    print(f"sklearn fit      : {s_wall:.3f} s wall, {s_cpu:.3f} s CPU")
    print(f"ratio            : {k_wall / s_wall:.2f} (wall), {k_cpu / s_cpu:.2f} (CPU)")
    print(f"output zCDP      : {o_wall:.3f} s wall, {o_cpu:.3f} s CPU")
    theta0 = minimise_erm(margin_rows(X, y), loss, 0.0).theta
    theta_c = minimise_erm(margin_rows(X, y), loss, 1e-3).theta
    np.set_printoptions(precision=3, suppress=True, linewidth=160)
    print("unregularised theta0      :", theta0)
    print("kulkarni posterior mean   :", rel.theta)
    print("kulkarni width            :", np.diff(rel.conf_int).ravel(), f"mean {np.diff(rel.conf_int).mean():.3f}")
    print("ridge theta0(c = 1e-3)    :", theta_c)
    print("output zCDP width (c=1e-3):", np.diff(out.conf_int).ravel(), f"mean {np.diff(out.conf_int).mean():.3f}")
    assert k_wall < 5.0 or k_cpu < 5.0, "one Kulkarni interval on Adult must take under 5 s"


if __name__ == "__main__":
    main()
