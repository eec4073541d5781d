"""Noise distributions of the mechanisms.

The spherical Laplace density v(b) proportional to exp(-gamma ||b||_2) of Eq. 3.2
has, in d dimensions, a norm distributed as Gamma(shape=d, scale=1/gamma) and
an independent direction uniform on the unit sphere (the density depends on b
only through ||b||, and the surface area of the radius-r sphere grows as r^(d-1)).
All randomness comes from a ``numpy.random.Generator``.
"""

from __future__ import annotations

import numbers

import numpy as np


def check_randomness_kind(random_state):
    """``random_state`` itself if :func:`check_random_state` accepts it, else its ValueError; makes no
    random stream (a releasing function checks this before the ledger charges it)."""
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        return random_state
    integer = isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool)
    if integer and random_state >= 0:
        return random_state
    raise ValueError(
        f"random_state must be None, a non-negative int or a numpy.random.Generator, got {random_state!r}."
    )


def check_random_state(random_state) -> np.random.Generator:
    """Turn None, an int or a Generator into a ``numpy.random.Generator``."""
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(
                f"random_state must be None, a non-negative int or a numpy.random.Generator, got {random_state!r}."
            )
        return np.random.default_rng(int(random_state))
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be None, a non-negative int or a numpy.random.Generator, got {random_state!r}."
    )


def uniform_directions(rng: np.random.Generator, d: int, size: int | None = None) -> np.ndarray:
    """Directions uniform on the unit sphere in R^d (normalised standard normals)."""
    return _scaled_directions(rng, d, np.ones(1 if size is None else size), size)


def _scaled_directions(rng, d, radius, size):
    """Uniform directions times ``radius`` (one radius per row)."""
    z = rng.standard_normal((1 if size is None else size, d))
    norm = np.sqrt(np.einsum("ij,ij->i", z, z))
    while np.any(norm == 0.0):  # probability 0; redraw so every direction has unit norm
        zero = norm == 0.0
        z[zero] = rng.standard_normal((int(zero.sum()), d))
        norm = np.sqrt(np.einsum("ij,ij->i", z, z))
    z *= (radius / norm)[:, None]
    return z[0] if size is None else z


def spherical_laplace(rng: np.random.Generator, d: int, gamma: float, size: int | None = None) -> np.ndarray:
    """Draw from v(b) proportional to exp(-gamma ||b||_2) on R^d (Eq. 3.2).

    Returns shape (d,) when ``size`` is None, else (size, d).
    """
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be positive and finite, got {gamma!r}.")
    radius = rng.standard_gamma(d, size=1 if size is None else size) / gamma
    return _scaled_directions(rng, d, radius, size)


def spherical_laplace_blocks(rng, d: int, gamma: float, size: int, rows: int):
    """The draws of ``spherical_laplace(rng, d, gamma, size)`` a block of ``rows`` rows at a time, bit for
    bit: the same stream in the same order (the radii, the normals row after row, then redraws of
    zero rows). Yields (where, block) pairs, ``where`` a slice or an index array of the rows; the block
    is overwritten by the next one. A row whose normals are all zero (probability 0) comes as zeros in
    its block and, redrawn, in a last pair of its own (adding both gives the draw)."""
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be positive and finite, got {gamma!r}.")
    radius = rng.standard_gamma(d, size=size) / gamma
    buffer, zero = np.empty((min(rows, size), d)), []
    for start in range(0, size, rows):
        z = buffer[: min(rows, size - start)]
        rng.standard_normal(out=z)
        norm = np.sqrt(np.einsum("ij,ij->i", z, z))
        with np.errstate(divide="ignore"):
            scale = radius[start : start + len(z)] / norm
        scale[norm == 0.0] = 0.0
        zero += list(start + np.flatnonzero(norm == 0.0))
        z *= scale[:, None]
        yield slice(start, start + len(z)), z
    if zero:
        where = np.array(zero)
        yield where, _scaled_directions(rng, d, radius[where], len(where))


def gaussian_blocks(rng, d: int, sigma: float, size: int, rows: int):
    """The draws of ``gaussian(rng, d, sigma, size)`` a block of ``rows`` rows at a time, bit for bit, as
    (where, block) pairs like :func:`spherical_laplace_blocks`."""
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}.")
    buffer = np.empty((min(rows, size), d))
    for start in range(0, size, rows):
        z = buffer[: min(rows, size - start)]
        rng.standard_normal(out=z)
        z *= sigma
        yield slice(start, start + len(z)), z


def gaussian(rng: np.random.Generator, d: int, sigma: float, size: int | None = None) -> np.ndarray:
    """Draw from N(0, sigma^2 I_d) (Proposition 3's Gaussian mechanism)."""
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}.")
    shape = (d,) if size is None else (size, d)
    return sigma * rng.standard_normal(shape)
