"""ListOps: LRA's generate_tree draws replayed on the golden trees, labels checked by an
independent evaluator, and the sampler's layout."""

import json
import random

import jax
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks.listops import VOCABULARY, apply_operator, random_tree


def evaluate(tokens: list[str]) -> int:
    """The value of a token sequence, by a stack (independent of the generator's recursion)."""
    stack: list = []
    for token in tokens:
        if token == "]":
            args = []
            while not isinstance(stack[-1], str):
                args.append(stack.pop())
            op = stack.pop()
            args = args[::-1]
            stack.append(
                {"[MIN": min, "[MAX": max, "[MED": lambda a: int(np.median(a)), "[SM": lambda a: int(np.sum(a)) % 10}[
                    op
                ](args)
            )
        elif token.startswith("["):
            stack.append(token)
        else:
            stack.append(int(token))
    (value,) = stack
    return value


@pytest.fixture(scope="module")
def golden(data_dir):
    return json.loads((data_dir / "sequence_tasks" / "listops.json").read_text())


def test_the_golden_trees_are_drawn_again_from_the_same_seed(golden):
    """Both groups come from one stream after random.seed(12345): 50 trees of 100 < length < 500,
    then 10 of 4 < length < 30, each tree once."""
    rng, seen = random.Random(golden["generator"]["python_random_seed"]), set()
    for group, lo, hi in (("len_100_500", 100, 500), ("len_5_29", 4, 30)):
        expected = [e for e in golden["examples"] if e["group"] == group]
        drawn, draws = [], 0
        while len(drawn) < len(expected):
            tokens, value = random_tree(rng, max_depth=10, max_args=10)
            draws += 1
            if lo < len(tokens) < hi and tuple(tokens) not in seen:
                seen.add(tuple(tokens))
                drawn.append((tokens, value))
        assert draws == golden["generator"]["trees_drawn"][group]
        for (tokens, value), example in zip(drawn, expected):
            assert " ".join(tokens).replace("]", "X") == example["pipeline_tokens"]
            assert value == example["target"] == evaluate(tokens) and len(tokens) == example["num_tokens"]


def test_operators_follow_the_official_checks(golden):
    for check in golden["operator_checks"]:
        if "args" in check:
            op = check["source"].split()[next(i for i, t in enumerate(check["source"].split()) if t.startswith("["))]
            assert apply_operator(op, check["args"]) == check["value"], check
    assert set(golden["vocab_after_pipeline"]) == {t.replace("]", "X") for t in VOCABULARY[1:-1]}
    assert len(VOCABULARY) == golden["official_pipeline_run"]["vocab_size"] == 17


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    return tasks.make("listops", batch_size=64, min_length=4, max_length=40, train_size=60, test_size=20, seed=3)


def test_batches_hold_whole_trees_answered_at_their_last_token(small):
    batch = jax.jit(small.sample)(jax.random.PRNGKey(0))
    inputs, targets, mask = map(np.asarray, batch[:3])
    assert (
        inputs.shape == targets.shape == mask.shape == (40, 64) and small.input_size == 17 and small.num_outputs == 10
    )
    np.testing.assert_array_equal(mask.sum(0), 1)
    for b in range(64):
        length = int((inputs[:, b] > 0).sum())
        assert 4 < length < 40 and (inputs[length:, b] == 0).all() and mask[length - 1, b]
        assert targets[length - 1, b] == evaluate([VOCABULARY[i] for i in inputs[:length, b]])


def test_the_held_out_trees_are_not_training_trees(small):
    train, test = small.banks["train"][0], small.banks["test"][0]
    assert len(train) == 60 and len(test) == 20
    assert not (train[:, None] == test[None]).all(-1).any()
    assert len({row.tobytes() for row in train}) == 60, "each tree once"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(min_length=40, max_length=40), "min_length must be an integer in"),
        (dict(max_args=1), "max_args must be >= 2"),
        (dict(train_size=0), "train_size must be a positive integer"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tasks.make("listops", **kwargs)
