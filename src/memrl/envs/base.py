"""The environment API (gymnax-style, pure and jittable) and the environment registry.

    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)

``step`` auto-resets: when ``done``, the returned obs and state are those of a fresh episode and
``info["final_obs"]`` holds the last observation of the finished one. ``info["terminated"]`` and
``info["truncated"]`` are kept apart (done = terminated | truncated). Actions are int32 arrays of
shape [len(action_dims)], one entry per discrete action component; an environment with continuous
actions has no discrete components (``action_dims`` ()) and takes float32 arrays of shape
[len(low)] within its ``action_bounds`` (low, high). Shape-deciding settings are constructor
arguments; numeric settings live in the ``params`` dataclass.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import jax
import jax.numpy as jnp

from memrl.registry import ComponentRegistry, declared_types, refuse_unrecordable


class EnvironmentRegistry(ComponentRegistry):
    """The environments by name. A name's entry makes an environment from its settings given flat
    (rules and params alike, ``maze_length=120``); an environment's settings are what it holds
    (``Environment.settings``), so a config records it, as it does a core, by the name that makes
    its class with what that name fixes, and the settings that differ from that name's defaults."""

    def setting_types(self, name: str) -> dict:
        """The declared type of each setting of ``name``'s environment: its own fields' but ``params``,
        and its params' fields'."""
        made = self.default(name)
        own = {k: v for k, v in declared_types(type(made)).items() if k != "params"}
        params = getattr(made, "params", None)
        return own | (declared_types(type(params)) if dataclasses.is_dataclass(params) else {})

    def from_record(self, record: dict) -> Environment:
        """As ``Registry.from_record``, an environment's own refusal of its settings (its factory's
        TypeError) a ValueError, as a setting's is."""
        try:
            return super().from_record(record)
        except TypeError as err:
            raise ValueError(str(err)) from None

    def makes(self, made) -> bool:
        return isinstance(made, Environment)

    def variant(self, made, name: str) -> Environment:
        """``name``'s environment with the settings given to ``made`` (``name_of``): a trained agent's
        environment at another level (``ballet/8_delay16`` for an agent of ``ballet/mixed``) with the
        observation and rules it trained with; refuses a setting that ``name`` fixes."""
        return self.make(name, **self.name_of(made)[1])

    def settings(self, made) -> dict:
        """Every setting of ``made`` (``Environment.settings``)."""
        return made.settings

    def record(self, made) -> dict:
        """``{"kind": NAME, ...}`` with the settings given (``name_of``: numbers, strings, bools, None
        and tuples of them)."""
        name, given = self.name_of(made)
        refuse_unrecordable(self.kind, name, given)
        return {"kind": name, **given}


ENV_MODULES = (
    "ballet",
    "boxworld",
    "brax_adapter",
    "craftax_adapter",
    "graph_nav",
    "gymnax_adapter",
    "host_environment",
    "memory_planning",
    "minecraft_chicken",
    "minecraft_maze",
    "minipacman",
    "object_permanence",
    "passive_visual_match",
    "tmaze",
    "word_learning",
    "xminigrid_adapter",
)
"""the modules of memrl's own environments, each registering its names"""
ENVS = EnvironmentRegistry("environment", modules=tuple(f"memrl.envs.{module}" for module in ENV_MODULES))


register = ENVS.register  # register(name, factory); refuses duplicates
make = ENVS.make  # make("tmaze/T-LN", **params) -> Environment; unknown names list the known ones
names = ENVS.names


def replace_params(defaults, kind: str, **overrides):
    """``defaults`` (a params dataclass) with ``overrides``; unknown names raise a TypeError that
    lists the allowed ones."""
    allowed = {f.name for f in dataclasses.fields(defaults)}
    unknown = set(overrides) - allowed
    if unknown:
        raise TypeError(f"unknown {kind} params {sorted(unknown)}; allowed: {sorted(allowed)}")
    return defaults.replace(**overrides)


