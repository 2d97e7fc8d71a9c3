"""Verifiers: hidden tests, the sandbox, validation."""
