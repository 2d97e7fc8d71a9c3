"""Oracles and the controls they are checked against: stubs, mutants, changed lines."""
