"""Behaviour cloning on BabyAI (Chevalier-Boisvert et al. 2019; TLB, Didolkar et al. 2022, Sec. 3.2,
App. 7.4): demonstrations of minigrid's BabyAI bot, made on this machine, as a sequence task.

The demos: for each level, the bot (``minigrid.utils.baby_ai_bot.BabyAIBot``) plays the episodes of
environment seeds ``seed, seed + 1, ...`` of ``BabyAI-<level>-v0``; an episode is kept when the bot
succeeds within ``max_steps`` steps (the bot fails almost never; on a few layouts its planner
stops on its own assertion, and those episodes are skipped too: 27 of the first 5,227 MiniBossLevel
seeds, failed or longer than 128 steps; the bank records every seed kept). The first ``episodes`` kept per
level train, the next ``test_episodes`` are held out. They are made once per setting (the slow part:
the bot plans in Python, from 0.01 s per episode on GoToLocal to 0.3 s on BossLevel) and kept in
memrl's cache folder like every bank (``memrl demos babyai`` makes them ahead, with progress).

A batch holds whole episodes from their first step, time-major and padded to ``max_steps``; step
t's input is the observation then, one-hot: the 7×7 egocentric view's object, colour and door state
per cell (49 × (11 + 6 + 3)), the agent's direction (4), and the mission, one word per position
(``MAX_MISSION_WORDS`` × the vocabulary), the same on every step; the target is the bot's action
(7 classes), scored at the episode's steps. The paper appends the instruction to the sequence (to
each chunk, for TLB) instead of to every step's input.

``rollout_success`` plays a policy in the real environments (gymnasium, on the host) and returns its
success rate: the evaluation of a cloned policy.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from memrl.settings import check_positive
from memrl.tasks.bank import bank_path, cached_bank
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, register

VIEW = 7
OBJECT_TYPES, COLOURS, DOOR_STATES, DIRECTIONS, ACTIONS = 11, 6, 3, 4, 7
VOCABULARY = (
    "<pad>",
    "a",
    "after",
    "and",
    "ball",
    "behind",
    "blue",
    "box",
    "door",
    "front",
    "go",
    "green",
    "grey",
    "in",
    "key",
    "left",
    "next",
    "object",
    "of",
    "on",
    "open",
    "pick",
    "purple",
    "put",
    "red",
    "right",
    "the",
    "then",
    "to",
    "up",
    "yellow",
    "you",
    "your",
)
WORD_IDS = {word: i for i, word in enumerate(VOCABULARY)}
MAX_MISSION_WORDS = 64
"""the grammar's longest mission: a put-next has at most 15 words ("put the grey box on your left next
to the grey door on your left"), "and" joins two (31), "after you" two of those (64)"""
OBSERVATION_SIZE = VIEW * VIEW * (OBJECT_TYPES + COLOURS + DOOR_STATES) + DIRECTIONS
LEVEL_NAMES = (
    "GoToLocal",
    "PickupLoc",
    "PutNextLocal",
    "GoTo",
    "MiniBossLevel",
    "PutNextS7N4",
    "Unlock",
    "Synth",
    "SynthLoc",
    "SynthSeq",
    "GoToSeq",
    "GoToImpUnlock",
    "BossLevel",
)
"""levels memrl names (BabyAI-<name>-v0); the paper's "PutNext" is minigrid's PutNextS7N4"""


def minigrid_module():
    """minigrid, or a clear error naming the extra that installs it."""
    try:
        import minigrid  # noqa: F401  (registers the BabyAI environments)
        from minigrid.utils.baby_ai_bot import BabyAIBot
    except ImportError:
        raise ImportError("the BabyAI task needs the minigrid package: pip install 'memrl[babyai]'") from None
    return BabyAIBot


def make_env(level: str):
    """``BabyAI-<level>-v0`` from gymnasium's registry."""
    import gymnasium as gym

    minigrid_module()
    return gym.make(f"BabyAI-{level}-v0")


def encode_mission(mission: str) -> np.ndarray:
    """Word ids [MAX_MISSION_WORDS] (0-padded) of a mission string."""
    words = mission.replace(",", " ").split()
    if len(words) > MAX_MISSION_WORDS:
        raise ValueError(f"the mission {mission!r} has {len(words)} words; the task reads at most {MAX_MISSION_WORDS}")
    unknown = [w for w in words if w not in WORD_IDS]
    if unknown:
        raise ValueError(f"the mission {mission!r} has words outside the BabyAI vocabulary: {unknown}")
    ids = np.zeros(MAX_MISSION_WORDS, np.uint8)
    ids[: len(words)] = [WORD_IDS[w] for w in words]
    return ids


