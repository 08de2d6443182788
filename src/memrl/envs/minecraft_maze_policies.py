"""Scripted Minecraft-maze policies that read the environment state: the oracle (every short-term
step right, the goal side at the end: the optimum, 13.7 on MC-LS) and the forgetter (the same, but
always west at the end, as the best policy without memory of the indicators: 10.2 on MC-LS on
average, 8.45 on MC-LSO)."""

from __future__ import annotations

import jax.numpy as jnp

from memrl.envs.minecraft_maze import DECIDE, EAST, WEST, MinecraftMaze, MinecraftMazeState
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def _walker(env: MinecraftMaze, final_choice):
    def act(key, state: MinecraftMazeState, memory):
        needed = env.required_action(state)
        return jnp.where(needed == DECIDE, final_choice(state), needed).astype(jnp.int32)[None], memory

    return ScriptedPolicy(lambda state: jnp.int32(0), act, reads_state=True)


def oracle(env: MinecraftMaze) -> ScriptedPolicy:
    """Takes every rewarded step and the goal side at the end."""
    return _walker(env, lambda state: jnp.where(env.goal_east(state), EAST, WEST))


def forgetter(env: MinecraftMaze) -> ScriptedPolicy:
    """Takes every rewarded step and west at the end whatever the indicators said."""
    return _walker(env, lambda state: jnp.int32(WEST))


POLICIES = {"oracle": oracle, "forgetter": forgetter, "random": uniform_random}
register_policies("minecraft-maze", POLICIES)
