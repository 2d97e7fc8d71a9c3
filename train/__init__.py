"""Training-side stage: harness runners, the scripted replay policy and ``trajforge replay``."""
