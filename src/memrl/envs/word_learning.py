"""Rapid word learning with distractor phases, a 2D analogue of HTM's task (Lampinen et al. 2021,
Sec. 3.3 and App. B.3, after Hill et al.'s fast-binding tasks) in Ballet's room and view.

The paper's task is 3D (Unity, objects lifted by name). This analogue keeps what it tests: three
new words bound to three objects by a single exposure each, kept across distractor phases (and, in
super-episodes, across whole later episodes), then used to pick an object by its name.

Ballet's 11×11 walled room and egocentric 11×11 view; the agent moves in Ballet's 8 directions,
objects are no obstacles, and to "lift" an object is to step onto it (the object is then drawn
over the agent, at the centre of the view). Objects are of 15 kinds (kind i: Ballet's shape i in
Ballet's colour i); kinds 12-14 are the distractor phases' fixed objects (the paper's train, robot
and rocket), the others are the objects that get new names. A sub-episode:

1. learning: the agent and three objects of distinct kinds at random cells; while the agent is on
   an object the instruction is "this is a <name>", a name drawn for this sub-episode from 30
   nonsense words (no word is reused within a super-episode). The phase ends the frame after all
   three have been lifted, or after 60 frames.
2. D distractor phases (D drawn per sub-episode): the agent and the three fixed objects at new
   random cells, "lift the <fixed name>": the named one gives 0.1 and the next phase; another
   gives nothing; after 100 frames (20 s) the next phase starts anyway.
3. test: the three named objects at new random cells, "lift the <one of the new names>": lifting
   an object ends the sub-episode, with 1 for the named one and 0 for another.

``test_layout="around"`` (not the paper's) sets the test as one move: the agent at a cell away from
the walls and the three objects on three of its eight neighbours, so that lifting the named object
is the remembered word's kind joined with one step (the 2-D room's version of what made Passive
Visual Match's choice learnable by imitation, docs/results/htm.md).

A super-episode (``sub_episodes`` = n > 1) is n sub-episodes in one episode, the last one's test
asking for a word of the first (its objects are the first's): the paper's multi-episode
evaluation, where the memory is kept across the intervening episodes. An episode not over after
2,250 frames (450 s) is truncated.

Observations: ``{"image", "language"}``, the egocentric crop as a 99×99×3 uint8 picture or, with
``observation="cells"``, [11, 11, 17] float one-hots (wall, agent, 15 kinds); ``language`` is two
int32 tokens, verb and noun: (0, 0) silence, (1, name) "this is a <name>", (2, noun) "lift the
<noun>"; nouns 3-5 are the fixed objects', 6-35 the new words. Time as in ``object-permanence``:
5 steps a second.

Levels: ``word-learning/train`` (0, 1 or 2 distractor phases, as the paper's training),
``word-learning/distractors{0,1,2,5,10,20}`` and the super-episodes
``word-learning/episodes{2,3,4}`` (0-2 distractor phases per sub-episode).
"""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp

from memrl.envs import ballet_tables as tables
from memrl.envs.ballet import COLOR_RGB, SHAPE_MASKS, SHAPE_NAMES
from memrl.envs.base import Environment, register
from memrl.envs.room_view import (
    ACTION_DIMS,
    DELTAS,
    ROOM_WALLS,
    STEPS_PER_SECOND,
    blocked,
    check_observation,
    egocentric_crop,
    one_hot_cells,
    picture,
    solid,
    view_shape,
)

