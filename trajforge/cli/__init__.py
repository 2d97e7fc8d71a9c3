"""The ``trajforge`` command line."""
