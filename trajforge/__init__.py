"""trajforge: coding-agent trajectories → verifiable RL tasks."""

__version__ = "0.1.0"
