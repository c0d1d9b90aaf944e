"""The embedded store's settings: where it lives, and where batches wait beside it.

Light on purpose (no pyoxigraph): ``otel-prov status`` and the registry read these
without opening a store.
"""

from __future__ import annotations

import os
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_STORE

__all__ = ["DEFAULT_STORE", "default_store_path", "store_path"]

DEFAULT_STORE = ".otel-prov/store"
"""Where the embedded store lives unless ``path=`` or ``OTEL_PROV_STORE`` says otherwise."""


def default_store_path() -> Path:
    """``OTEL_PROV_STORE``, else the documented default directory."""
    return Path(env_str(OTEL_PROV_STORE, DEFAULT_STORE) or DEFAULT_STORE)


def store_path(store: str | os.PathLike[str] | None = None) -> Path:
    """``store``, else :func:`default_store_path`."""
    return Path(store) if store is not None else default_store_path()