NUM_KINDS = len(SHAPE_NAMES)
DISTRACTOR_KINDS = (12, 13, 14)
LEARNED_KINDS = 12  # kinds 0 .. 11 get new names
NUM_WORDS = 30
SILENT, THIS_IS, LIFT = 0, 1, 2  # verbs; nouns: 3 + i for the fixed object i, FIRST_WORD + w for new word w
FIRST_WORD = 3 + len(DISTRACTOR_KINDS)
VOCAB = FIRST_WORD + NUM_WORDS
LEARN_FRAMES = 60
DISTRACTOR_FRAMES = 20 * STEPS_PER_SECOND
TIME_LIMIT = 450 * STEPS_PER_SECOND
DISTRACTOR_REWARD, TEST_REWARD = 0.1, 1.0
LEARNING, DISTRACTOR, TEST = 0, 1, 2  # phases
FLOOR, WALL, AGENT, FIRST_OBJECT = range(4)  # board codes; kind k is FIRST_OBJECT + k
CELL_CHANNELS = 2 + NUM_KINDS
INTERIOR = jnp.asarray(
    [(r, c) for r in range(1, tables.ROOM_SIZE - 1) for c in range(1, tables.ROOM_SIZE - 1)], jnp.int32
)
INNER = jnp.asarray(
    [(r, c) for r in range(2, tables.ROOM_SIZE - 2) for c in range(2, tables.ROOM_SIZE - 2)], jnp.int32
)  # the cells whose eight neighbours are all floor
MAX_SUB_EPISODES = NUM_WORDS // 3
TEST_LAYOUTS = ("random", "around")


class WordLearningState(NamedTuple):
    """One episode's words and objects (all sub-episodes drawn at the reset) and its progress."""

    agent: jax.Array  # int32 [2]
    objects: jax.Array  # int32 [3, 2]: the current phase's objects
    kinds: jax.Array  # int32 [3]: their kinds
    nouns: jax.Array  # int32 [3]: their nouns (tokens)
    target: jax.Array  # int32: the object the phase's instruction names (distractor and test phases)
    touched: jax.Array  # bool [3]: objects lifted in the learning phase
    phase: jax.Array  # int32: LEARNING, DISTRACTOR or TEST
    phase_frame: jax.Array  # int32: frames since the phase began
    distractors_left: jax.Array  # int32: distractor phases still to come in this sub-episode
    sub: jax.Array  # int32: the current sub-episode
    learned_kinds: jax.Array  # int32 [S, 3]: each sub-episode's named objects
    learned_nouns: jax.Array  # int32 [S, 3]: and their new words
    distractor_counts: jax.Array  # int32 [S]
    frame: jax.Array  # int32


