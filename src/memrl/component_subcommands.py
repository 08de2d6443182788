"""A run's components as subcommands of ``memrl train`` (and of ``memrl eval``, over the run's, and
``memrl sweep``, over the spec's base: ``RunComponents``): ``core:NAME --core.SETTING VALUE``,
``env:NAME --env.SETTING VALUE`` (and a supervised run's ``task:NAME --task.SETTING VALUE``), one
subcommand per registered name.

tyro parses each learner's config and each component as its own class, through one rule of its
constructor registry (``Subcommands.flags``): a registered name's flags are its settings as tyro
reads them (``settings.settings_read_by_tyro``: the fields of what it makes, their docstrings the
help, an environment's params' fields beside its own, less those its name fixes and those the run
gives); what tyro parses is made by that name from the settings that differ from the name's
defaults, and checked then.
``component_flags_spelled`` writes the earlier spelling, ``--core NAME --core-args SETTING VALUE``,
as this one."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
from typing import Annotated, Union

import tyro
from tyro.constructors import MISSING, ConstructorRegistry, StructConstructorSpec, StructFieldSpec, StructTypeInfo

from memrl.envs.base import EnvironmentRegistry
from memrl.learn.parsed_components import RunComponents, made, refused_in_one_line
from memrl.learn.run_config import ConfigRecord, SettingsByName
from memrl.registry import same_value
from memrl.settings import READ_AS_IT_IS, fields_read_by_tyro, plain_help, settings_read_by_tyro


@dataclasses.dataclass(frozen=True)
class Unread:
    """An environment the command does not name: its subcommand is listed, its settings are not read
    (reading every environment's would take seconds; gymnax's import most of them)."""


class Subcommands:
    """How tyro reads one command's configs and components (``rules``, given to ``tyro.cli``): a
    learner's config (``ConfigRecord``: a subcommand per learner), its fields, its components each a
    subcommand per registered name (``choices``), and a saved run's (``RunComponents``)."""

    def __init__(
        self,
        words: frozenset[str] = frozenset(),
        saved: ConfigRecord | None = None,
        learners: dict | None = None,
        default_learner: str | None = None,
    ):
        self.words = words
        """the command's words: an environment is read where they name it (``env:NAME``) or it is the default"""
        self.saved = saved
        """the saved run the command starts from (``memrl train --config``, ``memrl eval RUN``, a sweep's base)"""
        self.learners = learners or {}
        """``memrl train``'s learners: name -> config class"""
        self.default_learner = default_learner
        """the learner of ``memrl train`` without one named (the saved run's where there is one)"""
        self.named: dict[int, tuple] = {}
        """id of each subcommand's default -> (registry, name, settings the run gives)"""
        self.families: dict[type, tuple] = {}
        """a family's class (gymnasium's) -> (registry, family, the saved member's id and settings)"""
        self.rules = ConstructorRegistry()
        self.rules.struct_rule(self.flags)

    def choices(self, config_class, field: str, saved: ConfigRecord | None):
        """The components ``field`` of ``config_class`` may be, one tyro subcommand each (``core:lstm``,
        ``env:tmaze/T-LN``; a family of environments, ``env:gymnasium --env.id CartPole-v1``), each
        defaulting to what its name makes (the saved run's under its own name)."""
        options = []
        saved_one = getattr(saved, field) if saved is not None else None
        default = saved.name_of(field) if saved is not None else config_class.default_name(field)
        by_the_run = config_class.set_by_the_run(field)
        for registry in config_class.registries(field):
            for name in registry.names():
                subcommand = name.rstrip("/")
                own = name == default or (name.endswith("/") and default.startswith(name))
                config = dict(name=subcommand, description=summary(registry, name))
                if isinstance(registry, EnvironmentRegistry) and not (own or f"{field}:{subcommand}" in self.words):
                    option = Annotated[Unread, tyro.conf.subcommand(**config)]
                elif name.endswith("/"):
                    member = registry.name_of(saved_one) if own and saved_one is not None else None
                    family = registry.entry(name).build
                    self.families[family] = (registry, name, member)
                    option = Annotated[
                        family, tyro.conf.subcommand(**config, **({} if member is None else {"default": saved_one}))
                    ]
                else:
                    component = saved_one if own and saved_one is not None else registry.default(name)
                    self.named[id(component)] = (registry, name, by_the_run)
                    option = Annotated[type(component), tyro.conf.subcommand(**config, default=component)]
                options.append(option)
        return Annotated[Union[tuple(options)], tyro.conf.FlagConversionOff]  # noqa: UP007

    def flags(self, info: StructTypeInfo) -> StructConstructorSpec | None:
        """tyro's rule for what this command reads: a learner's config, a saved run's components, a
        component's subcommand (its flags: ``named``, ``families``, made by its name); None for the rest."""
        if READ_AS_IT_IS in info.markers:
            return None
        if info.type is ConfigRecord:
            return self.learner_flags()
        if info.type is RunComponents:
            return self.run_components_flags()
        if isinstance(info.type, type) and issubclass(info.type, ConfigRecord):
            return self.config_flags(info)
        if info.type in self.families:
            return self.member_flags(*self.families[info.type])
        if id(info.default) in self.named:
            return self.component_flags(info, *self.named[id(info.default)])
        return None

    @staticmethod
    def component_flags(info: StructTypeInfo, registry, name: str, by_the_run: tuple[str, ...]):
        """The flags of the component ``name`` (``info``: its class and default), made by that name
        from the settings that differ from its defaults."""
        fields = settings_read_by_tyro(info, (*registry.fixed(name), *by_the_run))
        defaults = registry.defaults(name)

        def made_by_name(**settings):
            given = {k: v for k, v in settings.items() if not same_value(v, defaults.get(k))}
            return registry.make(name, **given)

        return StructConstructorSpec(instantiate=refused_in_one_line(made_by_name), fields=tuple(fields))

    def learner_flags(self) -> StructConstructorSpec:
        """``memrl train``'s learners, a subcommand each, the saved run's (else ``default_learner``'s)
        the one taken where none is named (defaulting to the saved run's settings)."""
        options = []
        for learner, config_class in self.learners.items():
            own = {"default": self.saved} if self.saved is not None and self.saved.learner == learner else {}
            described = plain_help(" ".join((config_class.__doc__ or "").split()))
            options.append(
                Annotated[config_class, tyro.conf.subcommand(learner, description=described, prefix_name=False, **own)]
            )
        chosen = Annotated[Union[tuple(options)], tyro.conf.arg(name="")]  # noqa: UP007
        default = self.saved if self.saved is not None else self.learners[self.default_learner]()
        return StructConstructorSpec(
            instantiate=lambda learner: learner, fields=(StructFieldSpec("learner", chosen, default),)
        )

    def config_flags(self, info: StructTypeInfo) -> StructConstructorSpec:
        """A learner's config: its fields as tyro reads them, each component a subcommand per name
        (``choices``), defaulting to the saved run's (or the learner's); made and checked at once."""
        config_class = info.type
        saved = info.default if isinstance(info.default, config_class) else None
        fields = [
            dataclasses.replace(field, type=self.choices(config_class, field.name, saved))
            if field.name in config_class.COMPONENTS
            else field
            for field in fields_read_by_tyro(info)
        ]

        def config(**settings):
            return config_class(**{name: made(value) for name, value in settings.items()})

        return StructConstructorSpec(instantiate=refused_in_one_line(config), fields=tuple(fields))

    def run_components_flags(self) -> StructConstructorSpec:
        """The saved run's components, each defaulting to its own (none without a saved run)."""
        config_class = type(self.saved)
        fields = [
            StructFieldSpec(field, self.choices(config_class, field, self.saved), getattr(self.saved, field))
            for field in (config_class.COMPONENTS if self.saved is not None else ())
        ]
        return StructConstructorSpec(instantiate=lambda **parsed: RunComponents(parsed), fields=tuple(fields))

    @staticmethod
    def member_flags(registry, family: str, saved: tuple[str, dict] | None) -> StructConstructorSpec:
        """A family member's flags: its id and its settings by name (its own library checks them); a
        saved run's member's settings stay with its id, and those given change them."""
        saved_id, saved_settings = (None, {}) if saved is None else (saved[0][len(family) :], saved[1])

        def member(id: str, settings: dict):
            return registry.make(family + id, **({**saved_settings, **settings} if id == saved_id else settings))

        fields = (
            StructFieldSpec(
                "id", str, MISSING if saved_id is None else saved_id, f"the environment's id ({family}<id>)"
            ),
            StructFieldSpec("settings", SettingsByName, {}, "its settings: SETTING VALUE ..."),
        )
        return StructConstructorSpec(instantiate=refused_in_one_line(member), fields=fields)


