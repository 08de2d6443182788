"""A name -> factory registry shared by cores, environments and experiments."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories by name; ``register`` refuses duplicates, ``make`` names what is allowed. A name
    ending in "/" registers a family: ``make("gymnasium/CartPole-v1")`` calls the factory of
    "gymnasium/" with "CartPole-v1" first."""

    def __init__(self, kind: str):
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str, factory: Callable[..., T]) -> None:
        if name in self._factories:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._factories[name] = factory

    def names(self) -> list[str]:
        return sorted(self._factories)

    def family(self, name: str) -> str | None:
        """The registered family ("prefix/") that ``name`` belongs to, if it is not registered itself."""
        if name in self._factories:
            return None
        return next(
            (
                prefix
                for prefix in self._factories
                if prefix.endswith("/") and name.startswith(prefix) and name != prefix
            ),
            None,
        )

    def known(self) -> str:
        """The registered names, families as "prefix/<id>"."""
        families = ", ".join(f"{prefix}<id>" for prefix in self.names() if prefix.endswith("/"))
        return ", ".join(n for n in self.names() if not n.endswith("/")) + (f"; and {families}" if families else "")

    def unknown(self, name: str, known: list[str] | None = None, kind: str | None = None) -> str:
        """The message for a ``name`` that nothing here registers: the registered names closest to it
        ("did you mean"; a gym id without its family, e.g. "CartPole-v1", in each family's form), then
        every name (``known`` where the caller accepts more than this registry's, ``kind`` its word)."""
        names = [n for n in (known or self.names()) if not n.endswith("/")]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        if re.fullmatch(r"[\w.:-]+-v\d+", name):
            close = (
                [n for n in names if n.split("/", 1)[-1] == name]
                + [f"{p}{name}" for p in self.names() if p.endswith("/")]
                + close
            )
        listing = self.known() if known is None else ", ".join(known)
        hint = f"; did you mean {' or '.join(repr(n) for n in dict.fromkeys(close))}?" if close else ""
        return (
            f"unknown {kind or self.kind} {name!r}{hint} known: {listing}"
            if hint
            else f"unknown {kind or self.kind} {name!r}; known: {listing}"
        )

    def knows(self, name: str) -> bool:
        """Whether ``make(name)`` finds a factory (a registered name or a family member)."""
        return (name in self._factories and not name.endswith("/")) or self.family(name) is not None

    def factory(self, name: str) -> Callable[..., T]:
        if name in self._factories and not name.endswith("/"):
            return self._factories[name]
        family = self.family(name)
        if family is None:
            raise ValueError(self.unknown(name))
        return functools.partial(self._factories[family], name[len(family) :])

    def make(self, name: str, **kwargs) -> T:
        factory = self.factory(name)
        try:
            return factory(**kwargs)
        except TypeError as err:
            fixed = re.search(r"got multiple values for (?:keyword )?argument '(\w+)'", str(err))
            if fixed:  # the factory passes it itself: e.g. memory-planning/4x4's maze_size
                raise TypeError(
                    f"{self.kind} {name!r} fixes {fixed[1]} by its name; choose another {self.kind} to change it"
                ) from None
            raise TypeError(f"bad arguments for {self.kind} {name!r}: {err}") from None
