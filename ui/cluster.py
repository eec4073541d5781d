"""The class's Dask scheduler: where the app's background jobs send their bootstrap chunks.

``DPCI_SCHEDULER`` (e.g. ``tcp://scheduler:8786``) in the environment, else ``scheduler`` under
``[dpci]`` in Streamlit's ``secrets.toml`` (merged as the ledger's settings are,
:func:`ui.privacy.server_env`). Unset, jobs use the server's own worker processes. The work itself is
:mod:`dpci.experiments.cluster`'s; docs/deploy-classroom.md is the deployment recipe.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial

import streamlit as st

from dpci.experiments.cluster import run_on
from ui.privacy import server_env


def scheduler_address(environ=None, secrets=None) -> str | None:
    """The Dask scheduler's address the server is configured with, else None.

    Parameters
    ----------
    environ : mapping, optional
        The environment (default ``os.environ``).
    secrets : mapping, optional
        Streamlit's secrets (default ``st.secrets``; none when there is no ``secrets.toml``).

    Returns
    -------
    str or None
        ``DPCI_SCHEDULER``, else ``[dpci] scheduler`` of the secrets, stripped; None when neither is set.
    """
    if secrets is None:
        try:
            secrets = st.secrets.to_dict()
        except Exception:  # noqa: BLE001 - no secrets file, or one that does not parse (Streamlit says so)
            secrets = {}
    env = server_env(secrets, os.environ if environ is None else environ)
    return (env.get("DPCI_SCHEDULER") or "").strip() or None


def scheduled(make: Callable[[], Iterator], address: str | None = None) -> Callable[[], Iterator]:
    """A background job's generator factory, with its bootstrap chunks on the class's scheduler when one is set.

    Parameters
    ----------
    make : callable
        The job's generator factory.
    address : str, optional
        The scheduler (default :func:`scheduler_address`).

    Returns
    -------
    callable
        ``make`` itself without a scheduler, else a factory running it inside
        :func:`dpci.experiments.cluster.run_on`, which enters the Dask backend in the job's own thread.
    """
    address = address or scheduler_address()
    return make if address is None else partial(run_on, address, make)
