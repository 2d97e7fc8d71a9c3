"""Python source as bytes with ast positions mapped to byte offsets (ast columns are UTF-8)."""

from __future__ import annotations

import ast
import re

from trajforge import pyast

_NEWLINE = re.compile(rb"\r\n|\r|\n")


class PySource:
    """One Python file: its bytes, its parsed tree and its line starts."""

    def __init__(self, source: str) -> None:
        self.data = source.encode("utf-8")
        self.tree = pyast.parse(source)
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(self.data)]

    def offset(self, lineno: int, col: int) -> int:
        """Byte offset of a 1-based line and a UTF-8 column."""
        return self.starts[lineno - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Byte span of a node that has positions (expressions and statements)."""
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line = node.end_lineno  # type: ignore[attr-defined]
        end_col = node.end_col_offset  # type: ignore[attr-defined]
        return start, self.offset(end_line, end_col)

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def line_of(self, offset: int) -> int:
        """1-based line number holding a byte offset."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self.starts[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low + 1

    def prefix(self, offset: int) -> bytes:
        """The bytes from the start of `offset`'s line up to `offset`."""
        return self.data[self.starts[self.line_of(offset) - 1] : offset]

    def stmt_start(self, stmt: ast.stmt) -> int:
        """Byte offset where a statement starts, its decorators included."""
        decorators = getattr(stmt, "decorator_list", None)
        if decorators:
            first = self.offset(decorators[0].lineno, decorators[0].col_offset)
            return self.data.rfind(b"@", 0, first)
        return self.offset(stmt.lineno, stmt.col_offset)


def compiles(source: str, path: str = "<mutant>") -> bool:
    """True when `source` compiles as Python."""
    try:
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True
