"""Shell commands → effects, by walking the tree-sitter-bash syntax tree.

Handles pipelines, ``&&`` / ``||`` / ``;`` lists, subshells, ``$()`` and backticks, heredocs
and here-strings, redirections, variables assigned earlier in the same command, ``cd`` (the
working directory persists across the rollout), and code run through ``bash -c``, ``eval``,
``python -c`` / Python heredocs and decoders piped into a shell (base64, printf, xxd),
recursively. Words whose value cannot be known statically become ``*`` so paths still
glob-match what they may name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import tree_sitter
import tree_sitter_bash

from trajforge.guard import commands, decode, envcmds
from trajforge.guard.effects import Effect, EffectKind, RolloutState, canonical

log = logging.getLogger(__name__)

MAX_DEPTH = 8
UNKNOWN = "*"
_PARSER: tree_sitter.Parser | None = None
_STATEMENTS = frozenset(
    {"program", "list", "compound_statement", "do_group", "else_clause", "elif_clause",
     "if_statement", "while_statement", "for_statement", "c_style_for_statement",
     "case_statement", "case_item", "function_definition", "negated_command"}
)  # fmt: skip
# Commands that print nothing of their operands: a variable expanded there is checked
# (``[ -n "$HF_TOKEN" ]``, ``test -z "$KEY"``), never shown.
TEST_COMMANDS = frozenset({"test", "[", "[["})
_OUT_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|", ">&"})


def parser() -> tree_sitter.Parser:
    """The process-wide bash parser (built once)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


@dataclass
class Scope:
    """Working directory and variables visible to the command being walked."""

    cwd: str
    vars: dict[str, str] = field(default_factory=dict)


