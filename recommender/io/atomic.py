"""Outputs written atomically: into a temporary file beside the target, then renamed over it,
so a reader never sees half a file and a failed write leaves the old one in place."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path


def temporary_beside(target: Path) -> tuple[int, str]:
    """An open file descriptor and the name of a new temporary file in ``target``'s folder
    (created with its parents), with the permissions a plain ``open(target, "w")`` would give:
    created with mode 0o666 for the kernel to apply the umask (``mkstemp`` makes it owner-only,
    which the rename would carry over; reading the umask would mean setting it, process-wide)."""
    if target.is_dir():
        # else the rename fails naming the temporary file, which the user never asked for
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}"
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return handle, str(temporary)
