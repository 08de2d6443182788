"""The settings every learner shares (``ConfigRecord``) and those of the actor-critic learners
(``RunConfig``); each learner's config subclasses one. Every field is a flag of ``memrl train``."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from typing import ClassVar

from flax import linen as nn

from memrl.agents.agent_spec import AgentSpec
from memrl.envs.base import ENVS, Environment
from memrl.registry import declared_types, of_type, type_name
from memrl.settings import Count, Fraction, NonNegative, NonNegativeInt, Positive, allowed_of, flag_of

SEED_LIMIT = 2**32
"""seeds below this are distinct PRNG keys (``jax.random.PRNGKey`` keeps 32 bits of a seed)"""

SettingsByName = dict[str, int | float | bool | str]
"""a family member's settings by name, as the command line gives them (``env:gymnasium --env.id
CartPole-v1 --env.settings max_episode_steps 200``)"""


def import_modules(modules) -> None:
    """Import each of ``modules`` (a config's ``imports``), refusing one that cannot be imported."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ImportError(
                f"imports: cannot import {module!r} ({err}); it must be importable where the run trains "
                "(installed, or on PYTHONPATH)"
            ) from None
        except Exception as err:  # the user's module itself failed: say so in one line, naming it
            raise ImportError(f"imports: importing {module!r} raised {type(err).__name__}: {err}") from None


COMPONENT_MODULES = {"core": "cores", "env": "envs", "task": "tasks"}
"""each component field's module of memrl, whose ``make`` makes it by its registered name"""


