"""The web service and page: a FastAPI app over the core (``create_app``), ``factscout serve``.

Needs the ``serve`` extra: ``pip install 'factscout[serve]'``.
"""

from __future__ import annotations

from typing import Any

from factscout.errors import MissingDependency

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """:func:`factscout.serve.app.create_app`, with an install hint when FastAPI is missing."""
    try:
        from factscout.serve.app import create_app as build
    except ImportError as exc:
        raise MissingDependency(f"the web service needs {exc.name}: pip install 'factscout[serve]'") from None
    return build(*args, **kwargs)
