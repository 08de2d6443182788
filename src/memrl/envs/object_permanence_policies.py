"""Scripted object-permanence policies: the oracle (return 1.3: looks away, then the right box)
and the memory-less guesser (looks away, then a box at random: 0.3 + 1/N on average).

Both read the layout at the episode start (where the boxes are, and for the oracle which one the
instruction will name) and track the agent's cell by the room's wall rule from the action the
environment last took (``tracks_action``); the phase comes from the instruction token.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl.envs import ballet_tables as tables
from memrl.envs.object_permanence import AGENT_START, LOOK_BACK, WATCH, ObjectPermanence
from memrl.envs.room_view import DELTAS, blocked
from memrl.envs.scripted_policy import ScriptedPolicy, register_policies, uniform_random

NORTH, EAST, SOUTH, WEST = (tables.DIRECTIONS.index(d) for d in ("N", "E", "S", "W"))


def _walk(pick):
    """Looks away (south, to row 9), then walks to the box ``pick(key, memory)`` chooses at the
    first step of the choice: along row 9 to its column, then north onto it."""

    def act(key, obs, memory):
        language, last = obs["language"], memory["action"]
        moved = memory["free"] & ~blocked(memory["agent"], DELTAS[last])  # the agent is held during the reveal
        agent = jnp.where(moved, memory["agent"] + DELTAS[last], memory["agent"])
        choice = jnp.where((language > LOOK_BACK) & (memory["choice"] < 0), pick(key, memory), memory["choice"])
        column = memory["box_cols"][jnp.maximum(choice, 0)]
        toward = jnp.where(agent[1] < column, EAST, jnp.where(agent[1] > column, WEST, NORTH))
        action = jnp.where(language > LOOK_BACK, toward, SOUTH).astype(jnp.int32)
        memory = {**memory, "agent": agent, "action": action, "free": language != WATCH, "choice": choice}
        return action[None], memory

    return act


def _initial_memory(state):
    return {
        "agent": jnp.array(AGENT_START, jnp.int32),
        "action": jnp.int32(SOUTH),
        "free": jnp.bool_(False),
        "box_cols": state.box_cols,
        "target": state.target,
        "num_boxes": state.num_boxes,
        "choice": jnp.int32(-1),
    }


def choosing(obs) -> jax.Array:
    """``decides``: the steps after the instruction names the object, where each move walks to a box
    (before it the agent is held, or looks away, whatever it remembers)."""
    return obs["language"] > LOOK_BACK


def oracle(env: ObjectPermanence) -> ScriptedPolicy:
    """Looks away, then goes to the box of the named object."""
    return ScriptedPolicy(
        _initial_memory, _walk(lambda key, memory: memory["target"]), tracks_action=True, decides=choosing
    )


def guesser(env: ObjectPermanence) -> ScriptedPolicy:
    """Looks away, then goes to a box drawn uniformly (what an agent without memory can do)."""
    return ScriptedPolicy(
        _initial_memory,
        _walk(lambda key, memory: jax.random.randint(key, (), 0, memory["num_boxes"])),
        tracks_action=True,
        decides=choosing,
    )


POLICIES = {"oracle": oracle, "guesser": guesser, "random": uniform_random}
register_policies("object-permanence", POLICIES)
