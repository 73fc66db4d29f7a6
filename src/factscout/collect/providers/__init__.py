"""Web search providers behind one interface (see :mod:`factscout.collect.providers.base`):
``serpapi``, ``brave``, ``bing``, ``google`` (Programmable Search Engine)."""

from factscout.collect.providers.base import (
    PROVIDERS,
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
    make_provider,
)

__all__ = ["PROVIDERS", "ProviderError", "SearchProvider", "SearchRequest", "SearchResult", "make_provider"]

# importing the provider modules registers them
from factscout.collect.providers import bing, brave, google, serpapi  # noqa: F401
