"""One exception hierarchy for factscout.

Every error a user can trigger with bad input is a :class:`FactscoutError`; its message names
the bad value and, where there is a closed set, the accepted ones. The CLI turns these into
one readable line instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable


class FactscoutError(Exception):
    """Base class of every error factscout raises on purpose."""


class InputError(FactscoutError, ValueError):
    """A file, record or argument given by the user is malformed."""


class UnknownName(FactscoutError, KeyError):
    """A component name is not in its registry; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind, self.name, self.known = kind, name, sorted(known)
        super().__init__(f"no {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class PlanError(FactscoutError):
    """A query planner could not plan one claim (a text its parser fails on, an unusable LLM
    answer); a check records it in the report (``provenance.planner_error``) and searches the
    claim alone."""


class BadIndex(FactscoutError):
    """An index directory is missing, partial, corrupt or not a factscout index."""


class ServerError(FactscoutError):
    """A search server is unreachable or failed a request; the message names the server."""


class MissingDependency(FactscoutError, ImportError):
    """An optional dependency is not installed; the message says what to install."""


class DataNotFound(FactscoutError, FileNotFoundError):
    """A dataset file is not where factscout looked; the message says where it looked."""


class ModelNotFound(DataNotFound):
    """A shipped or given model file is missing; the message says where factscout looked."""


class BadModel(FactscoutError):
    """A model file exists but is not the kind of factscout model asked for (or does not fit
    its backbone or encoder); the message names the file."""
