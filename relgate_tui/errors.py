"""The one root error type (issue 9 item 7).

Every error whose message is meant for a person derives from :class:`RelgateError`; the CLI and the TUI show those as
one line. Anything else is an unexpected error and is shown with a hint to report it — never as a tidy user error.

- :class:`UserError`: a bad command line, setting or choice.
- :class:`EndpointError`: a server that cannot be reached or answers wrongly.
- :class:`DataError`: a file (task, labels, scores, log, run) that cannot be read as what it claims to be. Messages
  name the file, the line (when there is one) and the field.
"""

from __future__ import annotations


class RelgateError(Exception):
    """Root of every error with a message for the user."""


class UserError(RelgateError, ValueError):
    """A bad command line, setting or choice."""


class EndpointError(RelgateError, RuntimeError):
    """A model or judge server that cannot be reached, or that answers wrongly."""


class DataError(RelgateError, ValueError):
    """A file that cannot be read as what it claims to be (one line: file, line, field)."""


def data_error(path: object, message: str, *, line: int | None = None, field: str | None = None) -> DataError:
    """A :class:`DataError` worded the one way: ``FILE:LINE: field 'F': message``."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    what = f"field '{field}': " if field else ""
    return DataError(f"{where}: {what}{message}")


class CertifyError(UserError):
    """A user-facing pipeline error (bad option, bad labels file, unreachable endpoint …). One-line message."""
