"""BabyAI behaviour cloning: the bot's demos succeed when replayed in the real environment, the
loader's batches decode back to the stored demos, the held-out demos are other episodes, and the
rollout scores a policy by its successes."""

import jax
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks import babyai

pytest.importorskip("minigrid")  # the babyai extra (in the test install)
LEVEL = "GoToLocal"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # a fresh bank, made by the bot here
        task = tasks.make("babyai", levels=LEVEL, episodes=12, test_episodes=4, max_steps=24, batch_size=6)
        task.demos()
        yield task


def test_the_bots_demos_succeed_when_their_actions_are_replayed(task):
    bank = task.demos()
    assert (
        len(bank["lengths"]) == 16 and (bank["lengths"] <= 24).all() and bank["lengths"].sum() == len(bank["actions"])
    )
    env = babyai.make_env(LEVEL)
    for episode in range(16):
        start, length = bank["starts"][episode], bank["lengths"][episode]
        observation, _ = babyai.quietly(env.reset, seed=int(bank["seeds"][episode]))
        np.testing.assert_array_equal(babyai.encode_mission(observation["mission"]), bank["missions"][episode])
        for t in range(length):
            np.testing.assert_array_equal(observation["image"], bank["images"][start + t])
            assert observation["direction"] == bank["directions"][start + t]
            observation, reward, terminated, truncated, _ = env.step(int(bank["actions"][start + t]))
            assert (terminated or truncated) == (t == length - 1)
        assert reward > 0


def test_batches_decode_back_to_whole_demos_from_their_first_step(task):
    bank = task.demos()
    batch = task.sample(jax.random.PRNGKey(0))
    inputs, targets, mask = (np.asarray(a) for a in batch[:3])
    assert inputs.shape == (24, 6, task.input_size) and task.num_outputs == 7
    view = babyai.VIEW * babyai.VIEW * 20
    for b in range(6):
        length = int(mask[:, b].sum())
        assert mask[:length, b].all() and not inputs[length:, b].any()
        cells = inputs[:length, b, :view].reshape(length, 7, 7, 20)
        images = np.stack([cells[..., :11].argmax(-1), cells[..., 11:17].argmax(-1), cells[..., 17:].argmax(-1)], -1)
        words = inputs[0, b, view + 4 :].reshape(babyai.MAX_MISSION_WORDS, len(babyai.VOCABULARY))
        mission = np.where(words.any(-1), words.argmax(-1), 0)
        matches = [
            e
            for e in range(12)
            if bank["lengths"][e] == length
            and np.array_equal(bank["images"][bank["starts"][e] : bank["starts"][e] + length], images)
        ]
        assert matches, "every sequence is a stored training demo"
        e = matches[0]
        np.testing.assert_array_equal(
            targets[:length, b], bank["actions"][bank["starts"][e] : bank["starts"][e] + length]
        )
        np.testing.assert_array_equal(
            inputs[:length, b, view : view + 4].argmax(-1),
            bank["directions"][bank["starts"][e] : bank["starts"][e] + length],
        )
        np.testing.assert_array_equal(mission, bank["missions"][e])


def test_held_out_demos_are_other_episodes(task):
    seeds = task.demos()["seeds"]
    assert set(seeds[task.splits["train"]]).isdisjoint(seeds[task.splits["test"]]) and len(task.splits["test"]) == 4


def test_the_rollout_counts_successes_of_the_played_policy(task):
    """Replaying the bot's demos of the same seeds succeeds every time; always 'done' never does."""
    bank = task.demos()
    first = {int(s): e for e, s in enumerate(bank["seeds"])}
    seed = int(bank["seeds"][0])
    n = 5
    assert all(seed + i in first for i in range(n)), "the bot succeeded on consecutive seeds"

    def replay(images, directions, missions, valid, t):
        return np.array(
            [
                bank["actions"][bank["starts"][first[seed + i]] + min(t, bank["lengths"][first[seed + i]] - 1)]
                for i in range(len(missions))
            ]
        )

    assert babyai.rollout_success(LEVEL, replay, n, seed, max_steps=24, batch=n) == 1.0
    assert babyai.rollout_success(LEVEL, lambda *args: np.full(3, 6), 3, seed, max_steps=4, batch=3) == 0.0


@pytest.mark.parametrize(
    "settings, message",
    [
        (dict(levels="Boss"), "BabyAI levels must be comma-separated names from"),
        (dict(levels="BossLevel,"), "BabyAI levels must be comma-separated names from"),
        (dict(episodes=0), "episodes must be a positive integer"),
        (dict(max_steps=-1), "max_steps must be a positive integer"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        tasks.make("babyai", **settings)


def test_missions_outside_the_vocabulary_are_refused():
    with pytest.raises(ValueError, match="outside the BabyAI vocabulary: \\['fetch'\\]"):
        babyai.encode_mission("fetch the red ball")
