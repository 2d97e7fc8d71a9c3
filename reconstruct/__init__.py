"""Reconstruct: parse harness sessions, replay their workspaces, emit task candidates."""
