"""A name -> factory registry shared by cores, environments and experiments."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import re
import sys
import types
import typing
from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np
import typeguard

T = TypeVar("T")

LINEN_FIELDS = {"parent", "name"}
"""a Linen module's own fields, which no registered setting is"""

RECORD_SCALARS = (bool, int, float, str, type(None))


def recordable(value) -> bool:
    """Whether a config record can hold ``value``: a number, string, bool or None, or a tuple of them."""
    return all(isinstance(v, RECORD_SCALARS) for v in (value if isinstance(value, tuple) else (value,)))


def refuse_unrecordable(kind: str, name: str, settings: dict) -> None:
    """Refuse a setting of ``kind`` ``name`` that a config record cannot hold (``recordable``)."""
    for key, value in settings.items():
        if not recordable(value):
            raise ValueError(f"{kind} {name} setting {key!r} = {value!r} is not a value a config record can hold")


def same_value(given, default) -> bool:
    """Whether a setting ``given`` is its ``default``: equal values of one type (``1`` is not
    ``1.0`` or ``True``), or arrays of equal shapes and values."""
    if hasattr(given, "__array__") or hasattr(default, "__array__"):  # NumPy's or JAX's
        return np.shape(given) == np.shape(default) and bool(np.all(np.asarray(given) == np.asarray(default)))
    return type(given) is type(default) and given == default


def of_type(value, hint) -> bool:
    """Whether ``value`` is of the declared type ``hint`` (typeguard's check, which tyro itself uses:
    every item of a tuple; an int is a float, as PEP 484 has it)."""
    try:
        typeguard.check_type(value, hint, collection_check_strategy=typeguard.CollectionCheckStrategy.ALL_ITEMS)
    except typeguard.TypeCheckError:
        return False
    return True


@functools.cache  # a class's annotations never change
def declared_types(cls) -> dict:
    """The declared type of each field of the dataclass ``cls``, ranges beside types kept (``settings.Count``)."""
    return typing.get_type_hints(cls, include_extras=True)