@functools.cache  # a registered name's entry never changes; every learner's config lists every name
def summary(registry, name: str) -> str:
    """One line for a component's subcommand: the title of its module's docstring, its class (where
    the name builds one) and what its name fixes."""
    build = registry.entry(name).build
    made = getattr(build, "__self__", build)  # an environment's class, of its from_settings
    title = plain_help(
        (sys.modules[made.__module__].__doc__ or "").strip().split("\n")[0].split(" (")[0].rstrip(".,;:")
    )
    fixed = [f"{k}={v!r}" for k, v in registry.fixed(name).items()]
    parts = ([made.__name__] if isinstance(made, type) else []) + fixed
    return f"{title} ({', '.join(parts)})" if parts else title


def component_flags_spelled(argv: list[str], config_class, saved: ConfigRecord | None) -> list[str]:
    """``memrl train``'s ``argv`` with each component's earlier spelling, ``--core NAME`` and
    ``--core-args SETTING VALUE ...``, written as its subcommand, ``core:NAME --core.SETTING VALUE
    ...`` (settings of the component named, else of the saved run's, else of the learner's default)."""
    for field in config_class.COMPONENTS:
        argv = flags_spelled(argv, field, config_class, saved)
    return argv


def is_flag_or_subcommand(word: str, config_class) -> bool:
    """Whether ``word`` of ``argv`` is a flag or a component's subcommand (``core:lstm``), not a value."""
    return word.startswith("--") or any(word.startswith(f"{field}:") for field in config_class.COMPONENTS)