def extra_module(module: str, extra: str, environments: str):
    """The package ``module`` of the optional extra ``extra``, or a ValueError that says
    ``environments`` need it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ValueError(f'{environments} environments need {module}: pip install "memrl[{extra}]"') from None


def observed_shape(observed, shape: tuple, name: str) -> tuple:
    """The observation shape of an environment ``name`` of observations ``shape`` that keeps only the
    components ``observed`` of them (all where None: ``shape``); refused unless they are components
    of a one-dimensional observation."""
    if observed is None:
        return shape
    if len(shape) != 1 or not observed or not all(0 <= i < shape[0] for i in observed):
        raise ValueError(
            f"observed keeps components of a one-dimensional observation: {name}'s has shape {shape}, got {observed}"
        )
    return (len(observed),)


class HeldSpaces:
    """An adapter's spaces, read once from the environment it wraps when it is constructed
    (``hold_spaces``), not at every step that asks; listed before ``Environment`` among the bases."""

    def hold_spaces(self, observation_shape, action_dims=(), action_bounds=None) -> None:
        """Hold the spaces, on a frozen dataclass too."""
        spaces = {"_observation_shape": observation_shape, "_action_dims": action_dims, "_action_bounds": action_bounds}
        for name, value in spaces.items():
            object.__setattr__(self, name, value)

    @property
    def observation_shape(self):
        return self._observation_shape

    @property
    def action_dims(self):
        return self._action_dims

    @property
    def action_bounds(self):
        return self._action_bounds


def random_other(key, index: jax.Array, count) -> jax.Array:
    """An integer drawn uniformly from 0 .. count − 1 except ``index``."""
    return (index + jax.random.randint(key, (), 1, count)) % count


def select(flag: jax.Array, on_true, on_false):
    """Tree-wise ``where`` with a scalar flag."""
    return jax.tree.map(lambda a, b: jnp.where(flag, a, b), on_true, on_false)


class Environment:
    """Base class: subclasses implement ``reset_env``, ``step_env``, ``observation_shape`` and
    ``action_dims``, and hold their numeric settings in a ``params`` field (or define
    ``default_params``), or all their settings in fields (params None)."""

    @property
    def settings(self) -> dict:
        """Every setting of this environment as a registered name takes them, flat: its own init
        fields but ``params``, then its params' fields (``{"noise": True, "maze_length": 120, ...}``)."""
        if not dataclasses.is_dataclass(self):
            raise NotImplementedError(f"{type(self).__name__} is no dataclass: it must say what its settings are")
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init and f.name != "params"}
        params = getattr(self, "params", None)
        if dataclasses.is_dataclass(params):
            own |= {f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init}
        return own

    @classmethod
    def from_settings(cls, **settings):
        """The environment with its settings given flat, as a registered name and the command line
        give them (``maze_length=120, noise=True``): its own fields by name (rules, shapes), the rest
        its params' fields, each over the params' default."""
        own = {f.name for f in dataclasses.fields(cls) if f.init and f.name != "params"}
        fields = {k: settings.pop(k) for k in list(settings) if k in own}
        defaults = next(f.default for f in dataclasses.fields(cls) if f.name == "params")
        return cls(**fields, params=replace_params(defaults, cls.__name__, **settings))

    @property
    def default_params(self) -> Any:
        """The params ``reset`` and ``step`` use unless given: the environment's ``params`` field,
        where its numeric settings live; None for a dataclass whose settings are all fields (Ballet's
        levels); an environment of another kind says what its defaults are."""
        if dataclasses.is_dataclass(self) and not hasattr(self, "params"):
            return None
        if not hasattr(self, "params"):
            raise NotImplementedError(f"{type(self).__name__} has no params field: it must define default_params")
        return self.params

    @property
    def observation_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def action_dims(self) -> tuple[int, ...]:
        """Number of choices of each discrete action component (() where actions are continuous)."""
        raise NotImplementedError

    @property
    def action_bounds(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """Continuous actions: the least and greatest value of each component, (low, high), ±inf
        where a side is unbounded; None for discrete actions (``action_dims``)."""
        return None

    @property
    def token_vocab(self) -> dict[str, int]:
        """Observation parts that are int tokens (language), with their vocabulary sizes."""
        return {}

    def reset_env(self, key, params):
        raise NotImplementedError

    def step_env(self, key, state, action, params):
        """One transition without auto-reset: (obs, state, reward, terminated, truncated, info)."""
        raise NotImplementedError

    @property
    def observation_bounds(self) -> dict[str, tuple[float, float]] | tuple[float, float] | None:
        """The least and greatest value of the float observations (per named part where there are
        parts), where the environment knows them; None where it does not (the adapters then
        declare an unbounded ``Box``)."""
        return None

    def checked_action(self, action) -> jax.Array:
        """``action`` as int32 [len(action_dims)], or float32 [len(low)] where actions are continuous
        (one number for one component, as gymnax takes it), or a ValueError that says the shape
        expected."""
        bounds = self.action_bounds
        components = len(self.action_dims) if bounds is None else len(bounds[0])
        action = jnp.asarray(action, jnp.int32 if bounds is None else jnp.float32)
        if action.shape == () and components == 1:
            action = action[None]
        if action.shape != (components,):
            what = f"components with {self.action_dims} choices" if bounds is None else f"within {bounds}"
            raise ValueError(
                f"{type(self).__name__} takes actions of shape ({components},) ({what}), got {action.shape}"
            )
        return action

    def reset(self, key, params=None):
        return self.reset_env(key, self.default_params if params is None else params)

    def step(self, key, state, action, params=None):
        params = self.default_params if params is None else params
        action = self.checked_action(action)
        step_key, reset_key = jax.random.split(key)
        obs, state, reward, terminated, truncated, info = self.step_env(step_key, state, action, params)
        done = terminated | truncated
        reset_obs, reset_state = self.reset_env(reset_key, params)
        info = {**info, "terminated": terminated, "truncated": truncated, "final_obs": obs}
        return select(done, reset_obs, obs), select(done, reset_state, state), reward, done, info

    @property
    def resets_per_step(self) -> int | None:
        """Fresh episodes made per ``batch_step`` where making one costs far more than a step (None:
        one for every copy, as ``step`` makes)."""
        return None

    def batch_step(self, keys, states, actions, params=None):
        """``step`` of a batch of copies (a key, state and action each), as the learners step them. With
        ``resets_per_step`` n, only n fresh episodes are made per call, the copies that end in it taking
        them in turn (the i-th ended copy the (i mod n)-th, so copies that end together may start the
        same episode): Craftax's "optimistic resets" (Matthews et al. 2024), for an environment whose
        reset (Craftax's world generation) costs many steps."""
        if self.resets_per_step is None:
            return jax.vmap(self.step, (0, 0, 0, None))(keys, states, actions, params)
        params = self.default_params if params is None else params
        actions = jax.vmap(self.checked_action)(actions)
        step_keys, reset_keys = jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0)
        obs, states, reward, terminated, truncated, info = jax.vmap(self.step_env, (0, 0, 0, None))(
            step_keys, states, actions, params
        )
        done = terminated | truncated
        fresh = jax.vmap(self.reset_env, (0, None))(reset_keys[: self.resets_per_step], params)
        taken = jax.tree.map(lambda x: x[(jnp.cumsum(done) - 1) % self.resets_per_step], fresh)
        info = {**info, "terminated": terminated, "truncated": truncated, "final_obs": obs}
        obs, states = jax.vmap(select)(done, taken, (obs, states))
        return obs, states, reward, done, info
