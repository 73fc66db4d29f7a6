"""Name -> component registries whose lookup errors list the valid names."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from factscout.errors import InputError, UnknownName

T = TypeVar("T")


class Registry(Generic[T]):
    """A dict of named components of one kind (``retriever``, ``fusion``...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(item: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._items[name] = item
            return item

        return add

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownName(self.kind, name, self._items) from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def names(self) -> list[str]:
        return sorted(self._items)


def where_to_run(registry: Registry[T], ray: str | None) -> T:
    """The backend of ``registry`` that runs work in this process (``ray`` is None: ``local``)
    or on Ray (``ray``: ``auto`` or a cluster address). The Ray backends live in
    :mod:`factscout.scale`, which registers them when imported; the runtime packages never
    import it themselves, so a library caller asking for Ray imports it first."""
    name = "local" if ray is None else "ray"
    if name == "ray" and name not in registry:
        raise InputError(
            f"no {registry.kind} 'ray' is registered: import factscout.scale first to run on Ray"
            " (pip install 'factscout[ray]')"
        )
    return registry[name]
