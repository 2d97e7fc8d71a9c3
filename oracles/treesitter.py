"""Tree-sitter parsers for the JavaScript / TypeScript files the oracles stub and mutate."""

from __future__ import annotations

import functools
import posixpath

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx")
TS_SUFFIXES = (".ts",)
TSX_SUFFIXES = (".tsx",)


@functools.cache
def _language(name: str) -> tree_sitter.Language:
    if name == "typescript":
        return tree_sitter.Language(tree_sitter_typescript.language_typescript())
    if name == "tsx":
        return tree_sitter.Language(tree_sitter_typescript.language_tsx())
    return tree_sitter.Language(tree_sitter_javascript.language())


def grammar_for(path: str) -> str | None:
    """The grammar name for a path by its suffix (javascript / typescript / tsx), or None."""
    suffix = posixpath.splitext(path)[1].lower()
    if suffix in JS_SUFFIXES:
        return "javascript"
    if suffix in TS_SUFFIXES:
        return "typescript"
    if suffix in TSX_SUFFIXES:
        return "tsx"
    return None


def parse(grammar: str, source: bytes) -> tree_sitter.Tree:
    """Parse `source` with the named grammar (a fresh parser: parsers are not thread-safe)."""
    return tree_sitter.Parser(_language(grammar)).parse(source)


def parses(grammar: str, source: bytes) -> bool:
    """True when `source` parses without ERROR or MISSING nodes."""
    return not parse(grammar, source).root_node.has_error


def apply_edits(source: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """`source` with each (start, end, replacement) byte span replaced; spans must not overlap."""
    out = source
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:start] + text + out[end:]
    return out