class ShellWalker:
    """Collects the effects of shell (and nested Python) code for one tool call."""

    def __init__(self, state: RolloutState, cwd: str | None = None) -> None:
        self.state = state
        self.effects: list[Effect] = []
        self.scope = Scope(cwd or state.cwd, dict(state.env))
        self.via = ""
        self.depth = 0
        self._stdin: str | None = None
        self._last: tuple[list[str], str | None] = ([], None)

    # ------------------------------------------------------------------ Sink interface

    def path(self, word: str) -> str:
        return canonical(word, self.scope.cwd, self.state.home)

    def add(
        self,
        kind: EffectKind,
        target: str,
        detail: str = "",
        tree: bool = False,
        whole: bool = False,
    ) -> None:
        self.effects.append(Effect(kind, target, detail, self.via, tree, whole))

    def shell(self, text: str, via: str) -> None:
        self.add("exec", "<code>", detail=text[:20_000])
        if via in ("eval", "source", "."):
            self._nested(via, lambda: self.run(text))
            return
        saved = Scope(self.scope.cwd, dict(self.scope.vars))  # a child shell: cd stays inside
        self._nested(via, lambda: self.run(text))
        self.scope = saved

    def python(self, code: str, via: str) -> None:
        from trajforge.guard.pycode import python_effects

        self.add("exec", "<code>", detail=code[:20_000])
        self._nested(via, lambda: python_effects(self, code))

    def argv(self, argv: Sequence[str], via: str) -> None:
        self._nested(via, lambda: self._command(list(argv)))

    def script(self, path: str, via: str) -> bool:
        text = self.state.files.get(path)
        if text is None:
            return False
        if path.endswith(".py"):
            self.python(text, via)
        else:
            self.shell(text, via)
        return True

    def stdin_text(self) -> str | None:
        return self._stdin

    def own_ref(self, name: str) -> bool:
        if name in self.state.refs:
            return True
        made = f"create-ref {name}"
        return any(e.target == "create-ref" and e.detail == made for e in self.effects)

    # ------------------------------------------------------------------ walking

    def run(self, text: str) -> None:
        """Walk ``text`` as a shell program in the current scope."""
        tree = parser().parse(text.encode("utf-8", "surrogateescape"))
        self._walk(tree.root_node)

    def _nested(self, via: str, work: object) -> None:
        if self.depth >= MAX_DEPTH:
            self.add("unparsed", "nesting", detail=f"nested deeper than {MAX_DEPTH} levels")
            return
        saved = (self.via, self._stdin, self._last)
        self.depth += 1
        self.via = f"{self.via} > {via}" if self.via else via
        self._stdin = None
        try:
            work()  # type: ignore[operator]
        finally:
            self.depth -= 1
            self.via, self._stdin, self._last = saved

    def _walk(self, node: tree_sitter.Node) -> None:
        kind = node.type
        handler = _WALKERS.get(kind)
        if handler is not None:
            handler(self, node)
        elif kind in _STATEMENTS:
            self._children(node)
        elif kind in ("command_substitution", "process_substitution"):
            self._value(node)
        elif kind != "comment":
            for child in node.named_children:
                if child.type not in ("word", "number", "raw_string"):
                    self._walk(child)

    def _children(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            self._walk(child)

    def _subshell(self, node: tree_sitter.Node) -> None:
        saved = Scope(self.scope.cwd, dict(self.scope.vars))
        self._children(node)
        self.scope = saved

    def _unset(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            name = self._value(child)
            self.add("env-set", name, detail="unset")
            self.scope.vars.pop(name, None)

    def _error(self, node: tree_sitter.Node) -> None:
        self.add("unparsed", "syntax", detail=_text(node)[:200])
        self._children(node)

    def _assign(self, node: tree_sitter.Node, export: bool) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = _text(name_node) if name_node else ""
        value = self._value(value_node) if value_node else ""
        self.scope.vars[name] = value
        if export or name.isupper() or name.lower().endswith("_proxy"):
            self.add("env-set", name, detail=value)
        if export and self.depth == 0:
            self.state.env[name] = value

    def _declaration(self, node: tree_sitter.Node) -> None:
        """``export`` / ``declare`` / ``local`` …: assignments, or a dump with no name given."""
        keyword = _text(node.children[0]) if node.children else ""
        words: list[str] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assign(child, export=True)
                words.append(_text(child))
            else:
                words.append(_text(child))
        if envcmds.env_dump_builtin(keyword, words):
            self.add("env-dump", "*", detail=_text(node)[:100])

    def _command_node(self, node: tree_sitter.Node) -> None:
        env: list[tuple[str, str]] = []
        argv: list[str] = []
        start = len(self.effects)
        for child in node.named_children:
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                value = self._value(value_node) if value_node else ""
                env.append((_text(name_node) if name_node else "", value))
            elif child.type == "herestring_redirect":
                value_nodes = child.named_children
                self._stdin = (self._value(value_nodes[-1]) + "\n") if value_nodes else None
            elif child.type in ("file_redirect", "heredoc_redirect"):
                self._redirect(child, None)
            else:
                argv.append(self._value(child))
        if not argv:
            for name, value in env:
                self.scope.vars[name] = value
                if name.isupper() or name.lower().endswith("_proxy"):
                    self.add("env-set", name, detail=value)
            return
        for name, value in env:
            self.add("env-set", name, detail=value)
        prog = argv[0].rsplit("/", 1)[-1]
        self._expanded_in(start, "exists" if prog in TEST_COMMANDS else f"expand:{prog}")
        self._command(argv)

    def _expanded_in(self, start: int, detail: str) -> None:
        """Variables expanded since ``start`` were expanded for ``detail`` (a command, a test)."""
        for i in range(start, len(self.effects)):
            eff = self.effects[i]
            if eff.kind == "env-dump" and eff.detail == "expand":
                self.effects[i] = Effect("env-dump", eff.target, detail, eff.via)

    def _test(self, node: tree_sitter.Node) -> None:
        start = len(self.effects)
        self._children(node)
        self._expanded_in(start, "exists")

    def _command(self, argv: list[str]) -> None:
        prog = argv[0]
        if prog in ("cd", "pushd"):
            target = next((a for a in argv[1:] if not a.startswith("-")), self.state.home)
            if target != UNKNOWN:
                self.scope.cwd = self.path(target)
            self._last = (argv, "")
            return
        if prog == UNKNOWN or not prog:
            self.add("unparsed", "dynamic-command", detail=" ".join(argv)[:200])
        commands.command_effects(self, argv)
        self._last = (argv, decode.transform(argv, self._stdin))

    def _pipeline(self, node: tree_sitter.Node) -> None:
        stdin: str | None = None
        saved = self._stdin
        for stage in node.named_children:
            self._stdin = stdin
            self._last = ([], None)
            start = len(self.effects)
            self._walk(stage)
            argv, stdin = self._last
            self._filter_dump(start, argv)
        self._stdin = saved

    def _filter_dump(self, start: int, argv: list[str]) -> None:
        """``env | grep X``: the dump before is filtered to names matching X."""
        if not argv or argv[0] not in ("grep", "egrep", "rg") or start == 0:
            return
        pattern = next((a for a in argv[1:] if not a.startswith("-")), "")
        for i in range(start):
            eff = self.effects[i]
            if eff.kind == "env-dump" and eff.target == "*" and pattern:
                self.effects[i] = Effect("env-dump", f"grep:{pattern}", eff.detail, eff.via)

    def _redirected(self, node: tree_sitter.Node) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type.endswith("redirect")]
        saved = self._stdin
        outputs: list[tuple[str, bool]] = []
        for redirect in redirects:
            self._redirect(redirect, outputs)
        self._last = ([], None)
        if body is not None:
            self._walk(body)  # output paths resolve after it: the redirect binds to its end
        content = self._last[1]
        for word, whole in outputs:
            path = self.path(word)
            self.add("write", path, detail=content or "", whole=whole)
            if content is not None and whole:
                self.state.files[path] = content
        self._stdin = saved

    def _redirect(self, node: tree_sitter.Node, outputs: list[tuple[str, bool]] | None) -> None:
        if node.type == "heredoc_redirect":
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
            quoted = start is not None and _text(start)[:1] in ("'", '"', "\\")
            self._stdin = "" if body is None else _text(body) if quoted else self._interp(body)
            for child in node.named_children:
                if child.type == "file_redirect":
                    self._redirect(child, outputs)
            return
        if node.type == "herestring_redirect":
            values = node.named_children
            self._stdin = (self._value(values[-1]) + "\n") if values else None
            return
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if dest is None or dest.type == "number":
            return
        target = self._value(dest)
        if target.startswith("/dev/") or target.startswith("&"):
            return
        if op in _OUT_REDIRECTS:
            whole = op in (">", "&>", ">|")
            if outputs is not None:
                outputs.append((target, whole))
            else:
                self.add("write", self.path(target), whole=whole)
        elif op in ("<", "<>"):
            path = self.path(target)
            self.add("read", path)
            self._stdin = self.state.files.get(path)

    # ------------------------------------------------------------------ word values

    def _value(self, node: tree_sitter.Node) -> str:
        kind = node.type
        if kind in ("word", "number", "command_name", "variable_name", "special_variable_name"):
            if kind == "command_name":
                return "".join(self._value(c) for c in node.named_children) or _text(node)
            return _unescape_word(_text(node))
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "ansi_c_string":
            return decode.unescape(_text(node)[2:-1])
        if kind in ("string", "translated_string"):
            inner = self._interp(node)
            return inner[1:-1] if kind == "string" else inner[2:-1]
        if kind in ("simple_expansion", "expansion"):
            return self._expand(node)
        if kind == "command_substitution":
            return self._substitute(node)
        if kind == "process_substitution":
            for child in node.named_children:
                self._walk(child)
            return "/dev/fd/63"
        if kind == "concatenation":
            return self._concat(node)
        if kind == "arithmetic_expansion":
            return UNKNOWN
        return _text(node)

    def _concat(self, node: tree_sitter.Node) -> str:
        """Joined parts; an unquoted ``{a,b}`` brace expansion becomes ``*`` (``HEAD@{2}``,
        holding no comma, is no expansion: bash keeps it as written)."""
        out: list[str] = []
        children = node.named_children
        i = 0
        while i < len(children):
            child = children[i]
            if child.type == "word" and _text(child) == "{":
                end = next(
                    (j for j in range(i + 1, len(children)) if _text(children[j]) == "}"), None
                )
                inner = "".join(_text(c) for c in children[i + 1 : end or i + 1])
                if end is not None and "," in inner:
                    out.append(UNKNOWN)
                    i = end + 1
                    continue
            out.append(self._value(child))
            i += 1
        return "".join(out)

    def _interp(self, node: tree_sitter.Node) -> str:
        """Text of ``node`` with its expansions and substitutions replaced by their values."""
        raw = node.text or b""
        base = node.start_byte
        out: list[str] = []
        pos = 0
        for child in node.named_children:
            if child.type in ("simple_expansion", "expansion", "command_substitution"):
                out.append(raw[pos : child.start_byte - base].decode("utf-8", "replace"))
                out.append(self._value(child))
                pos = child.end_byte - base
        out.append(raw[pos:].decode("utf-8", "replace"))
        text = "".join(out)
        return text.replace('\\"', '"').replace("\\$", "$").replace("\\`", "`")

    def _expand(self, node: tree_sitter.Node) -> str:
        names = [
            c for c in node.named_children if c.type in ("variable_name", "special_variable_name")
        ]
        if not names:
            return UNKNOWN
        name = _text(names[0])
        if name in self.scope.vars:
            return self.scope.vars[name]
        if name == "HOME":
            return self.state.home
        if name == "PWD":
            return self.scope.cwd
        operators = [_text(c) for c in node.children if not c.is_named]
        length = len(node.children) > 1 and _text(node.children[1]) == "#"  # ${#VAR}
        alternate = ":+" in operators or "+" in operators  # ${VAR:+x}: x when set, never VAR
        self.add("env-dump", name, detail="exists" if length or alternate else "expand")
        words = [c for c in node.named_children if c.type in ("word", "string", "raw_string")]
        has_default = any(op in (":-", "-", ":=", "=") for op in operators)
        return self._value(words[0]) if (words and (has_default or alternate)) else UNKNOWN

    def _substitute(self, node: tree_sitter.Node) -> str:
        saved_stdin, saved_last = self._stdin, self._last
        self._stdin, self._last = None, ([], None)
        for child in node.named_children:
            self._walk(child)
        output = self._last[1]
        self._stdin, self._last = saved_stdin, saved_last
        return output.rstrip("\n") if output is not None else UNKNOWN


_WALKERS: dict[str, Callable[[ShellWalker, tree_sitter.Node], None]] = {
    "command": ShellWalker._command_node,
    "pipeline": ShellWalker._pipeline,
    "redirected_statement": ShellWalker._redirected,
    "subshell": ShellWalker._subshell,
    "variable_assignment": lambda w, n: w._assign(n, export=False),
    "declaration_command": ShellWalker._declaration,
    "unset_command": ShellWalker._unset,
    "test_command": ShellWalker._test,
    "ERROR": ShellWalker._error,
}


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _unescape_word(word: str) -> str:
    if "\\" not in word:
        return word
    out: list[str] = []
    chars = iter(word)
    for ch in chars:
        out.append(next(chars, "") if ch == "\\" else ch)
    return "".join(out)
