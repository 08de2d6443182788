"""XLand-MiniGrid's MiniGrid tasks (Nikulin et al. 2024, the ``xminigrid`` package: an optional
extra, ``pip install "memrl[xminigrid]"``) as memrl environments, stepped in JAX like memrl's own:
``memrl.envs.make("xminigrid/MiniGrid-MemoryS8")``.

The agent sees a ``view_size`` × ``view_size`` egocentric window of (tile, colour) codes, uint8 [view,
view, 2]: xminigrid's observation, which an MLP reads as numbers (tile 5 between tiles 4 and 6). With
``one_hot=True`` each cell is its tile and its colour one-hot, uint8 [view, view, 13 + 12] (as
minigrid's ``OneHotPartialObsWrapper``; xminigrid's own baselines embed the two codes). It takes one of
6 actions (forward, turn left, turn right, pick up, put down, toggle). An episode ends terminated where the
task's goal is reached (reward 1 − 0.9 · steps / max_steps, xminigrid's) and truncated at ``max_steps``
(xminigrid's ``StepType.LAST`` with discount 1). MiniGrid-Memory{S8 ... S128} is the memory task: an
object shown at the start of a corridor, two at its end, and the reward for the one that matches.
The XLand-MiniGrid-* environments are not registered: their rules come from benchmark files that
xminigrid downloads when loaded, which nothing here may fetch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from memrl.envs.base import Environment, extra_module, register

MINIGRID_ENVS = (
    "MiniGrid-BlockedUnlockPickUp",
    "MiniGrid-DoorKey-5x5",
    "MiniGrid-DoorKey-6x6",
    "MiniGrid-DoorKey-8x8",
    "MiniGrid-DoorKey-16x16",
    "MiniGrid-Empty-5x5",
    "MiniGrid-Empty-6x6",
    "MiniGrid-Empty-8x8",
    "MiniGrid-Empty-16x16",
    "MiniGrid-EmptyRandom-5x5",
    "MiniGrid-EmptyRandom-6x6",
    "MiniGrid-EmptyRandom-8x8",
    "MiniGrid-EmptyRandom-16x16",
    "MiniGrid-FourRooms",
    "MiniGrid-LockedRoom",
    "MiniGrid-MemoryS8",
    "MiniGrid-MemoryS16",
    "MiniGrid-MemoryS32",
    "MiniGrid-MemoryS64",
    "MiniGrid-MemoryS128",
    "MiniGrid-Playground",
    "MiniGrid-Unlock",
    "MiniGrid-UnlockPickUp",
)
"""every MiniGrid task xminigrid 0.9 registers (a test compares the list with xminigrid's)"""
LAST = 2  # xminigrid's StepType.LAST
NUM_TILES = 13
"""xminigrid's tile kinds (``core.constants.NUM_TILES``; a test compares)"""
NUM_COLORS = 12
"""xminigrid's colours (``core.constants.NUM_COLORS``; a test compares)"""


@dataclasses.dataclass(frozen=True, eq=False)
class XMiniGridEnv(Environment):
    """An xminigrid environment by its id; xminigrid's params stay the numeric params."""

    name: str
    """xminigrid's id of the environment (each registered name fixes it)"""
    params: Any = None
    """xminigrid's params (its defaults where None)"""
    one_hot: bool = False
    """each cell's tile and colour one-hot (``observe``); False: xminigrid's two codes (run folders
    from before this setting read so)"""

    def __post_init__(self):
        env, default = extra_module("xminigrid", "xminigrid", "xminigrid").make(self.name)
        object.__setattr__(self, "xminigrid_env", env)
        if self.params is None:
            object.__setattr__(self, "params", default)

    @property
    def observation_shape(self):
        channels = NUM_TILES + NUM_COLORS if self.one_hot else 2
        return (self.params.view_size, self.params.view_size, channels)

    def observe(self, codes: jax.Array) -> jax.Array:
        """The agent's view of xminigrid's [view, view, 2] (tile, colour) codes: one-hot, [view, view,
        13 + 12] uint8, or the codes as they are (``one_hot``)."""
        if not self.one_hot:
            return codes
        tiles = jax.nn.one_hot(codes[..., 0], NUM_TILES, dtype=jnp.uint8)
        colours = jax.nn.one_hot(codes[..., 1], NUM_COLORS, dtype=jnp.uint8)
        return jnp.concatenate([tiles, colours], axis=-1)

    @property
    def action_dims(self):
        return (int(self.xminigrid_env.num_actions(self.params)),)

    def reset_env(self, key, params):
        timestep = self.xminigrid_env.reset(params, key)
        return self.observe(timestep.observation), timestep

    def step_env(self, key, state, action, params):
        timestep = self.xminigrid_env.step(params, state, action[0])
        last = timestep.step_type == LAST
        terminated = last & (timestep.discount == 0.0)
        reward = jnp.asarray(timestep.reward, jnp.float32)
        return self.observe(timestep.observation), timestep, reward, terminated, last & ~terminated, {}


def make_xminigrid(name: str, one_hot: bool = False, **params) -> XMiniGridEnv:
    """xminigrid's ``name`` with its params ``params`` over xminigrid's defaults, its cells one-hot
    where ``one_hot``."""
    default = extra_module("xminigrid", "xminigrid", "xminigrid").make(name)[1]
    return XMiniGridEnv(name, default.replace(**params) if params else default, one_hot)


for _name in MINIGRID_ENVS:
    register(f"xminigrid/{_name}", make_xminigrid, fixed=dict(name=_name))
