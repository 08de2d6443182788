"""Scripted word-learning policies that read the environment state: the oracle (lifts every
object in the learning phase, the named one in every later phase: 0.1 a distractor phase and 1 a
test) and the guesser (the same, but a uniformly drawn object in the test: 1/3 of a test's reward
on average, what an agent without memory of the words gets)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs.room_view import step_toward
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random
from memrl.envs.word_learning import LEARNING, TEST, WordLearning, WordLearningState


def _lifter(pick):
    """Lifts each unlifted object while learning, then the object ``pick(key, state)`` chooses
    (once per test phase) or the named one, stepping around the other objects in a test."""

    def act(key, state: WordLearningState, choice):
        testing = state.phase == TEST
        choice = jnp.where(testing, jnp.where(choice < 0, pick(key, state), choice), -1)
        goal_index = jnp.where(
            state.phase == LEARNING, jnp.argmin(state.touched), jnp.where(testing, choice, state.target)
        )
        others = jnp.arange(3) != goal_index
        action = step_toward(state.agent, state.objects[goal_index], state.objects, others & testing)
        return action[None], choice

    return act


def testing(state: WordLearningState) -> jax.Array:
    """``decides``: the test phase's steps, where the walk picks the object (what the task scores)."""
    return state.phase == TEST


def oracle(env: WordLearning) -> ScriptedPolicy:
    """Lifts the named object in every phase (and every object while learning)."""
    return ScriptedPolicy(
        lambda state: jnp.int32(-1), _lifter(lambda key, state: state.target), reads_state=True, decides=testing
    )


def guesser(env: WordLearning) -> ScriptedPolicy:
    """The oracle but for the test, where it lifts a uniformly drawn object."""
    return ScriptedPolicy(
        lambda state: jnp.int32(-1),
        _lifter(lambda key, state: jax.random.randint(key, (), 0, 3)),
        reads_state=True,
        decides=testing,
    )


POLICIES = {"oracle": oracle, "guesser": guesser, "random": uniform_random}
register_policies("word-learning", POLICIES)
