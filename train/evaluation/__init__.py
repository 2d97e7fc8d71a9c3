"""``trajforge eval``: adapter versus base inside the same harness, per family (docs/eval.md)."""