def quietly(call, *args, **kwargs):
    """``call`` with its prints swallowed (minigrid's level sampler prints each rejected layout)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return call(*args, **kwargs)


def bot_episode(env, seed: int, max_steps: int) -> dict[str, np.ndarray] | None:
    """One episode of the BabyAI bot on ``env`` with ``seed``: its observations and actions, or None
    when it does not succeed within ``max_steps`` steps."""
    bot_class = minigrid_module()
    observation, _ = quietly(env.reset, seed=seed)
    bot = quietly(bot_class, env.unwrapped)
    images, directions, actions = [], [], []
    for _ in range(max_steps):
        try:
            action = int(quietly(bot.replan))
        except AssertionError:  # the bot's own checks fail on a few layouts
            return None
        images.append(observation["image"])
        directions.append(observation["direction"])
        actions.append(action)
        observation, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            if reward <= 0:
                return None
            return {
                "images": np.asarray(images, np.uint8),
                "directions": np.asarray(directions, np.uint8),
                "actions": np.asarray(actions, np.uint8),
                "mission": encode_mission(observation["mission"]),
            }
    return None


def generate_demos(
    levels: tuple[str, ...], episodes: int, seed: int, max_steps: int, progress: Callable[[int], None] | None = None
) -> dict[str, np.ndarray]:
    """The bot's successful episodes, ``episodes`` per level, as ragged arrays: steps concatenated
    (``images`` [S, 7, 7, 3], ``directions``, ``actions`` [S]) with each episode's ``starts``,
    ``lengths``, ``missions`` [N, MAX_MISSION_WORDS], ``levels`` (index into ``levels``) and env
    ``seeds``; level by level. ``progress(1)`` after each kept episode."""
    kept, seeds, level_ids = [], [], []
    for index, level in enumerate(levels):
        env, env_seed, count = make_env(level), seed, 0
        while count < episodes:
            episode = bot_episode(env, env_seed, max_steps)
            if episode is not None:
                kept.append(episode)
                seeds.append(env_seed)
                level_ids.append(index)
                count += 1
                if progress is not None:
                    progress(1)
            env_seed += 1
        env.close()
    lengths = np.array([len(e["actions"]) for e in kept], np.int32)
    return {
        "images": np.concatenate([e["images"] for e in kept]),
        "directions": np.concatenate([e["directions"] for e in kept]),
        "actions": np.concatenate([e["actions"] for e in kept]),
        "starts": np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32),
        "lengths": lengths,
        "missions": np.stack([e["mission"] for e in kept]),
        "levels": np.array(level_ids, np.uint8),
        "seeds": np.array(seeds, np.int64),
    }


def one_hot_observations(images: jax.Array, directions: jax.Array) -> jax.Array:
    """images [..., 7, 7, 3] and directions [...] (ints) -> [..., OBSERVATION_SIZE] one-hot floats."""
    parts = [jax.nn.one_hot(images[..., i], n) for i, n in enumerate((OBJECT_TYPES, COLOURS, DOOR_STATES))]
    view = jnp.concatenate(parts, axis=-1).reshape(*images.shape[:-3], -1)
    return jnp.concatenate([view, jax.nn.one_hot(directions, DIRECTIONS)], axis=-1)


def one_hot_missions(missions: jax.Array) -> jax.Array:
    """[..., MAX_MISSION_WORDS] word ids -> [..., MAX_MISSION_WORDS * vocabulary] (padding all zeros)."""
    words = jax.nn.one_hot(missions, len(VOCABULARY)).at[..., 0].set(0.0)
    return words.reshape(*missions.shape[:-1], -1)


def step_inputs(images, directions, missions, valid) -> jax.Array:
    """The inputs [T, B, input_size] of a batch of episodes (module docstring): observations
    ([T, B, 7, 7, 3], [T, B]) and missions [B, MAX_MISSION_WORDS], zero where not ``valid`` [T, B]."""
    mission = one_hot_missions(missions)
    mission = jnp.broadcast_to(mission, (*directions.shape, mission.shape[-1]))
    return jnp.concatenate([one_hot_observations(images, directions), mission], axis=-1) * valid[..., None]


def parse_levels(levels: str) -> tuple[str, ...]:
    """ "BossLevel" or "PutNextS7N4,Unlock,..." -> the level names, each checked."""
    names = tuple(name.strip() for name in levels.split(","))
    unknown = [name for name in names if name not in LEVEL_NAMES]
    if unknown or not names:
        raise ValueError(f"BabyAI levels must be comma-separated names from {', '.join(LEVEL_NAMES)}; got {levels!r}")
    return names


@dataclasses.dataclass(frozen=True)
class BabyAI(SequenceTask):
    """Cloning the BabyAI bot's actions from its demos (module docstring)."""

    batch_size: int = 32
    """demos per batch"""
    levels: str = "BossLevel"
    """one level, or several comma-separated (multi-task: episodes per level)"""
    episodes: int = 1_000
    """training demos per level (the paper: 100,000)"""
    test_episodes: int = 100
    """held-out demos per level"""
    max_steps: int = 128
    """steps per sequence; demos longer than this are not kept"""
    seed: int = 0
    """the first environment seed of the demos"""

    input_kind = "vectors"

    def __post_init__(self):
        check_positive(self, "batch_size", "episodes", "test_episodes", "max_steps")
        parse_levels(self.levels)

    @property
    def level_names(self) -> tuple[str, ...]:
        return parse_levels(self.levels)

    @property
    def input_size(self) -> int:
        return OBSERVATION_SIZE + MAX_MISSION_WORDS * len(VOCABULARY)

    @property
    def num_outputs(self) -> int:
        return ACTIONS

    @property
    def bank_settings(self) -> dict:
        """What decides the bank: the settings and the mission width (a bank of another width is another bank)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "batch_size"} | {
            "mission_words": MAX_MISSION_WORDS
        }

    @property
    def demos_path(self):
        """Where the demos are kept."""
        return bank_path("babyai", self.bank_settings)

    def demos(self, progress: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        """The demo bank (made by the bot on the first call, from the cache after)."""
        per_level = self.episodes + self.test_episodes
        return cached_bank(
            "babyai",
            self.bank_settings,
            lambda: generate_demos(self.level_names, per_level, self.seed, self.max_steps, progress),
        )

    @functools.cached_property
    def bank(self) -> dict[str, np.ndarray]:
        """The demos, read from the cache once per task (every trace of ``sample`` uses them)."""
        return self.demos()

    @functools.cached_property
    def splits(self) -> dict[str, np.ndarray]:
        """Per split, the episode indices into the bank: per level the first ``episodes`` train."""
        levels = self.bank["levels"]
        rank = np.concatenate([np.arange(np.sum(levels == i)) for i in range(len(self.level_names))])
        return {"train": np.flatnonzero(rank < self.episodes), "test": np.flatnonzero(rank >= self.episodes)}

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        check_split(split)
        bank = self.bank
        episodes = jnp.asarray(self.splits[split])[
            jax.random.randint(key, (self.batch_size,), 0, len(self.splits[split]))
        ]
        starts, lengths = jnp.asarray(bank["starts"])[episodes], jnp.asarray(bank["lengths"])[episodes]
        t = jnp.arange(self.max_steps)[:, None]
        valid = t < lengths[None]  # [T, B]
        steps = jnp.where(valid, starts[None] + t, 0)
        images, directions = jnp.asarray(bank["images"])[steps], jnp.asarray(bank["directions"])[steps]
        inputs = step_inputs(images, directions, jnp.asarray(bank["missions"])[episodes], valid)
        targets = jnp.where(valid, jnp.asarray(bank["actions"])[steps].astype(jnp.int32), 0)
        return SequenceBatch(inputs, targets, valid)


def rollout_success(
    level: str, act: Callable[..., np.ndarray], episodes: int, seed: int, max_steps: int, batch: int = 64
) -> float:
    """The success rate of a policy on ``episodes`` fresh episodes of ``level`` (environment seeds
    ``seed, seed + 1, ...``), played ``batch`` at a time on the host. ``act(images, directions,
    missions, valid, t)`` gets every episode's observations so far ([max_steps, batch, 7, 7, 3],
    [max_steps, batch], missions [batch, MAX_MISSION_WORDS], valid [max_steps, batch]: the steps
    seen, up to t) and returns the actions at step t [batch]. An episode that has not succeeded
    after ``max_steps`` steps failed."""
    envs = [make_env(level) for _ in range(batch)]
    successes = 0
    for first in range(0, episodes, batch):
        count = min(batch, episodes - first)
        images = np.zeros((max_steps, batch, VIEW, VIEW, 3), np.uint8)
        directions = np.zeros((max_steps, batch), np.uint8)
        valid = np.zeros((max_steps, batch), bool)
        observations = [quietly(env.reset, seed=seed + first + i)[0] for i, env in enumerate(envs[:count])]
        missions = np.zeros((batch, MAX_MISSION_WORDS), np.uint8)
        missions[:count] = [encode_mission(o["mission"]) for o in observations]
        running = np.arange(batch) < count
        for t in range(max_steps):
            for i in np.flatnonzero(running):
                images[t, i], directions[t, i], valid[t, i] = (
                    observations[i]["image"],
                    observations[i]["direction"],
                    True,
                )
            actions = act(images, directions, missions, valid, t)
            for i in np.flatnonzero(running):
                observations[i], reward, terminated, truncated, _ = envs[i].step(int(actions[i]))
                if terminated or truncated:
                    running[i] = False
                    successes += int(reward > 0)
            if not running.any():
                break
    for env in envs:
        env.close()
    return successes / episodes


register("babyai", BabyAI)
