"""Trajectory format readers, one module per harness (registered in trajforge.registry)."""
