"""Large read-only arrays (the population's rows, up to 450,000 x 11 floats) shared with the
engine's worker processes through files instead of being pickled with every chunk: written once
to ``/dev/shm`` (else the temporary directory), memory-mapped once per worker, deleted when the
last run that needs them ends."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

SHARE_BYTES = 1 << 20  # arrays at least this large are shared through a memory-mapped file
WORKER_CACHE = 4  # shared arrays each worker keeps mapped (by key), least recently used dropped

_ATTACHED: OrderedDict[str, np.ndarray] = OrderedDict()  # per worker process: key -> mapped array


def _attach(path: str, key: str) -> np.ndarray:
    """In a worker: the array shared under ``key``, mapped from ``path`` the first time only."""
    array = _ATTACHED.get(key)
    if array is None:
        array = np.load(path, mmap_mode="r").view(np.ndarray)  # read-only, the file's pages shared
        _ATTACHED[key] = array
        while len(_ATTACHED) > WORKER_CACHE:
            _ATTACHED.popitem(last=False)
    else:
        _ATTACHED.move_to_end(key)
    return array


class SharedArray:
    """Stands in for a large read-only array in the arguments of a chunk: it is pickled as a file
    name and unpickled, in a worker, as the array itself (memory-mapped once per worker)."""

    __slots__ = ("key", "path", "shape")

    def __init__(self, path: str, key: str, shape):
        self.path, self.key, self.shape = path, key, shape

    def __reduce__(self):
        return _attach, (self.path, self.key)

    def __repr__(self):
        return f"SharedArray({self.key!r}, shape={self.shape})"


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class SharedFiles:
    """The files of the arrays shared by this process's runs, counted by key. Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._dirs: dict = {}  # base directory (None: the temporary one) -> our folder in it
        self._shared: dict = {}  # key -> [SharedArray, users]
        self._serial = 0

    def folders(self) -> list[str]:
        return list(self._dirs.values())

    def remove_all(self):
        """Delete every file (interpreter exit)."""
        with self._lock:
            folders, self._dirs = list(self._dirs.values()), {}
            self._shared.clear()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def shared(self, array: np.ndarray, key: str):
        """Within this block, a stand-in for ``array`` to put in chunk arguments (see
        :class:`SharedArray`); a small array is passed as it is. ``key`` names the array's content:
        runs sharing the same key share one file, deleted when the last of them leaves."""
        if array.nbytes < SHARE_BYTES:
            yield array
            return
        handle = self._acquire(array, key)
        try:
            yield array if handle is None else handle
        finally:
            if handle is not None:
                self._release(key)

    def _acquire(self, array, key):
        with self._lock:
            entry = self._shared.get(key)
            if entry is not None:
                entry[1] += 1
                return entry[0]
            self._serial += 1
            name = f"{key}-{os.getpid()}-{self._serial}.npy"
        path = self._write(array, name)  # outside the lock: tens of milliseconds for 40 MB
        if path is None:
            return None  # no room anywhere: the array goes with every chunk
        with self._lock:
            entry = self._shared.get(key)
            if entry is not None:  # another run shared it meanwhile
                entry[1] += 1
                _unlink(path)
                return entry[0]
            handle = SharedArray(path, key, array.shape)
            self._shared[key] = [handle, 1]
            return handle

    def _write(self, array, name):
        for base in ("/dev/shm", None):  # memory first, then the temporary directory's disk
            if base is not None and not os.access(base, os.W_OK):
                continue
            path = None
            try:
                with self._lock:
                    folder = self._dirs.get(base)
                    if folder is None or not os.path.isdir(folder):
                        folder = self._dirs[base] = tempfile.mkdtemp(prefix="dpci-engine-", dir=base)
                path = os.path.join(folder, name)
                with open(path + ".part", "wb") as f:
                    np.save(f, array, allow_pickle=False)
                os.replace(path + ".part", path)
                return path
            except OSError:  # e.g. a small /dev/shm in a container
                if path is not None:
                    _unlink(path + ".part")
        return None

    def _release(self, key):
        with self._lock:
            entry = self._shared.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] > 0:
                return
            del self._shared[key]
        _unlink(entry[0].path)  # workers keep their mapping; the memory goes when they drop it
