"""The capture scopes' ``with`` (and ``async with``), of which they need only the exception.

Agents written with asyncio use ``async with otel_prov.tool_call(...)``; the scope's
work (start a span, make it current, end it) is the same as with ``with``, and the
context variables it sets are those of the running task either way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["AlsoAsync", "Scope"]

T = TypeVar("T")


class Scope(ABC, Generic[T]):
    """A context manager whose exit needs only the exception the block raised, if any."""

    @abstractmethod
    def __enter__(self) -> T: ...

    @abstractmethod
    def _close(self, exc: BaseException | None) -> None:
        """Leave the scope; ``exc`` is what the block raised (it propagates)."""

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close(exc)


class AlsoAsync(Scope[T]):
    """A context manager whose ``async with`` is its ``with``."""

    async def __aenter__(self) -> T:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close(exc)
