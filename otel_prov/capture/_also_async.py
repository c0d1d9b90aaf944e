"""``async with`` for the capture scopes, which do nothing that needs awaiting.

Agents written with asyncio use ``async with otel_prov.tool_call(...)``; the scope's
work (start a span, make it current, end it) is the same as with ``with``, and the
context variables it sets are those of the running task either way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["AlsoAsync"]

T = TypeVar("T")


class AlsoAsync(ABC, Generic[T]):
    """A context manager whose ``async with`` is its ``with``."""

    @abstractmethod
    def __enter__(self) -> T: ...

    @abstractmethod
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def __aenter__(self) -> T:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)
