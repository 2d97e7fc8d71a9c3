"""Runners for real coding-agent CLIs (pi, opencode, hermes) against an OpenAI endpoint."""
