"""A directory tree that lists folders and the files a screen can read, by suffix (hidden entries left out)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual.widgets import DirectoryTree

__all__ = ["SuffixTree"]


class SuffixTree(DirectoryTree):
    """Folders and files whose suffix is one of :attr:`suffixes` (lower case); a subclass names them. An entry
    that cannot be examined (permissions, a dangling link) is left out."""

    suffixes: frozenset[str] | tuple[str, ...] = ()

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        out = []
        for p in paths:
            if p.name.startswith("."):
                continue
            try:
                if p.is_dir() or p.suffix.lower() in self.suffixes:
                    out.append(p)
            except OSError:
                continue
        return out