def flags_spelled(argv: list[str], field: str, config_class, saved: ConfigRecord | None) -> list[str]:
    """``component_flags_spelled`` for the component ``field``."""
    rest, name, settings = [], None, None
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag == f"--{field}" or flag.startswith(f"--{field}="):
            name = flag.split("=", 1)[1] if "=" in flag else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in flag else 2
        elif flag == f"--{field}-args":
            values = list(itertools.takewhile(lambda a: not is_flag_or_subcommand(a, config_class), argv[i + 1 :]))
            if len(values) % 2:
                raise ValueError(f"--{field}-args takes SETTING VALUE pairs, got {' '.join(values) or 'nothing'}")
            settings = dict(zip(values[::2], values[1::2]))
            i += 1 + len(values)
        else:
            rest.append(flag)
            i += 1
    chosen = next((a.split(":", 1)[1] for a in rest if a.startswith(f"{field}:")), None)
    if chosen is not None and not any(f"{chosen}/" in r.names() for r in config_class.registries(field)):
        config_class.registry_for(field, chosen)  # refuses an unknown name, with the names closest to it
    if name is None and settings is None:
        return argv
    if name is not None and chosen is not None:
        raise ValueError(f"--{field} {name} and {field}:{chosen} both name the {field}; give one")
    name = name or chosen or (saved.name_of(field) if saved is not None else config_class.default_name(field))
    keys = [k.replace("-", "_") for k in settings or {}]
    by_the_run = sorted(set(keys) & set(config_class.set_by_the_run(field)))
    if by_the_run:
        flags = ", ".join("--" + k.replace("_", "-") for k in by_the_run)
        raise ValueError(f"give {', '.join(by_the_run)} with {flags}, not as a {field} setting")
    config_class.registry_for(field, name).refuse_unknown(name, keys, f" (--{field}-args)")
    rest = [a for a in rest if not a.startswith(f"{field}:")]
    return rest + subcommand_spelled(config_class, field, name, settings or {})


def subcommand_spelled(config_class, field: str, name: str, settings: dict) -> list[str]:
    """``core:NAME --core.SETTING VALUE ...`` for the component ``name`` of ``field`` with
    ``settings``; a family member's ``env:gymnasium --env.id ID --env.settings SETTING VALUE ...``."""
    family = config_class.registry_for(field, name).family(name)
    if family is None:
        return [f"{field}:{name}"] + [word for key, value in settings.items() for word in (f"--{field}.{key}", value)]
    words = [f"{field}:{family.rstrip('/')}", f"--{field}.id", name[len(family) :]]
    return words + ([f"--{field}.settings", *itertools.chain(*settings.items())] if settings else [])
