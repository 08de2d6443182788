"""Scripted Chicken policies that read the environment state: the oracle (collects every chicken
in three steps, recalls the colour: 8.8) and the forgetter (the same, but always right at the end:
5.3 on average, the best without memory of the colour)."""

from __future__ import annotations

import jax.numpy as jnp

from memrl.envs.minecraft_chicken import BACKWARD, COLLECT, FORWARD, LEFT, RIGHT, ChickenState, MinecraftChicken
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def _collector(env: MinecraftChicken, final_choice):
    params = env.default_params

    def act(key, state: ChickenState, memory):
        below = state.chicken - jnp.array([1, 0])  # where the chicken can be collected from
        across = jnp.sign(below[1] - state.agent[1])
        sideways_free = ~jnp.all(state.agent + jnp.stack([0, across]) == state.chicken)
        sideways = jnp.where(across > 0, RIGHT, LEFT)
        along = jnp.where(below[0] > state.agent[0], FORWARD, BACKWARD)
        move = jnp.where((across != 0) & sideways_free, sideways, along)
        collect = jnp.all(state.agent == below)
        action = jnp.where(
            state.timestep >= env.choice_step(params), final_choice(state), jnp.where(collect, COLLECT, move)
        )
        return action.astype(jnp.int32)[None], memory

    return ScriptedPolicy(lambda state: jnp.int32(0), act, reads_state=True)


def oracle(env: MinecraftChicken) -> ScriptedPolicy:
    """Collects every chicken by the shortest way and recalls the colour."""
    return _collector(env, lambda state: jnp.where(state.green, RIGHT, LEFT))


def forgetter(env: MinecraftChicken) -> ScriptedPolicy:
    """Collects every chicken by the shortest way and answers right whatever the colour was."""
    return _collector(env, lambda state: jnp.int32(RIGHT))


POLICIES = {"oracle": oracle, "forgetter": forgetter, "random": uniform_random}
register_policies("minecraft-maze/chicken", POLICIES)
