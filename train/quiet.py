"""Third-party noise around training, filtered where the libraries are called.

TRL 1.16 calls transformers 5's deprecated ``gradient_checkpointing_*`` aliases on every step,
so each step prints the same ``FutureWarning``\\ s again; they name library internals nobody
running ``trajforge train`` can change (the versions are pinned in ``pyproject.toml``). Within
:func:`quiet_libraries` deprecation warnings raised from those libraries are dropped, their
``UserWarning``\\ s are shown once each, and (``progress=False``) transformers' weight loading /
saving bars are off. Warnings raised from trajforge's own code are untouched.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

LIBRARIES = ("transformers", "trl", "peft", "accelerate", "datasets", "torch", "huggingface_hub")
"""Libraries whose deprecation warnings are dropped during training (pinned, not ours)."""
DEPRECATIONS = (FutureWarning, DeprecationWarning)
"""Warning categories dropped from LIBRARIES: they announce changes inside the library."""


@contextmanager
def quiet_libraries(progress: bool = True) -> Iterator[None]:
    """Drop LIBRARIES' deprecation warnings, show their other warnings once; ``progress=False``
    also hides transformers' progress bars (restored on exit)."""
    module = rf"({'|'.join(LIBRARIES)})(\.|$)"
    with warnings.catch_warnings():
        warnings.filterwarnings("once", category=UserWarning, module=module)
        for category in DEPRECATIONS:
            warnings.filterwarnings("ignore", category=category, module=module)
        if progress:
            yield
            return
        from transformers.utils import logging as hf_logging

        was_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            yield
        finally:
            if was_on:
                hf_logging.enable_progress_bar()
