"""Passive Visual Match's scripted policies (Lampinen et al. 2021, Sec. 4.3, after Hung et al. 2019):
the oracle collects the nearest apple in the distractor phase, stands at the room's centre when the
squares appear, and steps onto the square of the phase-1 colour around the others; the guesser does the same but steps onto a
square drawn at random, what an agent without memory of the colour can do (1/num_choices of the
match reward); and random play."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.passive_visual_match import CHOICE_PHASE, DISTRACTOR_PHASE, MOVES, PassiveVisualMatch, PVMState
from memrl.envs.scripted_policy import ScriptedPolicy, uniform_random


def step_to(agent: jax.Array, goal: jax.Array, avoid: jax.Array, room_size: int) -> jax.Array:
    """The first move (N, E, S, W) of a shortest path from ``agent`` to ``goal`` inside the walls of a
    ``room_size`` room that never steps onto a cell of ``avoid`` [M, 2] (moves to the neighbour of
    least distance, the distances relaxed over the room; a greedy step can oscillate behind a square)."""
    cells = jnp.stack(jnp.meshgrid(jnp.arange(room_size), jnp.arange(room_size), indexing="ij"), -1)
    inside = jnp.all((cells >= 1) & (cells <= room_size - 2), axis=-1)
    free = inside & ~jnp.all(cells[:, :, None] == avoid[None, None], axis=-1).any(-1)
    far = room_size * room_size
    start = jnp.full((room_size, room_size), far).at[goal[0], goal[1]].set(0)

    def relax(distance, _):
        padded = jnp.pad(distance, 1, constant_values=far)
        neighbours = jnp.stack([padded[:-2, 1:-1], padded[1:-1, 2:], padded[2:, 1:-1], padded[1:-1, :-2]])
        return jnp.where(free, jnp.minimum(distance, neighbours.min(0) + 1), distance), None

    distance = jax.lax.scan(relax, start, None, far)[0]
    onto = jnp.clip(agent + MOVES, 0, room_size - 1)
    return jnp.argmin(jnp.where(free[onto[:, 0], onto[:, 1]], distance[onto[:, 0], onto[:, 1]], far + 1)).astype(
        jnp.int32
    )


def _matcher(env: PassiveVisualMatch, pick):
    """Apples in the distractor phase, then the square ``pick(key, state)`` chooses (once)."""
    params, floor = env.default_params, env.floor_cells()
    centre, distractor_end = jnp.full(2, env.room_size // 2), env.phase_ends(params)[1]

    def act(key, state: PVMState, choice):
        phase = env.phase(state, params)
        choice = jnp.where((choice < 0) & (phase == CHOICE_PHASE), pick(key, state), choice)
        apples = state.apples[floor[:, 0], floor[:, 1]]
        nearest_apple = floor[jnp.argmin(jnp.where(apples, jnp.abs(floor - state.agent).sum(-1), 10_000))]
        # the room's centre before the squares appear: in a corner two wrong squares can box it in
        nearest_apple = jnp.where(apples.any() & (state.step < distractor_end - env.room_size), nearest_apple, centre)
        square = state.choice_cells[jnp.maximum(choice, 0)]
        others = jnp.where((jnp.arange(len(state.choice_cells)) != choice)[:, None], state.choice_cells, -1)
        goal = jnp.where(
            phase == DISTRACTOR_PHASE, nearest_apple, jnp.where(phase == CHOICE_PHASE, square, state.agent)
        )
        avoid = jnp.where(phase == CHOICE_PHASE, others, -1)
        return step_to(state.agent, goal, avoid, env.room_size)[None], choice

    return act


def oracle(env: PassiveVisualMatch) -> ScriptedPolicy:
    """Collects apples, then steps onto the square of the phase-1 colour (choice 0)."""
    return ScriptedPolicy(lambda state: jnp.int32(-1), _matcher(env, lambda key, state: jnp.int32(0)), reads_state=True)


def guesser(env: PassiveVisualMatch) -> ScriptedPolicy:
    """Collects apples, then steps onto a square drawn at random."""
    pick = lambda key, state: jax.random.randint(key, (), 0, env.num_choices)
    return ScriptedPolicy(lambda state: jnp.int32(-1), _matcher(env, pick), reads_state=True)


POLICIES = {"oracle": oracle, "guesser": guesser, "random": uniform_random}
