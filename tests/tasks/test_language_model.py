"""The word-level language-model task on CPython's documentation."""

import jax
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks.language_model import HELD_OUT_EVERY, SPLITS, python_documents, split_of, tokenize


@pytest.fixture(scope="module")
def task():
    return tasks.make("language-model", batch_size=8, unroll=12)


def test_tokens_are_words_numbers_and_marks_with_line_ends():
    assert tokenize("Return x[0] if it's 42.\n\n  next line") == [
        "Return",
        "x",
        "[",
        "0",
        "]",
        "if",
        "it's",
        "42",
        ".",
        "<eos>",
        "next",
        "line",
        "<eos>",
    ]


def test_the_corpus_is_the_documentation_split_by_document(task):
    documents = python_documents()
    assert len(documents) > 500 and documents == sorted(documents)
    tokens = {
        split: sum(len(tokenize(text)) for i, (_, text) in enumerate(documents) if split_of(i) == split)
        for split in SPLITS
    }
    assert [i for i in range(2 * HELD_OUT_EVERY) if split_of(i) != "train"] == [0, 10, 20, 30]
    assert {split: len(task.stream(split)) for split in SPLITS} == tokens and tokens["train"] > 300_000
    vocabulary = list(task.vocabulary)
    assert vocabulary[:2] == ["<unk>", "<eos>"] and len(set(vocabulary)) == len(vocabulary) == task.input_size
    assert (task.stream("train") == 0).mean() < 0.02  # words seen once are rare
    with pytest.raises(ValueError, match=r"split must be one of \('train', 'valid', 'test'\), got 'validation'"):
        task.stream("validation")


def test_batches_predict_the_next_word_at_every_step(task):
    batch = task.sample(jax.random.PRNGKey(0))
    assert batch.inputs.shape == batch.targets.shape == (12, 8) and bool(batch.target_mask.all())
    np.testing.assert_array_equal(batch.inputs[1:], batch.targets[:-1])
    stream = task.stream("train")
    column = np.asarray(batch.inputs[:, 3])
    starts = [s for s in np.flatnonzero(stream == column[0]) if np.array_equal(stream[s : s + 12], column)]
    assert starts, "each sequence is a window of the training stream"
    held_out = task.sample(jax.random.PRNGKey(0), "test")
    assert int(held_out.inputs.max()) < task.input_size


def test_an_unroll_longer_than_the_held_out_text_is_refused():
    with pytest.raises(ValueError, match="longer than the held-out text"):
        tasks.make("language-model", unroll=10_000_000)
