"""``with`` support for anything that has ``close()``."""

from __future__ import annotations

from typing import Self


class Closing:
    """Mixin: ``with obj:`` returns ``obj`` and calls ``obj.close()`` on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
