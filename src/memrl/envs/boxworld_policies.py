"""BoxWorld's scripted policies (Zambaldi et al. 2018; Santoro et al. 2018, App. A.3): the oracle
reads the level and takes a shortest path, over free floor only (stepping onto another loose key
would drop the one held), to the next object of the solution: the loose gem once its box is open,
else the lock of the solution path that the key it holds opens, else the loose key that opens one;
and random play."""

from __future__ import annotations

import jax.numpy as jnp

from memrl.envs.boxworld import FIRST_KEY, FLOOR, GEM, MOVES, BoxWorld, BoxWorldState
from memrl.envs.graph_search import grid_first_move
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random


def next_object(state: BoxWorldState) -> jnp.ndarray:
    """The [2] cell the oracle goes to next (module docstring)."""
    cells, locks = state.cells, state.locks
    boxed = jnp.pad(locks[:, 1:], ((0, 0), (0, 1)))  # a box's key sits left of its lock
    path_locks = locks & ~state.distractor_locks
    gem = (cells == GEM) & ~boxed
    held_opens = path_locks & (cells == state.held) & (state.held >= FIRST_KEY)
    loose_keys = (cells >= FIRST_KEY) & ~locks & ~boxed
    wanted_keys = loose_keys & jnp.isin(cells, jnp.where(path_locks, cells, -1))
    target = jnp.where(gem.any(), gem, jnp.where(held_opens.any(), held_opens, wanted_keys))
    return jnp.stack(jnp.unravel_index(jnp.argmax(target), cells.shape)).astype(jnp.int32)


def oracle(env: BoxWorld) -> ScriptedPolicy:
    """Opens the solution path's boxes in order and takes the gem, never a distractor box."""

    def act(key, state: BoxWorldState, memory):
        free = (state.cells == FLOOR) & ~state.locks
        return grid_first_move(state.agent, next_object(state), free, MOVES)[None], memory

    return ScriptedPolicy(lambda state: jnp.int32(0), act, reads_state=True)


POLICIES = {"oracle": oracle, "random": uniform_random}
register_policies("boxworld", POLICIES)
