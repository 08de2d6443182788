"""Learning to Execute: sonnet's programs replayed on the golden samples, the sequence sizes, the
layout of a batch (program, decoding steps, scored characters), and the curricula."""

import dataclasses
import json
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from memrl import tasks
from memrl.tasks.learn_to_execute import (
    DECODE,
    MEMORISATION,
    PAD,
    PROGRAMS,
    VOCABULARY,
    generate_program,
    sequence_sizes,
)

GOLDEN_PROGRAMS = {
    "ADDITION": "addition",
    "ALGEBRA": "algebra",
    "CONTROL": "control",
    "ALG_CTRL": "alg-ctrl",
    "ALL": "all",
    "COPY": "copy",
    "REVERSE": "reverse",
    "DOUBLE": "double",
}


@pytest.fixture(scope="module")
def golden(data_dir):
    return json.loads((data_dir / "sequence_tasks" / "learn_to_execute.json").read_text())


def test_the_golden_programs_are_drawn_again(golden):
    """Task i of the file after random.seed(100 + i); its constructor drew one batch of 20 before the recorded one."""
    assert list(golden["tasks"]) == list(GOLDEN_PROGRAMS)
    for i, (name, recorded) in enumerate(golden["tasks"].items()):
        program = GOLDEN_PROGRAMS[name]
        length, nesting = (5, 1) if program in MEMORISATION else (5, 2)
        rng = random.Random(100 + i)
        drawn = [generate_program(rng, length, nesting, PROGRAMS[program]) for _ in range(40)][20:]
        assert [(s["program"], s["target"]) for s in recorded["samples"]] == drawn, name
        assert (recorded["num_steps"], recorded["num_steps_out"]) == sequence_sizes(program, length, nesting)


def test_vocabulary_and_sequence_sizes_are_sonnets(golden):
    assert list(VOCABULARY) == golden["vocab_id_to_token"] and PAD == golden["pad_token_id"]
    assert VOCABULARY[golden["start_token_id"]] == "~" and VOCABULARY[DECODE] == "_null_"
    for row in golden["num_steps_table"]:
        assert tuple(row["prog"]) == sequence_sizes("addition", row["L"], row["N"])
        if row["N"] == 1:
            assert tuple(row["memory1"]) == sequence_sizes("copy", row["L"], 1) and tuple(
                row["memory2"]
            ) == sequence_sizes("double", row["L"], 1)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    return tasks.make(
        "learn-to-execute",
        batch_size=64,
        program="all",
        max_length=2,
        max_nesting=2,
        programs_per_level=50,
        test_programs=30,
        curriculum="baseline",
    )


def decode(ids) -> str:
    return "".join(VOCABULARY[i] for i in ids)


def test_a_batch_is_the_program_then_decoding_steps_scored_at_the_output(small):
    steps, steps_out = small.sizes
    batch = jax.jit(small.sample)(jax.random.PRNGKey(0))
    inputs, targets, mask = map(np.asarray, batch[:3])
    assert (
        inputs.shape == targets.shape == mask.shape == (steps + steps_out, 64)
        and small.num_outputs == small.input_size == 45
    )
    assert not mask[:steps].any() and (inputs[steps:] == DECODE).all()
    bank = {decode(row[row != PAD]) for row in small.banks["train"][0][-1]}
    for b in range(64):
        program = decode(inputs[:steps, b][inputs[:steps, b] != PAD])
        assert program in bank and decode(inputs[:steps, b]).endswith(program), (
            "left-padded, from the target level's bank"
        )
        output = decode(targets[steps:, b][mask[steps:, b]])
        assert output and set(decode(targets[steps:, b][~mask[steps:, b]])) <= {"."}, "padding is not scored"
        assert program.count("(") == 1 and len(output) <= 3, "nesting 2, output modulo 10**3"


def test_mix_draws_every_level_and_the_held_out_split_is_the_target(small):
    mixed = dataclasses.replace(small, curriculum="mix", batch_size=400)
    batch = mixed.sample(jax.random.PRNGKey(1))
    steps = mixed.sizes[0]
    programs = [decode(np.asarray(batch.inputs)[:steps, b]).lstrip(".") for b in range(400)]
    nests = np.array([p.count("(") + 1 for p in programs])
    assert set(nests) == {1, 2} and 0.35 < (nests == 2).mean() < 0.65
    test = mixed.sample(jax.random.PRNGKey(1), "test")
    held_out = [decode(np.asarray(test.inputs)[:steps, b]).lstrip(".") for b in range(400)]
    assert all(p.count("(") == 1 for p in held_out)


def test_naive_moves_up_length_first_then_nesting_and_combine_samples_below_the_current_level():
    task = tasks.make(
        "learn-to-execute",
        program="addition",
        max_length=2,
        max_nesting=2,
        curriculum="naive",
        min_tries=2,
        programs_per_level=5,
        test_programs=5,
    )
    state = task.initial_state()
    levels = []
    for loss in (3.0, 2.0, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4):  # falling: sonnet's rule moves up after min_tries
        state = task.next_state(state, jnp.asarray(loss))
        levels.append((int(state["length"]), int(state["nesting"])))
    assert levels == [(1, 1), (2, 1), (2, 1), (2, 2), (2, 2), (2, 2), (2, 2), (2, 2)]
    rising = task.initial_state()
    for loss in (1.0, 2.0, 3.0, 4.0):
        rising = task.next_state(rising, jnp.asarray(loss))
    assert int(rising["length"]) == 1, "a loss that grows keeps the level"
    combine = dataclasses.replace(task, curriculum="combine", batch_size=200)
    at = {**combine.initial_state(), "length": jnp.asarray(2), "nesting": jnp.asarray(1)}
    batch = combine.sample(jax.random.PRNGKey(0), "train", at)
    programs = [decode(np.asarray(batch.inputs)[: combine.sizes[0], b]).lstrip(".") for b in range(200)]
    assert all("(" not in p for p in programs) and {len(p.split("+")[0]) for p in programs} == {1, 2}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(program="sort"), "program must be one of"),
        (dict(curriculum="random"), "curriculum must be one of"),
        (dict(program="copy", max_nesting=2), "memorisation tasks .* have max_nesting 1"),
        (dict(max_length=0), "max_length must be a positive integer"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tasks.make("learn-to-execute", **kwargs)
