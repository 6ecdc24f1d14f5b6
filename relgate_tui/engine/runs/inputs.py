"""The one way relgate opens a file it reads (issue 23 §3: special and oversized inputs).

* :func:`open_regular` opens ``path`` without blocking (a FIFO with no writer would hang ``open`` forever), checks
  on the open descriptor that it is a regular file (not a FIFO, a device such as ``/dev/zero``, a socket or a
  directory — also when reached through a symlink) and returns it as a binary file.
* :func:`read_regular` reads such a file whole, up to ``limit`` bytes: what is bounded is what is actually read, never
  what a header or ``st_size`` declares (a file that grows while read is cut off at the limit and refused).

Every refusal is one line (:class:`InputError`, a :class:`~relgate_tui.errors.DataError`) naming the file.
"""

from __future__ import annotations

import io
import os
import stat
from typing import BinaryIO

from relgate_tui.errors import DataError

PathLike = str | os.PathLike[str]

MB = 1 << 20


class InputError(DataError):
    """An input that is not a regular file, or larger than its limit. One line, naming the file."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def open_regular(path: PathLike, *, what: str = "an input") -> BinaryIO:
    """``path`` opened for binary reading when it is a regular file; :class:`InputError` otherwise (a FIFO, a
    device, a socket, a directory, through a symlink or not) and :class:`FileNotFoundError` when it is missing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise InputError(f"{path}: not a regular file (a directory; {what} must be a file)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    try:
        check_mode(path, os.fstat(fd).st_mode, what=what)
        os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True)  # type: ignore[return-value]
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: PathLike, limit: int, *, what: str = "an input") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (:class:`InputError` beyond: the limit is
    on what is read, so a sparse or growing file cannot outgrow it)."""
    with open_regular(path, what=what) as f:
        data = read_bounded(f, limit)
    if data is None:
        raise too_large(path, limit, what)
    return data


def too_large(path: PathLike, limit: int, what: str) -> InputError:
    """The one-line refusal of an input larger than ``limit`` bytes (counted on the bytes read)."""
    return InputError(f"{path}: {what} larger than {_size(limit)}; refusing to read it")


def read_bounded(f: BinaryIO, limit: int) -> bytes | None:
    """The rest of the open regular file ``f`` (or any stream with ``read``, such as an archive member being
    inflated) when it holds at most ``limit`` bytes, else None. Memory follows
    what is read: the file's size sizes the first read only up to ``limit`` (never a buffer of ``limit`` bytes for a
    small file), and a file that grows is read on in chunks until it passes the limit."""
    try:
        hint = os.fstat(f.fileno()).st_size
    except (OSError, ValueError, AttributeError):  # a stream with no descriptor (a zip or zstd member): no hint
        hint = 0
    chunks = [f.read(min(hint, limit) + 1)]
    total = len(chunks[0])
    while total <= limit:
        chunk = f.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def check_mode(path: PathLike, mode: int, *, what: str = "an input") -> None:
    """Raise :class:`InputError` unless ``mode`` (of a descriptor already open on ``path``) is a regular file's."""
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file ({_kind(mode)}; {what} must be a file)")


def check_regular(path: PathLike, *, what: str = "an input") -> None:
    """Raise :class:`InputError` unless ``path`` is a regular file (opened and checked, then closed)."""
    open_regular(path, what=what).close()


def _size(n: int) -> str:
    return f"{n / MB:.0f} MB" if n >= MB else f"{n} bytes"
