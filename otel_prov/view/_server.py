"""Running the web app: bind first, then say where, then serve.

The socket is bound here rather than by uvicorn, so that port 0 (any free port) can be
reported as the port it became, and the URL is announced only once it answers.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette

from otel_prov._tls import TlsFiles, uvicorn_options

__all__ = ["serve"]


def serve(
    app: Starlette,
    host: str,
    port: int,
    *,
    announce: Callable[[str], None],
    tls: TlsFiles | None = None,
    name: str = "serve",
    lifespan: bool = False,
) -> None:
    """Serve ``app`` on ``host:port`` until interrupted (SIGINT, SIGTERM), over TLS only
    when ``tls`` is given; ``announce`` gets the URL once the socket is bound, ``name``
    is the server's in the log of a refused handshake, and ``lifespan`` runs the app's
    start and end (an MCP server's sessions live in it).  Raises ``OSError`` when it
    cannot bind, ``ValueError`` for TLS files it cannot use."""
    options = uvicorn_options(tls, name)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    announce(f"{'http' if tls is None else 'https'}://{shown}:{bound}/")
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on" if lifespan else "off",
        **options,
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
