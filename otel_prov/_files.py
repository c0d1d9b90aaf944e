"""Files the commands write where a user names them (``audit-export --out``, ``keygen``).

Such a path may already hold something precious (``--out keys/signing.key``), be a
symbolic link planted to redirect the write, or be read by others.  So a file is written
whole or not at all: into a temporary file beside it (same directory, so the rename stays
on one file system), flushed to disk, then put in place.  An existing file is replaced
only when asked (``replace=True``); a symbolic link is never written through, nor
replaced, whatever is asked; the file's mode is set, never left to what was there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["SECRET_MODE", "refuse_link", "write_file"]

SECRET_MODE = 0o600
"""The mode of a file whose content is for its owner alone (a private key, runs'
content)."""


def refuse_link(path: Path) -> None:
    """Raise ``OSError`` (``strerror`` saying why) for a ``path`` that is a symbolic link
    or not a regular file: nothing is written through or over one."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(found.st_mode):
        raise OSError(
            errno.ELOOP,
            "it is a symbolic link: otel-prov never writes through one (name the file "
            "itself, or remove the link)",
        )
    if not stat.S_ISREG(found.st_mode):
        raise OSError(errno.EISDIR, "it is not a regular file")


def write_file(path: Path, data: bytes, *, mode: int, replace: bool = False) -> None:
    """Write ``data`` to ``path`` atomically, with ``mode``.

    Raises ``FileExistsError`` when ``path`` exists and ``replace`` is false, ``OSError``
    (``strerror`` saying why) for a symbolic link or anything not a regular file, and the
    ``OSError`` of a failed write; in every case ``path`` is left as it was and no
    temporary file is left behind."""
    refuse_link(path)
    if not replace and os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, "it exists", str(path))
    directory = path.parent
    handle, name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            refuse_link(path)
            temporary.replace(path)  # replaces a link planted since, never its target
        else:
            _put_new(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    _sync_directory(directory)


def _put_new(temporary: Path, path: Path) -> None:
    """Give ``temporary`` the name ``path`` unless something took it meanwhile: a hard
    link fails on any existing name, a link included."""
    try:
        os.link(temporary, path, follow_symlinks=False)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "it exists", str(path)) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        # A file system without hard links: checked just before, replaced at once.
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "it exists", str(path)) from None
        temporary.replace(path)
        return
    temporary.unlink()


def _sync_directory(directory: Path) -> None:
    """The rename itself on disk, where the system lets a directory be opened."""
    try:
        handle = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
