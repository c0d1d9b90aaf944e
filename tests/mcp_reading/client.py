"""The official MCP client (``mcp.ClientSession``) connected to ``otel-prov mcp``, over
stdio (the client starts the server) or streamable HTTP, with a synchronous face for the
tests: its event loop runs in a thread of its own while the session is open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

__all__ = ["Connected", "ToolAnswer", "http_session", "stdio_session"]

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]


class ToolAnswer:
    """A tool's result: its structured content, or the error text it says."""

    def __init__(self, result: CallToolResult) -> None:
        self.result = result
        self.error = bool(result.is_error)
        self.text = "".join(getattr(block, "text", "") for block in result.content)
        self.data: dict[str, Any] = result.structured_content or {}

    def __repr__(self) -> str:
        return f"ToolAnswer(error={self.error}, text={self.text[:300]!r})"


class Connected:
    """An initialized session, called from the test's thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, session: ClientSession) -> None:
        self.loop = loop
        self.session = session

    def run(self, work: Awaitable[T], timeout: float = 120.0) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(work, self.loop)  # type: ignore[arg-type]
        return future.result(timeout)

    def call(self, tool: str, **arguments: Any) -> ToolAnswer:
        return ToolAnswer(self.run(self.session.call_tool(tool, arguments)))

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed; its text holds the same."""
        answer = self.call(tool, **arguments)
        assert not answer.error, answer
        assert json.loads(answer.text) == answer.data
        return answer.data

    def read(self, uri: str) -> str:
        contents = self.run(self.session.read_resource(uri)).contents
        return "".join(getattr(content, "text", "") for content in contents)


@contextlib.contextmanager
def _in_thread(
    opening: contextlib.AbstractAsyncContextManager[ClientSession],
) -> Iterator[Connected]:
    loop = asyncio.new_event_loop()
    ready: Future[ClientSession] = Future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with opening as session:
                ready.set_result(session)
                await done.wait()
        except BaseException as exc:  # the opening failed: the test says why
            if not ready.done():
                ready.set_exception(exc)
            else:
                raise

    thread = threading.Thread(target=loop.run_until_complete, args=(hold(),), daemon=True)
    thread.start()
    try:
        yield Connected(loop, ready.result(60))
    finally:
        loop.call_soon_threadsafe(done.set)
        thread.join(30)


@contextlib.asynccontextmanager
async def _stdio(args: list[str], env: dict[str, str] | None) -> AsyncIterator[ClientSession]:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "otel_prov", "mcp", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        cwd=ROOT,
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def stdio_session(
    *args: str, env: dict[str, str] | None = None
) -> contextlib.AbstractContextManager[Connected]:
    """A session with ``otel-prov mcp ARGS``, started by the client over stdio."""
    return _in_thread(_stdio(list(args), env))


@contextlib.asynccontextmanager
async def _http(
    url: str, headers: dict[str, str], tls: ssl.SSLContext | None
) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(
        headers=headers, verify=tls if tls is not None else True, timeout=120
    )
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def http_session(
    url: str, *, token: str | None = None, tls: ssl.SSLContext | None = None
) -> contextlib.AbstractContextManager[Connected]:
    """A session with the server at ``url`` (``.../mcp``), sending ``token`` as a bearer
    token, over TLS checked with ``tls``."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return _in_thread(_http(url, headers, tls))
