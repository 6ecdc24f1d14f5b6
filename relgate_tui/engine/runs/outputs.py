"""The one way relgate writes a file (issue 23 §1: writes never destroy anything).

* :func:`write_file` — every file relgate writes, its own stores included: a missing path or a regular file is
  replaced all or nothing (temporary file beside it, fsync, rename, directory fsync); a path that exists and is not a
  regular file is never renamed over: a character device (``/dev/null``, a terminal) or a FIFO / pipe
  (``/dev/stdout`` through a pipe, ``>(cmd)``) is written in place, anything else (directory, socket, block device)
  is refused. A FIFO with no reader is refused instead of blocking.
* :func:`check_output_path` — the output guard of every command and TUI export: never over one of the command's
  inputs (compared by resolved path and by inode, so a symlink or hard link to an input is caught), never through a
  symlink to a regular file, never inside a run or audit directory (a folder holding a run's or an audit's
  ``manifest.json``) except a run's ``exports/`` folder, never over a database (a file that begins with SQLite's
  header, such as the embedded review store, or its ``-wal`` / ``-shm`` / ``-journal`` companion), never inside the
  review journals' folder (``<data dir>/review/``) and never inside the judge certificates' store
  (``<data dir>/judge_certificates/``, :func:`certificates_dir`: a certificate is written by its store alone).
* :func:`write_output` — both: what every ``--json`` / ``--markdown`` / ``--output`` / export writes through;
  :func:`write_display` for a document people read (Markdown) and :func:`echo` for a terminal line pass the text
  through the one sanitiser first (issue 23 §6).

Every refusal is a one-line :class:`~relgate_tui.errors.UserError` naming the path.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from relgate_tui.errors import UserError

PathLike = str | os.PathLike[str]


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _write_in_place(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` into an existing character device or FIFO, never creating or renaming anything."""
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    if stat.S_ISFIFO(mode):
        flags |= os.O_NONBLOCK  # no reader: ENXIO at once instead of blocking forever
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UserError(f"{path}: a FIFO with no reader; refusing to wait for one") from None
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        if stat.S_ISFIFO(mode):
            os.set_blocking(fd, True)
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)) or not (
                stat.S_ISCHR(os.fstat(fd).st_mode) or stat.S_ISFIFO(os.fstat(fd).st_mode)):
            raise UserError(f"{path}: changed while being opened; not written")
        _write_all(fd, data)
    finally:
        os.close(fd)


def write_file(path: PathLike, data: bytes | str, *, sync_dir: bool = True) -> None:
    """``data`` at ``path``: a regular file (or a new one) is replaced atomically; a character device or FIFO is
    written in place; any other existing non-regular path is refused (:class:`UserError`). Never renames over
    anything that is not a regular file. ``sync_dir`` False skips the directory fsync after the rename: the content
    is still synced before the rename, so a power loss leaves the old file or the new one, whole — the new *name* may
    just not have reached the disk yet (for a file whose last version is not worth a sync of its own, or whose
    directory the caller syncs with its next write)."""
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        st = os.stat(p)  # follows symlinks: /dev/stdout -> /proc/self/fd/1 -> a pipe or a terminal
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UserError(f"{p}: cannot write ({exc.strerror or exc})") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_in_place(p, raw, st.st_mode)
            return
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UserError(f"{p}: {kind}; refusing to write over it")
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        _write_all(fd, raw)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, p)
    if sync_dir:
        _fsync_dir(p.parent)


def _store_kind(path: Path) -> str | None:
    """``"run"`` or ``"audit"`` when ``path`` holds that store's ``manifest.json`` (a regular file), else None."""
    from relgate_tui.engine.runs.inputs import InputError, read_regular

    try:
        manifest = json.loads(read_regular(path / "manifest.json", 1 << 20, what="a manifest"))
    except (InputError, OSError, ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict):
        return None
    if "run_id" in manifest and "identity" in manifest:
        return "run"
    if manifest.get("kind") == "audit":
        return "audit"
    return None


