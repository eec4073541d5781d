"""Where the data files live.

Two locations matter:

* ``sample_data/`` in the repository: small files shipped with the project
  (UCI Adult, see ``sample_data/README.md``).
* the *shared data* directory holding raw, larger files (KDD Cup 99). It is
  not required on a user's machine. It is resolved, in order, from an explicit
  argument, the environment variable ``DPCI_SHARED_DATA``, and finally
  ``<repository root>/../shared/data``.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the shared raw-data directory.
SHARED_DATA_ENV = "DPCI_SHARED_DATA"

#: Root of the repository (the directory holding ``dpci/`` and ``sample_data/``).
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Directory of the data shipped with the project.
SAMPLE_DATA_DIR = REPO_ROOT / "sample_data"


def shared_data_dir(path: str | os.PathLike | None = None) -> Path:
    """Resolve the shared raw-data directory.

    Parameters
    ----------
    path : str or path-like, optional
        Explicit directory. Takes precedence over everything else.

    Returns
    -------
    pathlib.Path
        ``path`` if given, else ``$DPCI_SHARED_DATA`` if set and non-empty,
        else ``<repository root>/../shared/data``. The directory is not
        required to exist; callers check for the files they need.
    """
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get(SHARED_DATA_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return REPO_ROOT.parent / "shared" / "data"
