"""The scripted OpenAI-compatible server, now :mod:`trajforge.train.scripted` (re-exported).

Run standalone: ``python -m tests.support.scripted_server SCRIPT.json --port 8000``.
"""

from __future__ import annotations

from trajforge.train.scripted import ScriptedServer, Turn, main

__all__ = ["ScriptedServer", "Turn", "main"]

if __name__ == "__main__":
    main()
