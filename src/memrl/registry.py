"""A name -> factory registry shared by cores, environments and experiments."""

from __future__ import annotations

import re
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories by name; ``register`` refuses duplicates, ``make`` names what is allowed."""

    def __init__(self, kind: str):
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str, factory: Callable[..., T]) -> None:
        if name in self._factories:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> list[str]:
        return sorted(self._factories)

    def factory(self, name: str) -> Callable[..., T]:
        if name not in self._factories:
            raise ValueError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return self._factories[name]

    def make(self, name: str, **kwargs) -> T:
        factory = self.factory(name)
        try:
            return factory(**kwargs)
        except TypeError as err:
            fixed = re.search(r"got multiple values for (?:keyword )?argument '(\w+)'", str(err))
            if fixed:  # the factory passes it itself: e.g. memory-planning/4x4's maze_size
                raise TypeError(f"{self.kind} {name!r} fixes {fixed[1]} by its name; choose another {self.kind} to change it") from None
            raise TypeError(f"bad arguments for {self.kind} {name!r}: {err}") from None
