"""Passive Visual Match's scripted policies (Lampinen et al. 2021, Sec. 4.3, after Hung et al. 2019):
the oracle collects the nearest apple in the distractor phase, stands at the room's centre when the
squares appear, and steps onto the square of the phase-1 colour around the others; the guesser does
the same but steps onto a square drawn at random, what an agent without memory of the colour can do
(1/num_choices of the match reward); and random play."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.graph_search import grid_first_move
from memrl.envs.passive_visual_match import CHOICE_PHASE, DISTRACTOR_PHASE, MOVES, PassiveVisualMatch, PVMState
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def _matcher(env: PassiveVisualMatch, pick):
    """Apples in the distractor phase, then the square ``pick(key, state)`` chooses (once)."""
    params, floor = env.default_params, env.floor_cells()
    centre = env.centre()
    size = env.room_size
    cells = jnp.stack(jnp.meshgrid(jnp.arange(size), jnp.arange(size), indexing="ij"), -1)
    inside = jnp.zeros((size, size), bool).at[floor[:, 0], floor[:, 1]].set(True)

    def act(key, state: PVMState, choice):
        phase = env.phase(state, params)
        choice = jnp.where((choice < 0) & (phase == CHOICE_PHASE), pick(key, state), choice)
        apples = state.apples[floor[:, 0], floor[:, 1]]
        nearest_apple = floor[jnp.argmin(jnp.where(apples, jnp.abs(floor - state.agent).sum(-1), 10_000))]
        # the room's centre before the squares appear: in a corner two wrong squares can box it in
        collecting = apples.any() & (state.step < state.distractor_end - size)
        distractor_goal = jnp.where(collecting, nearest_apple, centre)
        square = state.choice_cells[jnp.maximum(choice, 0)]
        others = jnp.where((jnp.arange(len(state.choice_cells)) != choice)[:, None], state.choice_cells, -1)
        goal = jnp.where(
            phase == DISTRACTOR_PHASE, distractor_goal, jnp.where(phase == CHOICE_PHASE, square, state.agent)
        )
        avoid = jnp.where(phase == CHOICE_PHASE, others, -1)
        free = inside & ~jnp.all(cells[:, :, None] == avoid[None, None], axis=-1).any(-1)
        return grid_first_move(state.agent, goal, free, MOVES)[None], choice

    return act


def choosing(env: PassiveVisualMatch):
    """``decides``: the choice phase's steps, where the action picks the square."""
    return lambda state: env.phase(state, env.default_params) == CHOICE_PHASE


def oracle(env: PassiveVisualMatch) -> ScriptedPolicy:
    """Collects apples, then steps onto the square of the phase-1 colour (choice 0)."""
    act = _matcher(env, lambda key, state: jnp.int32(0))
    return ScriptedPolicy(lambda state: jnp.int32(-1), act, reads_state=True, decides=choosing(env))


def guesser(env: PassiveVisualMatch) -> ScriptedPolicy:
    """Collects apples, then steps onto a square drawn at random."""
    pick = lambda key, state: jax.random.randint(key, (), 0, env.num_choices)
    return ScriptedPolicy(lambda state: jnp.int32(-1), _matcher(env, pick), reads_state=True, decides=choosing(env))


POLICIES = {"oracle": oracle, "guesser": guesser, "random": uniform_random}
register_policies("pvm", POLICIES)