def type_name(hint) -> str:
    """How a refusal names a declared type: "an integer", "a number or None", "integers", ..."""
    if typing.get_origin(hint) is typing.Annotated:  # a range beside the type (``settings.Count``)
        return type_name(typing.get_args(hint)[0])
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return " or ".join(type_name(option) for option in typing.get_args(hint))
    names = {type(None): "None", bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    if hint in names:
        return names[hint]
    if typing.get_origin(hint) is tuple:
        return {int: "integers", str: "strings", float: "numbers"}.get(typing.get_args(hint)[0], "a list")
    return getattr(hint, "__name__", str(hint))


def held_settings(made) -> dict:
    """Every setting of a registered dataclass (a core, a task model): its init fields but Linen's own."""
    return {f.name: getattr(made, f.name) for f in dataclasses.fields(made) if f.init and f.name not in LINEN_FIELDS}


LISTED_WITH_A_HINT = 20
"""beside a "did you mean", a refusal lists the known names only up to this many"""


@dataclasses.dataclass(frozen=True)
class Entry(Generic[T]):
    """What a registered name makes: ``build`` (a class, or a function that makes one) with the
    settings the name ``fixed`` (``amrl-max``: ``aggregator="max"``) and its own ``defaults``,
    which a user may change (``trxl-topk``: ``top_k=8``)."""

    build: Callable[..., T]
    fixed: dict = dataclasses.field(default_factory=dict)
    defaults: dict = dataclasses.field(default_factory=dict)
    small: dict = dataclasses.field(default_factory=dict)
    """where the defaults are a paper's sizes too large for a CPU: settings that make it small
    enough to train in minutes on one (``htm``: 15.8M parameters by default, 0.02M small)"""


class Registry(Generic[T]):
    """Factories by name; ``register`` refuses duplicates, ``make`` names what is allowed. A name
    ending in "/" registers a family: ``make("gymnasium/CartPole-v1")`` calls the factory of
    "gymnasium/" with "CartPole-v1" first."""

    def __init__(self, kind: str, modules: tuple[str, ...] = ()):
        self.kind = kind
        self.modules = modules
        """modules that register entries here, imported when the registry is first asked (environments:
        importing them starts JAX's backend, which a process must be able to configure before)"""
        self._unimported = modules
        self._registered: dict[str, Entry[T]] = {}
        self._own: set[str] = set()
        """the names ``modules`` register (memrl's own, which every process knows)"""
        self._defaults: dict[str, T] = {}

    @property
    def _factories(self) -> dict[str, Entry[T]]:
        """The registered entries, once ``modules`` have registered theirs. The modules are imported
        with JAX evaluating eagerly: a registry first asked inside a traced function (``jax.jit``,
        ``eval_shape``) would otherwise leave their module-level arrays as that trace's tracers."""
        if self._unimported:
            import jax

            modules, self._unimported = self._unimported, ()
            with jax.ensure_compile_time_eval():
                for module in modules:
                    importlib.import_module(module)
        return self._registered

    def _importing_a_listed_module(self) -> bool:
        """Whether one of ``modules`` is being imported now (its spec's ``_initializing``, which
        CPython's import machinery sets while a module runs)."""
        return any(
            getattr(getattr(sys.modules.get(module), "__spec__", None), "_initializing", False)
            for module in self.modules
        )

    def register(
        self,
        name: str,
        build: Callable[..., T],
        fixed: dict | None = None,
        defaults: dict | None = None,
        small: dict | None = None,
    ):
        """Register ``build`` under ``name``, with the settings the name fixes, its own defaults and
        its small size (``Entry``); refuses a name registered before, ``modules``' names included.
        One of ``modules`` registers without importing the others (it may be imported on its own,
        and a sibling that imports it back would find it half made)."""
        own = self._importing_a_listed_module()
        if not own:
            self._factories  # noqa: B018 (imports ``modules``, so that a name they register is refused)
        if name in self._registered:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._registered[name] = Entry(build, dict(fixed or {}), dict(defaults or {}), dict(small or {}))
        if own:
            self._own.add(name)

    def entry(self, name: str) -> Entry[T]:
        """What ``name`` registered (``register``); a family member's is its family's."""
        if name in self._factories:
            return self._factories[name]
        family = self.family(name)
        if family is None:
            raise ValueError(self.unknown(name))
        return self._factories[family]

    def fixed(self, name: str) -> dict:
        """The settings ``name`` fixes."""
        return self.entry(name).fixed

    def small(self, name: str) -> dict:
        """The settings that make ``name`` small enough to train in minutes on a CPU where its
        defaults are a paper's larger sizes (``make(name, **small(name))``); empty where the
        defaults already are."""
        return dict(self.entry(name).small)

    def refuse_fixed(self, name: str, settings, where: str = "") -> None:
        """Refuse ``settings`` (names) that ``name`` fixes, saying ``where`` they were given."""
        clash = sorted(set(settings) & set(self.fixed(name)))
        if clash:
            raise ValueError(
                f"{self.kind} {name!r} fixes {', '.join(clash)} by its name{where}; choose another {self.kind} to change it"
            )

    def refuse_unknown(self, name: str, settings, where: str = "") -> None:
        """Refuse ``settings`` (names) that ``name``'s entry (a dataclass: a core, a task model) does
        not have, or that its name fixes, listing those it has."""
        self.refuse_fixed(name, settings, where)
        if self.family(name):  # a family member's settings are its own (gymnasium.make checks them)
            return
        known = list(self.defaults(name))
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(
                f"{self.kind} {name!r} has no setting {', '.join(map(repr, unknown))}{where}; its settings: {', '.join(known)}"
            )

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
        every name (``known`` where the caller accepts more than this registry's, ``kind`` its word),
        or, beside a suggestion, a pointer to ``memrl list`` where there are more than ``LISTED_WITH_A_HINT``."""
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
        if hint and len(names) > LISTED_WITH_A_HINT:
            return f"unknown {kind or self.kind} {name!r}{hint} (`memrl list` names all {len(names)} known)"
        return (
            f"unknown {kind or self.kind} {name!r}{hint} known: {listing}"
            if hint
            else f"unknown {kind or self.kind} {name!r}; known: {listing}"
        )

    def knows(self, name: str) -> bool:
        """Whether ``make(name)`` finds a factory (a registered name or a family member)."""
        return (name in self._factories and not name.endswith("/")) or self.family(name) is not None

    def factory(self, name: str) -> Callable[..., T]:
        """What ``name`` calls to make its entry: the registered ``build`` with the name's fixed
        settings and defaults bound (a family's with the member's id first)."""
        if name in self._factories and not name.endswith("/"):
            entry = self._factories[name]
            if not entry.fixed and not entry.defaults:
                return entry.build
            return lambda **settings: entry.build(**entry.fixed, **{**entry.defaults, **settings})
        family = self.family(name)
        if family is None:
            raise ValueError(self.unknown(name))
        return functools.partial(self._factories[family].build, name[len(family) :])

    def makes(self, made) -> bool:
        """Whether an entry here builds ``made``'s class."""
        return any(entry.build is type(made) for entry in self._factories.values())

    def builds(self, name: str, made) -> bool:
        """Whether the registered name ``name`` makes ``made``'s class: its build is that class (or
        one of its classmethods); a function's, what it makes by default."""
        build = self._factories[name].build
        made_by_name = getattr(build, "__self__", build)
        if isinstance(made_by_name, type):
            return made_by_name is type(made)
        return type(self.default(name)) is type(made)

    def name_of(self, made) -> tuple[str, dict]:
        """The registered name and the settings given that make ``made`` (``LSTM(hidden=512)`` ->
        ``("lstm", {"hidden": 512})``): a family member's id and settings; else, of the names that make
        its class with what they fix, memrl's own first (a run folder of one reads in any process, with
        no user module imported), then the one whose defaults leave the fewest settings to give
        (``lstm``, not ``trxl-topk``; MC-LSN's maze, not MC-LS's with its noise), and the settings that
        differ from that name's defaults. Refuses what no name makes."""
        settings = self.settings(made)
        family = next((p for p in self.names() if p.endswith("/") and self._factories[p].build is type(made)), None)
        if family is not None:
            return family + settings.pop("id"), settings
        candidates = []
        for name in self.names():
            entry = self._factories[name]
            if name.endswith("/") or not all(same_value(settings.get(k), v) for k, v in entry.fixed.items()):
                continue
            if self.builds(name, made):
                defaults = self.settings(self.default(name))
                given = {
                    k: v for k, v in settings.items() if k not in entry.fixed and not same_value(v, defaults.get(k))
                }
                candidates.append((name not in self._own, len(given), name, given))
        if not candidates:
            raise ValueError(
                f"no registered {self.kind} makes a {type(made).__name__} like this one; register its class "
                f"under a name, or make it by a registered name (memrl list)"
            )
        *_, name, given = min(candidates, key=lambda c: c[:3])
        return name, given

    def settings(self, made) -> dict:
        """Every setting of ``made`` (``held_settings``)."""
        return held_settings(made)

    def defaults(self, name: str) -> dict:
        """The settings ``name`` has unless given, but those its name fixes (a family member's are its own)."""
        if self.family(name):
            return {}
        return {k: v for k, v in self.settings(self.default(name)).items() if k not in self.fixed(name)}

    def record(self, made) -> dict:
        """``made`` as a config record holds it: ``{"kind": NAME, SETTING: VALUE, ...}`` with every
        setting the name does not fix (numbers, strings, bools, None and tuples of them)."""
        name, _ = self.name_of(made)
        settings = {k: v for k, v in held_settings(made).items() if k not in self.fixed(name)}
        refuse_unrecordable(self.kind, name, settings)
        return {"kind": name, **settings}

    def from_record(self, record: dict) -> T:
        """What ``record`` (``record``'s form) describes, its lists read as tuples."""
        if not isinstance(record, dict) or not isinstance(record.get("kind"), str):
            raise ValueError(f'a {self.kind} record is {{"kind": NAME, settings...}}, got {record!r}')
        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in record.items() if k != "kind"}
        return self.make(record["kind"], **settings)

    def default(self, name: str) -> T:
        """``make(name)``: what ``name`` makes unless told, made once (a registered name's entry never
        changes; its components are frozen), so that naming, checking and recording a component
        compare with one default instead of building it again each time."""
        if name not in self._defaults:
            made = self.make(name)
            self.check_default(name, made)
            self._defaults[name] = made
        return self._defaults[name]

    def check_default(self, name: str, made: T) -> None:
        """Refuse ``made``, what ``name`` makes unless told, where it cannot stand for the name (checked once)."""

    def make(self, name: str, **settings) -> T:
        """``name``'s entry made with ``settings``; refuses a setting the name fixes."""
        self.refuse_fixed(name, settings)
        return self.factory(name)(**settings)


class ComponentRegistry(Registry[T]):
    """The registry of one kind of a run's components (cores, tasks, task models; environments:
    ``envs.base.EnvironmentRegistry``), whose entries are made from settings by name: ``make``
    refuses a setting the name does not have, listing those it has, and a value of another type
    than the setting's field declares."""

    def make(self, name: str, **settings) -> T:
        """``name``'s entry made with ``settings``; refuses what ``check_settings`` refuses."""
        if settings:  # the name's default (``default``) has none to check
            self.check_settings(name, settings)
        return super().make(name, **settings)

    def check_default(self, name: str, made: T) -> None:
        """Refuse a name that fixes or defaults a keyword that is no setting of what it makes (a
        factory's keyword that decides several fields): ``name_of`` could not tell the name from
        what it made."""
        entry = self.entry(name)
        strays = sorted((set(entry.fixed) | set(entry.defaults)) - set(self.settings(made)))
        if strays and not self.family(name):
            raise ValueError(
                f"{self.kind} {name!r} fixes or defaults {', '.join(strays)}, which a {type(made).__name__} does not "
                f"hold; register it with its settings as the class holds them: {', '.join(self.settings(made))}"
            )

    def setting_types(self, name: str) -> dict:
        """The declared type of each setting of ``name``'s entry (its class's fields)."""
        return declared_types(type(self.default(name)))

    def check_settings(self, name: str, settings: dict, where: str = "") -> None:
        """Refuse ``settings`` that ``name`` does not have or fixes (``refuse_unknown``), or whose
        values are not of the types their fields declare, naming the setting, the type and ``where``
        they were given ("--stages ..."); a family member's settings are its own library's to check."""
        at = f" ({where})" if where else ""
        self.refuse_unknown(name, settings, at)
        if self.family(name):
            return
        declared = self.setting_types(name)
        for key, value in settings.items():
            if not of_type(value, declared[key]):
                raise ValueError(
                    f"{self.kind} {name!r} setting {key!r} must be {type_name(declared[key])}, got {value!r}{at}"
                )

    def changed(self, made: T, **settings) -> T:
        """``made`` with ``settings`` over its own, made again by its name (``envs.ENVS.changed(env,
        maze_length=120)``); refuses a setting its name does not have or fixes."""
        return self.from_record(self.record(made) | settings)