@dataclasses.dataclass(frozen=True)
class WordLearning(Environment):
    """Word learning with ``sub_episodes`` sub-episodes per episode and ``observation`` "image" or "cells"."""

    sub_episodes: int = 1
    observation: str = "image"
    distractors: tuple[int, ...] = (0, 1, 2)
    """the distractor-phase counts a sub-episode draws from, uniformly (each level fixes them)"""
    test_layout: Literal["random", "around"] = "random"
    """where a test's objects lie: with the agent on random distinct cells ("random", as every other
    phase), or on three of the eight cells around the agent ("around": the test is one move)"""

    def __post_init__(self):
        check_observation(self.observation)
        if self.test_layout not in TEST_LAYOUTS:
            raise ValueError(f"test_layout must be one of {TEST_LAYOUTS}, got {self.test_layout!r}")
        if not 1 <= self.sub_episodes <= MAX_SUB_EPISODES:
            raise ValueError(
                f"sub_episodes must be in 1..{MAX_SUB_EPISODES} (3 new words each, of {NUM_WORDS}), got {self.sub_episodes}"
            )
        if not self.distractors or any(d < 0 for d in self.distractors):
            raise ValueError(f"distractors must be one or more distractor-phase counts >= 0, got {self.distractors}")

    @property
    def observation_shape(self):
        return {"image": view_shape(self.observation, CELL_CHANNELS), "language": (2,)}

    @property
    def action_dims(self):
        return ACTION_DIMS

    @property
    def token_vocab(self):
        return {"language": VOCAB}

    # ----- the world ------------------------------------------------------------------------
    @staticmethod
    def lifted(state: WordLearningState) -> jax.Array:
        """[3] whether the agent is on each object."""
        return jnp.all(state.objects == state.agent, axis=-1)

    def board(self, state: WordLearningState) -> jax.Array:
        """[11, 11] board codes; an object is drawn over the agent."""
        board = jnp.where(ROOM_WALLS, WALL, FLOOR).at[state.agent[0], state.agent[1]].set(AGENT)
        return board.at[state.objects[:, 0], state.objects[:, 1]].set(FIRST_OBJECT + state.kinds)

    def observe(self, state: WordLearningState) -> dict:
        crop = egocentric_crop(self.board(state), state.agent, FLOOR)
        on = self.lifted(state)
        naming = (state.phase == LEARNING) & on.any()
        language = jnp.where(
            state.phase == LEARNING,
            jnp.where(naming, jnp.stack([THIS_IS, state.nouns[jnp.argmax(on)]]), jnp.array([SILENT, SILENT])),
            jnp.stack([LIFT, state.nouns[state.target]]),
        ).astype(jnp.int32)
        image = render_image(crop) if self.observation == "image" else render_cells(crop)
        return {"image": image, "language": language}

    # ----- episodes -------------------------------------------------------------------------
    @staticmethod
    def laid_out(state: WordLearningState, key, phase, kinds, nouns) -> WordLearningState:
        """``state`` with a new phase: the agent and the three objects at random distinct cells."""
        cell_key, target_key = jax.random.split(key)
        cells = INTERIOR[jax.random.permutation(cell_key, len(INTERIOR))[:4]]
        return state._replace(
            agent=cells[0],
            objects=cells[1:],
            kinds=kinds,
            nouns=nouns,
            target=jax.random.randint(target_key, (), 0, 3),
            touched=jnp.zeros(3, bool),
            phase=jnp.int32(phase),
            phase_frame=jnp.int32(0),
        )

    def laid_out_test(self, state: WordLearningState, key, kinds, nouns) -> WordLearningState:
        """``state`` with its test phase laid out by ``test_layout``."""
        state = self.laid_out(state, key, TEST, kinds, nouns)
        if self.test_layout == "random":
            return state
        cell_key, side_key = jax.random.split(jax.random.fold_in(key, 1))
        agent = INNER[jax.random.randint(cell_key, (), 0, len(INNER))]
        return state._replace(agent=agent, objects=agent + DELTAS[jax.random.permutation(side_key, len(DELTAS))[:3]])

    def reset_env(self, key, params):
        kind_key, word_key, count_key, layout_key = jax.random.split(key, 4)
        subs = self.sub_episodes
        kinds = jax.vmap(lambda k: jax.random.permutation(k, LEARNED_KINDS)[:3])(jax.random.split(kind_key, subs))
        nouns = FIRST_WORD + jax.random.permutation(word_key, NUM_WORDS)[: 3 * subs].reshape(subs, 3)
        counts = jax.random.choice(count_key, jnp.array(self.distractors, jnp.int32), (subs,))
        state = WordLearningState(
            agent=jnp.zeros(2, jnp.int32),
            objects=jnp.zeros((3, 2), jnp.int32),
            kinds=kinds[0],
            nouns=nouns[0],
            target=jnp.int32(0),
            touched=jnp.zeros(3, bool),
            phase=jnp.int32(LEARNING),
            phase_frame=jnp.int32(0),
            distractors_left=counts[0],
            sub=jnp.int32(0),
            learned_kinds=kinds.astype(jnp.int32),
            learned_nouns=nouns.astype(jnp.int32),
            distractor_counts=counts,
            frame=jnp.int32(0),
        )
        state = self.laid_out(state, layout_key, LEARNING, kinds[0], nouns[0])
        return self.observe(state), state

    def next_phase(self, state: WordLearningState, key) -> WordLearningState:
        """The phase after a finished learning or distractor phase: a distractor phase while any is
        left, else the test (on the first sub-episode's words in a super-episode's last one)."""
        fixed_kinds = jnp.asarray(DISTRACTOR_KINDS, jnp.int32)
        distract = self.laid_out(state, key, DISTRACTOR, fixed_kinds, 3 + jnp.arange(3, dtype=jnp.int32))
        distract = distract._replace(distractors_left=state.distractors_left - 1)
        asked = jnp.where((state.sub == self.sub_episodes - 1) & (self.sub_episodes > 1), 0, state.sub)
        test = self.laid_out_test(state, key, state.learned_kinds[asked], state.learned_nouns[asked])
        return jax.tree.map(lambda d, t: jnp.where(state.distractors_left > 0, d, t), distract, test)

    def next_sub_episode(self, state: WordLearningState, key) -> WordLearningState:
        """The learning phase of the next sub-episode, with its own objects and words."""
        sub = jnp.minimum(state.sub + 1, self.sub_episodes - 1)
        state = state._replace(sub=sub, distractors_left=state.distractor_counts[sub])
        return self.laid_out(state, key, LEARNING, state.learned_kinds[sub], state.learned_nouns[sub])

    def step_env(self, key, state, action, params):
        delta = DELTAS[jnp.clip(action[0], 0, len(DELTAS) - 1)]
        agent = jnp.where(blocked(state.agent, delta), state.agent, state.agent + delta)
        learned_all = state.touched.all()  # the third name was shown last frame: the phase ends now
        state = state._replace(agent=agent, frame=state.frame + 1, phase_frame=state.phase_frame + 1)
        on = self.lifted(state)
        on_target = on[state.target]
        learning, distracting, testing = state.phase == LEARNING, state.phase == DISTRACTOR, state.phase == TEST
        state = state._replace(touched=state.touched | (learning & on))
        reward = jnp.where(distracting & on_target, DISTRACTOR_REWARD, 0.0) + jnp.where(
            testing & on_target, TEST_REWARD, 0.0
        )
        phase_over = (learning & (learned_all | (state.phase_frame >= LEARN_FRAMES))) | (
            distracting & (on_target | (state.phase_frame >= DISTRACTOR_FRAMES))
        )
        tested = testing & on.any()
        last = state.sub == self.sub_episodes - 1
        terminated = tested & last
        following = jax.tree.map(
            lambda a, b: jnp.where(tested, a, b), self.next_sub_episode(state, key), self.next_phase(state, key)
        )
        state = jax.tree.map(lambda a, b: jnp.where((phase_over | tested) & ~terminated, a, b), following, state)
        truncated = ~terminated & (state.frame >= TIME_LIMIT)
        return self.observe(state), state, reward.astype(jnp.float32), terminated, truncated, {}


