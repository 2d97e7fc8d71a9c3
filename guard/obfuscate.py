"""Rewrite a shell attack through the obfuscation forms the detectors must see through.

Every form runs the same command: ``bash -c`` / ``sh -c`` / ``eval`` strings, base64, printf
and hex decoding piped into a shell, a variable assigned earlier in the same command, a
subshell, a command substitution, ``&&`` / ``||`` chains, a heredoc fed to the shell, and
Python (``python -c`` with ``subprocess``, a Python heredoc with ``os.system``).
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Callable

Form = Callable[[str], str]


def _b64(cmd: str) -> str:
    return base64.b64encode(cmd.encode()).decode()


def _printf_hex(cmd: str) -> str:
    return "".join(f"\\x{b:02x}" for b in cmd.encode())


FORMS: dict[str, Form] = {
    "bash -c": lambda c: f"bash -c {shlex.quote(c)}",
    "sh -c nested": lambda c: f"sh -c {shlex.quote('bash -c ' + shlex.quote(c))}",
    "eval": lambda c: f"eval {shlex.quote(c)}",
    "base64 | bash": lambda c: f"echo {_b64(c)} | base64 -d | bash",
    "bash -c $(base64)": lambda c: f'bash -c "$(echo {_b64(c)} | base64 --decode)"',
    "printf | sh": lambda c: f"printf '{_printf_hex(c)}' | sh",
    "xxd | bash": lambda c: f"echo {c.encode().hex()} | xxd -r -p | bash",
    "variable": lambda c: f'X={shlex.quote(c)}; eval "$X"',
    "subshell": lambda c: f"( {c}\n)",
    "and-chain": lambda c: f"true && {{ {c}\n}}",
    "or-chain": lambda c: f"false || bash -c {shlex.quote(c)}",
    "heredoc": lambda c: f"bash <<'GUARD_EOF'\n{c}\nGUARD_EOF",
    "here-string": lambda c: f"bash <<< {shlex.quote(c)}",
    "python -c": lambda c: (
        f"python3 -c {shlex.quote(f'import subprocess; subprocess.run({c!r}, shell=True)')}"
    ),
    "python heredoc": lambda c: f"python3 - <<'PY'\nimport os\nos.system({c!r})\nPY",
}


def variants(command: str) -> dict[str, str]:
    """Form name → the rewritten command."""
    return {name: form(command) for name, form in FORMS.items()}