def made_by_default(field: str, name: str):
    """The component field ``field``'s default: what ``name`` makes unless told (``Registry.default``:
    made once a process), the name kept in the field's metadata (``ConfigRecord.default_name``)."""

    def made():
        registry = importlib.import_module(f"memrl.{COMPONENT_MODULES[field]}").make.__self__
        return registry.default(name)

    return dataclasses.field(default_factory=made, metadata={"default_name": name})


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class ConfigRecord:
    """The settings every learner shares, the metrics it names, and the JSON record of its config.
    A config is checked once, when it is constructed (``validate``, from ``__post_init__``): a config
    that exists is one that can run. ``step_metric`` counts the steps (environment steps,
    sequences), ``score_metric`` is drawn in the curves and the progress bar, ``final_metric``
    summarises a run (mean over its last updates); the labels name them in tables and figures. A
    learner whose default differs for a shared field declares the field again with its own default."""

    core: nn.Module = made_by_default("core", "amrl-max")
    """the memory core, as its registered name makes it (``cores.make("lstm", hidden=128)``; memrl
    list names them); config.json records it as ``{"kind": "lstm", "hidden": 128}`` (``from_dict``).
    A supervised run also takes a task model (htm-pai)."""
    seed: int = 0
    """seed of the first run; the others use seed + 1, seed + 2, ..."""
    seeds: Count = 1
    """number of independent seeds"""
    total_steps: Count = 400_000
    """steps per seed, in the learner's unit (``step_label``)"""
    lr: Positive = 5e-4
    """learning rate"""
    max_grad_norm: Positive | None = 0.5
    """clip of the global gradient norm (None: no clipping)"""
    adam_eps: Positive = 1e-8
    """Adam's ε, added to sqrt(v) in the denominator (where the optimiser is Adam): 1e-8 as in Adam's
    paper, Mamba's and most supervised code; PPO's default is 1e-5 (CleanRL's and Stable-Baselines3's).
    A parameter whose gradients are far below ε barely moves (its step is about lr·g/ε): S6's scan
    parameters, whose gradients start near 1e-8, stay frozen at 1e-5 (``memrl analyze gradient-scale``
    shows each core's)"""
    updates_per_chunk: Count = 10
    """updates per compiled chunk; metrics, progress and checkpoints happen between chunks"""
    keep_every: NonNegativeInt = 0
    """also keep each seed's parameters every this many updates (a multiple of updates_per_chunk;
    0: only the last checkpoint), to choose one afterwards, e.g. the best on a validation split
    (``RunFolder.kept_params``)"""
    imports: tuple[str, ...] = ()
    """Python modules to import before the run is built, e.g. ``mypkg.envs``: where environments,
    tasks or cores of your own are registered (``memrl.envs.register``), so that ``memrl train``'s
    worker processes and ``memrl eval`` know them too"""
    init_params: str | None = None
    """a run folder whose last parameters each seed starts from (the same seed of that run; the
    optimiser starts afresh): a curriculum, e.g. a memory grown from a smaller one's run; the
    parameters must have this run's shapes"""

    learner: ClassVar[str]
    step_metric: ClassVar[str] = "env_steps"
    step_label: ClassVar[str] = "environment steps"
    score_metric: ClassVar[str] = "episode_return"
    score_label: ClassVar[str] = "episode return"
    final_metric: ClassVar[str] = "episode_return"
    final_label: ClassVar[str] = "final return"

    COMPONENTS: ClassVar[tuple[str, ...]] = ("core",)
    """the fields that hold a registered component whole (the core; a supervised run's task), each
    recorded as ``{"kind": NAME, SETTING: VALUE, ...}``"""
    SET_BY_THE_RUN: ClassVar[dict[str, tuple[str, ...]]] = {}
    """component -> its settings that the config's own fields give (a supervised run's ``batch_size``):
    neither recorded with the component nor flags of its subcommand"""

    @classmethod
    def set_by_the_run(cls, field: str) -> tuple[str, ...]:
        """The settings of the component ``field`` that the config's own fields give (``SET_BY_THE_RUN``)."""
        return cls.SET_BY_THE_RUN.get(field, ())

    def __post_init__(self):
        self.validate()

    def check_component(self, field: str) -> None:
        """Refuse a component that no registry here makes: its name or its record in its place say how
        to make it."""
        value = getattr(self, field)
        module = COMPONENT_MODULES[field]
        if isinstance(value, str):
            raise ValueError(
                f"{field} must be the {field} itself, made by its name: {field}=memrl.{module}.make({value!r}, "
                f"SETTING=VALUE, ...), got the name {value!r}"
            )
        if isinstance(value, dict):
            raise ValueError(
                f"{field} must be the {field} itself, made by its name (memrl.{module}.make), got a record {value!r}; "
                f"{type(self).__name__}.from_dict reads a config.json's"
            )
        self.registry_of(field, value)

    @classmethod
    def registries(cls, field: str) -> tuple:
        """The registries the component ``field`` may come from."""
        from memrl import cores

        return {"core": (cores.CORES,)}[field]

    @classmethod
    def default_name(cls, field: str) -> str:
        """The name of the component ``field`` that a config of this class has unless told."""
        return next(f.metadata["default_name"] for f in dataclasses.fields(cls) if f.name == field)

    @classmethod
    def default_component(cls, field: str):
        """The component ``field`` that a config of this class has unless told (``Registry.default``)."""
        name = cls.default_name(field)
        return cls.registry_for(field, name).default(name)

    @classmethod
    def registry_for(cls, field: str, name: str):
        """The registry that knows the component ``name`` of ``field``; refuses a name none knows."""
        registries = cls.registries(field)
        known = next((registry for registry in registries if registry.knows(name)), None)
        if known is None:  # one registry lists its own names (families as "gymnasium/<id>")
            names = [n for registry in registries for n in registry.names()] if len(registries) > 1 else None
            raise ValueError(registries[-1].unknown(name, names, kind=" or ".join(r.kind for r in registries)))
        return known

    @classmethod
    def registry_of(cls, field: str, made):
        """The registry whose entries build ``made``'s class, of those ``field`` may come from."""
        registry = next((r for r in cls.registries(field) if r.makes(made)), None)
        if registry is None:
            raise ValueError(
                f"{field} must be a registered {' or '.join(r.kind for r in cls.registries(field))} "
                f"(memrl list), got {made!r}"
            )
        return registry

    def name_of(self, field: str) -> str:
        """The registered name of the component ``field`` (``Registry.name_of``)."""
        return self.registry_of(field, getattr(self, field)).name_of(getattr(self, field))[0]

    @property
    def core_name(self) -> str:
        """The registered name of the core, as tables, folder names and summaries say."""
        return self.name_of("core")

    def import_modules(self) -> None:
        """Import the modules of ``imports`` (they register what the config names)."""
        import_modules(self.imports)

    def validate(self):
        """Refuse settings of another type or outside their range and components that no registry
        makes, naming the field and what is allowed (each learner's config adds the settings that
        clash); returns the config."""
        self.check_types()
        self.import_modules()
        for field in self.COMPONENTS:
            self.check_component(field)
        self.check_finite()
        self.check_ranges()
        if self.total_steps < self.steps_per_update:
            raise ValueError(
                f"total_steps ({self.total_steps}) is less than one update ({self.steps_per_update} {self.step_label})"
            )
        if not 0 <= self.seed <= SEED_LIMIT - self.seeds:
            raise ValueError(
                f"seed must lie in [0, {SEED_LIMIT - self.seeds:,}] for {self.seeds} seed(s) (JAX's PRNG keys hold 32 bits: "
                f"seeds 2^32 apart are one key), got {self.seed} ({flag_of('seed')})"
            )
        if self.keep_every % self.updates_per_chunk:
            raise ValueError(
                f"keep_every ({self.keep_every}) must be a multiple of updates_per_chunk ({self.updates_per_chunk}): "
                f"parameters are kept between chunks ({flag_of('keep_every')})"
            )
        return self

    def check_types(self) -> None:
        """Refuse a setting of another type than its field's (a config read from an edited
        config.json, or built in Python with ``lr="1e-3"``), naming the field and its type; the
        components are ``check_component``'s."""
        hints = declared_types(type(self))
        for field in dataclasses.fields(self):
            if field.name in self.COMPONENTS:
                continue
            value = getattr(self, field.name)
            if not of_type(value, hints[field.name]):
                raise ValueError(
                    f"{field.name} must be {type_name(hints[field.name])}, got {value!r} ({flag_of(field.name)})"
                )

    def check_ranges(self) -> None:
        """Refuse a setting outside what its type allows (``settings.Count``, ``Positive``,
        ``Fraction``, ...: ``Allowed``), naming the field, what is allowed and its flag; None, where
        the type admits it, turns a setting off."""
        hints = declared_types(type(self))
        for field in dataclasses.fields(self):
            allowed, value = allowed_of(hints[field.name]), getattr(self, field.name)
            if allowed is not None and value is not None and not allowed.fits(value):
                raise ValueError(f"{field.name} must be {allowed.what}, got {value!r} ({flag_of(field.name)})")

    def check_finite(self) -> None:
        """Refuse an infinite or NaN number in any setting, the components' included."""
        for field in dataclasses.fields(self):
            if field.name in self.COMPONENTS:
                named = [
                    (f"{field.name} setting {key} (--{field.name}.{key})", value)
                    for key, value in self.component_record(field.name).items()
                ]
            else:
                named = [(f"{field.name} ({flag_of(field.name)})", getattr(self, field.name))]
            for where, number in named:
                if isinstance(number, float) and not math.isfinite(number):
                    raise ValueError(f"{where} must be a finite number, got {number}")

    @property
    def trained_on(self) -> str:
        """What the run trains on (an environment or a task), as summaries, tables and folder names say."""
        raise NotImplementedError

    @property
    def steps_per_update(self) -> int:
        raise NotImplementedError

    @property
    def num_updates(self) -> int:
        """Updates in a run of ``total_steps``: whole updates, rounded down (``rounding_note``)."""
        return self.total_steps // self.steps_per_update

    def rounding_note(self) -> str:
        """A line saying what a ``total_steps`` that is not a multiple of one update's steps becomes
        ("" when it is one)."""
        trained = self.num_updates * self.steps_per_update
        if trained == self.total_steps:
            return ""
        return (
            f"total_steps {self.total_steps:,} is not a multiple of one update's {self.steps_per_update:,} {self.step_label}: "
            f"each seed trains {trained:,} ({self.num_updates:,} updates)"
        )

    def seed_list(self) -> list[int]:
        """The seeds of the run."""
        return [self.seed + i for i in range(self.seeds)]

    def record(self) -> dict:
        """The config as config.json holds it: each field's value, each component as its registry's
        record (``{"kind": "lstm", "hidden": 128, ...}``: ``component_record``)."""
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        return json.loads(json.dumps(fields | {field: self.component_record(field) for field in self.COMPONENTS}))

    def component_record(self, field: str) -> dict:
        """The component ``field`` as config.json records it (``Registry.record``), bar what the run sets."""
        record = self.registry_of(field, getattr(self, field)).record(getattr(self, field))
        return {k: v for k, v in record.items() if k not in self.set_by_the_run(field)}

    def __eq__(self, other) -> bool:
        """Configs are equal when config.json records them alike: the same run (an environment made
        twice by the same name and settings is the same environment, though not the same object)."""
        return type(other) is type(self) and other.record() == self.record()

    def __hash__(self) -> int:
        return hash(self.to_json())

    def to_json(self) -> str:
        """The config as sorted, indented JSON."""
        return json.dumps(self.record(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict):
        """The config from its JSON record (``record``; earlier formats are read through
        ``run.config_upgrade.upgrade``): each component made from its record (``Registry.from_record``).
        Unknown fields are refused, lists become tuples."""
        data = dict(data)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields {sorted(unknown)}")
        for f in dataclasses.fields(cls):
            if f.name in data and isinstance(data[f.name], list):
                data[f.name] = tuple(data[f.name])
        import_modules(data.get("imports", ()))  # they may register the components named
        for field in cls.COMPONENTS:
            record = data.get(field)
            if isinstance(record, dict):
                kind = record.get("kind")
                if not isinstance(kind, str):
                    raise ValueError(f'a {field} record is {{"kind": NAME, settings...}}, got {record!r}')
                data[field] = cls.made_from_record(field, record)
        return cls(**data)

    @classmethod
    def made_from_record(cls, field: str, record: dict):
        """The component ``field`` that its config record (``{"kind": NAME, SETTING: VALUE, ...}``)
        describes (its registry's ``make`` refuses a setting the name does not have)."""
        return cls.registry_for(field, record["kind"]).from_record(record)


@dataclasses.dataclass(frozen=True, eq=False)  # equal when recorded alike: ConfigRecord.__eq__
class RunConfig(AgentSpec, ConfigRecord):
    """One environment, one memory core, one actor-critic agent, several seeds (PPO's and IMPALA's
    shared settings; the agent's are ``AgentSpec``'s fields)."""

    env: Environment = made_by_default("env", "tmaze/T-LN")
    """the environment, as its registered name makes it (``envs.make("tmaze/T-LN", maze_length=120)``;
    memrl list names them); config.json records it as ``{"kind": "tmaze/T-LN", "maze_length": 120}``"""
    num_envs: Count = 32
    """parallel environments per seed"""
    rollout_len: Count = 100
    """steps per environment per update (truncated-BPTT length)"""
    gamma: Fraction = 0.98
    reward_scale: Positive = 1.0
    """the rewards are multiplied by this in the losses (returns are reported as the environment
    gives them): a value head learns targets of order one (Pendulum's rewards reach −16 a step)"""
    policy_coef: NonNegative = 1.0
    """weight of the policy-gradient loss (HTM's "V-trace loss weight")"""
    value_coef: NonNegative = 0.5
    """weight of the value (baseline) loss ½ mean (target − v)²"""
    entropy_coef: NonNegative = 0.01
    reconstruction_coef: NonNegative = 0.0
    """weight of the self-supervised loss of decoding the current image and tokens from the memory"""
    policy_lag: NonNegativeInt = 0
    """act with the parameters of this many updates ago (a distributed IMPALA's actor lag); with 1 or
    more, each update's rollout is collected while the update before it learns, on a second core
    where the run has one (``run/pipeline.py``): the same numbers, sooner"""

    GREEDY_ONLY: ClassVar[bool] = False
    """whether the agent's outputs are values to act greedily on, not a distribution to sample (R2D2's
    Q-values): evaluation then acts greedily and a loaded policy refuses to sample"""

    __eq__ = ConfigRecord.__eq__  # not AgentSpec's, which would compare the agent's fields alone
    __hash__ = ConfigRecord.__hash__

    COMPONENTS: ClassVar[tuple[str, ...]] = ("core", "env")

    @classmethod
    def registries(cls, field: str) -> tuple:
        """The core is a memory core; the environment a registered environment."""
        return (ENVS,) if field == "env" else super().registries(field)

    def validate(self):
        """As ``ConfigRecord.validate``, and the encoder: conv layers that agree."""
        super().validate()
        self.check_agent()
        return self

    @property
    def env_name(self) -> str:
        """The registered name of the environment."""
        return self.name_of("env")

    @property
    def agent(self):
        """The actor-critic of this config: its ``core`` between the encoder and heads of its
        ``AgentSpec`` fields (taken whole), sized for the environment's actions and token parts."""
        from memrl.agents import ActorCritic
        from memrl.agents.distributions import for_env

        return ActorCritic(
            core=self.core,
            actions=for_env(self.env),
            spec=AgentSpec(**{field.name: getattr(self, field.name) for field in dataclasses.fields(AgentSpec)}),
            token_vocab=tuple(sorted(self.env.token_vocab.items())),
            reconstruct=self.reconstruction_coef > 0,
        )

    @property
    def trained_on(self) -> str:
        return self.env_name

    @property
    def steps_per_update(self) -> int:
        """Environment steps collected per update (num_envs × rollout_len)."""
        return self.num_envs * self.rollout_len