def cell_appearance() -> jax.Array:
    """[3 + 15, 9, 9, 3] uint8 pixels of each board code."""
    objects = SHAPE_MASKS[..., None] * COLOR_RGB[:NUM_KINDS, None, None, :]
    return jnp.concatenate([solid((0, 0, 0)), solid(tables.WALL_RGB), solid(tables.AGENT_RGB), objects])


def render_image(crop: jax.Array) -> jax.Array:
    """The 99×99×3 uint8 picture of a crop of board codes."""
    return picture(cell_appearance(), crop)


def render_cells(crop: jax.Array) -> jax.Array:
    """[11, 11, 17] float one-hots per cell: wall, agent, object kind (15)."""
    return one_hot_cells(crop, [WALL, AGENT] + [FIRST_OBJECT + k for k in range(NUM_KINDS)])


TRAINING_DISTRACTORS = (0, 1, 2)
LEVELS = {
    "train": (TRAINING_DISTRACTORS, 1),
    **{f"distractors{d}": ((d,), 1) for d in (0, 1, 2, 5, 10, 20)},
    **{f"episodes{n}": (TRAINING_DISTRACTORS, n) for n in (2, 3, 4)},
}
for _name, (_distractors, _subs) in LEVELS.items():
    register(
        f"word-learning/{_name}",
        WordLearning,
        fixed=dict(distractors=_distractors),
        defaults=dict(sub_episodes=_subs),
    )
