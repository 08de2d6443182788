"""Ballet's scripted policies (Lampinen et al. 2021, Sec. 4.1): once the choice phase begins, the
oracle walks to the dancer who did the named dance, stepping around the others (touching any dancer
ends the episode); the guesser walks to a dancer drawn at random, what an agent without memory of
the dances can do (1/N of the levels); and random play. While the dancers dance the agent cannot
move, and both walkers then answer north (action 0): a move there does nothing, and one fixed answer is what a
learner cloning them can learn (a step toward the target before it is named could not be)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.ballet import MAX_DANCERS, Ballet, BalletState
from memrl.envs.room_view import step_toward
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random

WATCHING_MOVE = 0  # north; ignored while the dancers dance


def _walker(pick):
    """Walks to the dancer ``pick(key, state)`` chooses (once per episode), around the others."""

    def act(key, state: BalletState, choice):
        choice = jnp.where(choice < 0, pick(key, state), choice)
        dancers = jnp.arange(MAX_DANCERS)
        others = (dancers != choice) & (dancers < state.num_dancers)
        positions = Ballet.dancer_positions(state)
        move = jnp.where(choosing(state), step_toward(state.agent, positions[choice], positions, others), WATCHING_MOVE)
        return move[None], choice

    return act


def choosing(state: BalletState) -> jax.Array:
    """``decides``: the choice phase's steps, where the walk picks the dancer (what the task scores)."""
    return state.frame >= Ballet.choice_frame(state)


def oracle(env: Ballet) -> ScriptedPolicy:
    """Goes to the dancer whose dance the instruction names."""
    return ScriptedPolicy(
        lambda state: jnp.int32(-1), _walker(lambda key, state: state.target), reads_state=True, decides=choosing
    )


def guesser(env: Ballet) -> ScriptedPolicy:
    """Goes to a dancer drawn at random."""
    pick = lambda key, state: jax.random.randint(key, (), 0, state.num_dancers)
    return ScriptedPolicy(lambda state: jnp.int32(-1), _walker(pick), reads_state=True, decides=choosing)


POLICIES = {"oracle": oracle, "guesser": guesser, "random": uniform_random}
register_policies("ballet", POLICIES)
