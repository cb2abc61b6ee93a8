"""Outputs written atomically: into a temporary file beside the target, then renamed over it,
so a reader never sees half a file and a failed write leaves the old one in place."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def temporary_beside(target: Path) -> tuple[int, str]:
    """An open file descriptor and the name of a new temporary file in ``target``'s folder
    (created with its parents), with the permissions a plain ``open(target, "w")`` would give
    (``mkstemp`` makes them owner-only, which the rename would carry over)."""
    if target.is_dir():
        # else the rename fails naming the temporary file, which the user never asked for
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        os.fchmod(handle, 0o666 & ~_umask())
    except BaseException:
        os.close(handle)
        Path(temporary).unlink(missing_ok=True)
        raise
    return handle, temporary
