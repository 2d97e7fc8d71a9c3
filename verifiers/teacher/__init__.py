"""The ``openai:MODEL`` teacher: hidden tests written by a model, proven by the control matrix."""
