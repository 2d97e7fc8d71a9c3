"""A listing of files: which a command printed, and which files a change of them reaches.

A :class:`Producer` is a command that printed file names (``find``, ``grep -l``): the folders
it searched (its roots, as written) and a test that says of one known file whether it was
listed: True (surely), False (surely not) or None (perhaps). A :class:`Selection` is what a
change of the listed files (``xargs sed -i``) carries to replay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

Verdict = bool | None
Test = Callable[[str, str, "str | None"], Verdict]
"""(path as the producer printed it, path under its root ('' for the root itself), known
content or None) → whether the producer listed it."""


def _maybe(printed: str, rel: str, content: str | None) -> Verdict:
    return None


@dataclass(frozen=True)
class Producer:
    """Where a command looked for files, and which it listed."""

    roots: tuple[str, ...] = ()
    """Shielded words of the folders or files it searched; () with ``anywhere``."""
    test: Test = _maybe
    anywhere: bool = False
    """It may have listed any file (a command replay cannot read, a list file)."""

    def weakened(self) -> Producer:
        """The producer behind a filter (``grep -v``, ``head``): what it listed perhaps."""
        test = self.test
        return replace(self, test=lambda p, r, c: None if test(p, r, c) is not False else False)


ANYWHERE = Producer(anywhere=True)


@dataclass(frozen=True)
class Selection:
    """The files under a change's path (or, ``anywhere``, every known file) that a command
    may have changed, with the test that says which it surely did."""

    test: Test
    printed: str = "."
    """The root as the producer printed it (``./`` before its files' names)."""
    anywhere: bool = False

    def verdict(self, rel: str, content: str | None) -> Verdict:
        """Whether the file at ``rel`` under the root (or the workspace) was chosen."""
        if self.anywhere or not rel:
            printed = rel or self.printed
        else:
            printed = f"{self.printed.rstrip('/') or '/'}/{rel}".replace("//", "/")
        return self.test(printed, rel, content)
