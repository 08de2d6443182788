"""Any gymnax environment as a memrl environment, so memrl's learners train on it:
``memrl.envs.make("gymnax/MemoryChain-bsuite")``. Termination comes from the gymnax env's
``step_env``, truncation (``max_steps_in_episode``) from its ``is_truncated``, as gymnax's own
``step`` does. Actions are memrl's [1]-shaped int arrays for a Discrete space and float32 arrays of
the Box's shape for a continuous one (``action_bounds``: the Box's low and high). ``observed`` keeps
some observation components only (``gymnax/Pendulum-v1/positions``). gymnax is imported when one is
made (the other way, a memrl environment as a gymnax one, is ``as_gymnax.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp
import numpy as np

from memrl.envs.base import Environment, HeldSpaces, observed_shape, register

DISCRETE_GYMNAX_ENVS = (
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "Catch-bsuite",
    "DeepSea-bsuite",
    "MemoryChain-bsuite",
    "UmbrellaChain-bsuite",
    "DiscountingChain-bsuite",
    "SimpleBandit-bsuite",
    "FourRooms-misc",
    "MetaMaze-misc",
    "BernoulliBandit-misc",
    "GaussianBandit-misc",
    "Pong-misc",
    "Asterix-MinAtar",
    "Breakout-MinAtar",
    "Freeway-MinAtar",
    "Seaquest-MinAtar",
    "SpaceInvaders-MinAtar",
)
"""every gymnax environment with discrete actions, but those of ``UNWRAPPED_GYMNAX_ENVS``"""
UNWRAPPED_GYMNAX_ENVS = {
    "MNISTBandit-bsuite": "downloads MNIST when it is made (no data is downloaded at run time here)",
    "FrozenLake-misc": "its observation is a bare state index (shape ()), not an array memrl's encoders read",
}
"""discrete-action gymnax environments memrl does not register, and why"""
CONTINUOUS_GYMNAX_ENVS = ("Pendulum-v1", "MountainCarContinuous-v0", "PointRobot-misc", "Reacher-misc", "Swimmer-misc")
"""every gymnax environment with Box actions: memrl's agents act in them with a Gaussian policy"""
POSITIONS_ONLY = {"Pendulum-v1": (0, 1), "MountainCarContinuous-v0": (0,)}
"""the partially observable variants ``gymnax/<id>/positions``: the positions kept, the velocities
dropped (Pendulum's cos θ and sin θ without θ', MountainCar's x without x'), so that a memory must
infer the velocity, as in POPGym's PositionOnly tasks and Ni et al. 2022's velocity-masked ones"""


@dataclasses.dataclass(frozen=True, eq=False)
class GymnaxEnv(HeldSpaces, Environment):
    """A gymnax environment by its id; gymnax's params stay the numeric params."""

    name: str
    """gymnax's id of the environment (each registered name fixes it)"""
    observed: tuple[int, ...] | None = None
    """the observation components kept, the others dropped (e.g. the positions without the
    velocities, as POPGym's PositionOnly tasks); None keeps every one"""
    params: Any = None
    """gymnax's params (its defaults where None)"""

    def __post_init__(self):
        import gymnax

        env, default = gymnax.make(self.name)
        object.__setattr__(self, "gymnax_env", env)
        if self.params is None:
            object.__setattr__(self, "params", default)
        space = env.action_space(self.params)
        if not hasattr(space, "n") and not hasattr(space, "low"):
            raise ValueError(
                f"{self.name} has a {type(space).__name__} action space; memrl's agents take Discrete or Box"
            )
        if hasattr(space, "n"):
            dims, bounds = (int(space.n),), None
        else:
            low, high = (np.broadcast_to(np.asarray(b, np.float32), space.shape) for b in (space.low, space.high))
            dims, bounds = (), (tuple(map(float, low)), tuple(map(float, high)))
        shape = observed_shape(self.observed, tuple(env.observation_space(self.params).shape), self.name)
        self.hold_spaces(shape, dims, bounds)

    def _observe(self, obs):
        return obs if self.observed is None else obs[jnp.asarray(self.observed)]

    def reset_env(self, key, params):
        obs, state = self.gymnax_env.reset_env(key, params)
        return self._observe(obs), state

    def step_env(self, key, state, action, params):
        taken = action if self.action_bounds is not None else action[0]
        obs, state, reward, terminated, info = self.gymnax_env.step_env(key, state, taken, params)
        truncated = self.gymnax_env.is_truncated(
            state, params
        )  # as gymnax 1.0's step: true at the time limit even on a terminal step
        info = {k: v for k, v in info.items() if k != "discount"}
        return self._observe(obs), state, jnp.asarray(reward, jnp.float32), terminated, truncated, info


def make_gymnax(name: str, observed: tuple[int, ...] | None = None, **params) -> GymnaxEnv:
    """gymnax's ``name`` with its params ``params`` over gymnax's defaults, keeping the observation
    components ``observed`` (all where None)."""
    import gymnax

    default = gymnax.make(name)[1]
    return GymnaxEnv(name, observed, default.replace(**params) if params else default)


for _name in (*DISCRETE_GYMNAX_ENVS, *CONTINUOUS_GYMNAX_ENVS):
    register(f"gymnax/{_name}", make_gymnax, fixed=dict(name=_name))
for _name, _observed in POSITIONS_ONLY.items():
    register(f"gymnax/{_name}/positions", make_gymnax, fixed=dict(name=_name, observed=_observed))
