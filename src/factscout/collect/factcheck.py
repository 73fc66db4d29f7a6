"""Fact-checking sites, removed from collected evidence to avoid gold leakage.

A claim's own fact-check states its verdict, so a corpus that contains it lets a system copy
the answer (QuanTemp++ removes such sites from its search results). The shipped list,
``factcheck_domains.txt`` in this package, holds dedicated fact-checking sites (a domain matches
itself and its subdomains) and the fact-check sections of news outlets: a domain with a path
prefix (``reuters.com/fact-check`` matches ``/fact-check``, ``/fact-check/...`` and
``/fact-check-...``) or a path pattern with ``*`` wildcards for outlets that put a date first
(``abc.net.au/news/*/fact-check*``). Runs can add entries (``--exclude-domain``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

import httpx

from factscout.errors import InputError

LIST_FILE = "factcheck_domains.txt"


def _parse_entry(raw: str) -> tuple[str, str]:
    entry = raw.strip().lower()
    for prefix in ("https://", "http://"):
        entry = entry.removeprefix(prefix)
    host, _, path = entry.partition("/")
    host = host.removeprefix("www.").rstrip(".")
    if not host or "." not in host or " " in entry:
        raise InputError(f"fact-check site entry must be a domain or domain/path, got {raw!r}")
    return host, ("/" + path.rstrip("/")) if path else ""


def shipped_entries() -> list[str]:
    """The entries of the list shipped with factscout (comments and blank lines left out)."""
    text = resources.files("factscout.collect").joinpath(LIST_FILE).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@dataclass(frozen=True)
class FactCheckSites:
    """A set of fact-checking sites: ``match(url)`` names the entry a URL falls under."""

    entries: tuple[tuple[str, str], ...]

    @classmethod
    def load(cls, extra: Iterable[str] = (), *, shipped: bool = True) -> FactCheckSites:
        """The shipped list (unless ``shipped=False``) plus ``extra`` entries."""
        raw = (shipped_entries() if shipped else []) + list(extra)
        return cls(tuple(sorted({_parse_entry(e) for e in raw})))

    def __len__(self) -> int:
        return len(self.entries)

    def match(self, url: str) -> str | None:
        """The entry (``domain`` or ``domain/path``) that ``url`` belongs to, or None."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError):
            return None
        host = (parsed.host or "").lower().rstrip(".")
        path = (parsed.path or "/").lower()
        for domain, prefix in self.entries:
            if not (host == domain or host.endswith("." + domain)):
                continue
            if "*" in prefix:
                if fnmatch.fnmatchcase(path, prefix):
                    return domain + prefix
            elif not prefix or path == prefix or path.startswith(prefix + "/") or path.startswith(prefix + "-"):
                return domain + prefix
        return None
