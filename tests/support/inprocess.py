"""Run ``trajforge ARGS`` through the real entry point inside the test process (no start-up)."""

from __future__ import annotations

import sys

import pytest

from trajforge.cli.main import main


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``trajforge ARGS``: (exit code, stdout, stderr); output printed before is dropped."""
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["trajforge", *args]
    try:
        with pytest.raises(SystemExit) as exc:
            main()
    finally:
        sys.argv = argv
    captured = capsys.readouterr()
    return int(exc.value.code or 0), captured.out, captured.err