_SQLITE_MAGIC = b"SQLite format 3\x00"
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def _is_database(path: Path) -> bool:
    """True when ``path`` is a regular file that begins with SQLite's 16-byte header (the embedded review store, a
    sample cache, any database), or is the ``-wal`` / ``-shm`` / ``-journal`` companion of one."""
    from relgate_tui.engine.runs.inputs import InputError, open_regular

    def header(p: Path) -> bytes:
        try:
            with open_regular(p, what="a file") as f:
                return f.read(len(_SQLITE_MAGIC))
        except (InputError, OSError):
            return b""

    if header(path) == _SQLITE_MAGIC:
        return True
    for suffix in _SQLITE_COMPANIONS:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return header(path.with_name(path.name[: -len(suffix)])) == _SQLITE_MAGIC
    return False


def _journals_dir() -> Path:
    from relgate_tui.engine.runs.paths import data_dir

    return (data_dir() / "review").resolve()


CERTIFICATES_FOLDER = "judge_certificates"


def certificates_dir() -> Path:
    """The judge certificates' store, ``<data dir>/judge_certificates`` (written only by its store)."""
    from relgate_tui.engine.runs.paths import data_dir

    return data_dir() / CERTIFICATES_FOLDER


def check_output_path(path: PathLike, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Refuse (:class:`UserError`, one line) an output path that is one of ``inputs`` or links to one, that is a
    symbolic link to a regular file, that is a database (SQLite's header: the embedded review store) or one's
    companion file, that lies in the review journals' folder or the judge certificates' store, or that lies inside a run or audit directory (other
    than a run's ``exports/`` folder) — writing there would destroy what relgate stored or what the command read.
    Returns the path."""
    p = Path(path).expanduser()
    target = p.resolve()
    if _is_database(target):
        raise UserError(f"{p}: a database (SQLite file); refusing to write over it")
    if _journals_dir() in target.parents:
        raise UserError(f"{p}: inside the review journals' folder {_journals_dir()}; refusing to write there")
    store = certificates_dir().resolve()
    if store in target.parents or target == store:
        raise UserError(f"{p}: inside the judge certificates' store {store}; refusing to write there (certificates "
                        "are written by `relgate judge certify` alone)")
    for inp in inputs:
        if inp is None:
            continue
        q = Path(inp).expanduser()
        try:
            same = q.exists() and target.exists() and os.path.samefile(q, target)
        except OSError:
            same = False
        if same or q.resolve() == target:
            raise UserError(f"{p}: refusing to write over an input file ({inp})")
    if p.is_symlink() and target.is_file():
        raise UserError(f"{p}: a symbolic link to {target}; refusing to write through it (give the file itself)")
    for parent in target.parents:
        kind = _store_kind(parent)
        if kind is None:
            continue
        inside = target.relative_to(parent).parts
        if kind == "run" and inside[:1] == ("exports",) and len(inside) > 1:
            break
        where = "its exports/ folder or elsewhere" if kind == "run" else "elsewhere"
        raise UserError(f"{p}: refusing to write inside the {kind} directory {parent} (write to {where})")
    return p


def write_output(path: PathLike, data: bytes | str, *, inputs: Iterable[PathLike | None] = (),
                 mkdir: bool = False) -> Path:
    """An output file of a command or an export: :func:`check_output_path`, then :func:`write_file`. ``mkdir``
    creates missing parent folders (the exports folders)."""
    p = check_output_path(path, inputs)
    if mkdir:
        p.parent.mkdir(parents=True, exist_ok=True)
    write_file(p, data)
    return p


def check_outputs(paths: Iterable[PathLike | None], inputs: Iterable[PathLike | None] = ()) -> None:
    """:func:`check_output_path` on each output a command was given (None and ``-`` = stdout skipped), before the
    command does any work: a refused output costs nothing."""
    ins = list(inputs)
    for path in paths:
        if path is not None and str(path) != "-":
            check_output_path(path, ins)


def write_display(path: PathLike, text: str, *, inputs: Iterable[PathLike | None] = (), mkdir: bool = False) -> Path:
    """A document for people to read (a Markdown report): the one sanitiser
    (:func:`~relgate_tui.core.text.strip_controls`) over the whole text, then :func:`write_output`."""
    from relgate_tui.core.text import strip_controls

    return write_output(path, strip_controls(text), inputs=inputs, mkdir=mkdir)


def echo(text: str, *, file: TextIO | None = None, end: str = "\n") -> None:
    """Text for a terminal (the summary lines, tables and listings of the commands), through the one sanitiser: no
    escape sequence (OSC 52 clipboard writes, title changes) or bidi override in a name ever reaches it."""
    from relgate_tui.core.text import strip_controls

    print(strip_controls(text), file=file if file is not None else sys.stdout, end=end)
