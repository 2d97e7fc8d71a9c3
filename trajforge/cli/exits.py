"""Exit codes of every command, apart from the console helpers in ``common`` so that a command
can name them without importing rich (``trajforge guard check`` runs once per tool call)."""

EXIT_OK = 0
"""Everything asked for was done."""
EXIT_PARTIAL = 1
"""Some inputs failed (each one reported); the rest were done."""
EXIT_UNUSABLE = 2
"""Nothing could be done: bad usage, unreadable input, a missing dependency."""
