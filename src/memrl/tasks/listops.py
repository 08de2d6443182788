"""ListOps as the Long Range Arena builds it (Tay et al. 2021; used by TLB, Didolkar et al. 2022,
Sec. 5): nested list operations over the digits 0..9, read token by token, answered with the value
of the whole expression (10 classes) after the last token.

    [MAX 2 9 [MIN 4 7 ] 0 ]  ->  9

Trees are drawn as LRA's ``generate_tree(1, max_depth, max_args)`` draws them, with Python's
``random`` (reference README §7): at each node ``random()`` (1 at ``max_depth``), a leaf if it is
above 0.25 (``choice(range(10))``), else ``randint(2, max_args)`` children drawn first and the
operator (MIN, MAX, MED, SM) after them. MED is the median truncated to an integer, SM the sum mod
10. Only trees with ``min_length < length < max_length`` tokens are kept, each tree once; the
first ``train_size`` form the training split and the next ``test_size`` the held-out one (the
official data: 96,000 and 2,000 trees of 500 < length < 2000 tokens).

Tokens keep the brackets, as LRA's pipeline does (it writes ``]`` as ``X``), in memrl's own fixed
vocabulary of 17 ids: 0 the padding, 1..10 the digits 0..9, 11..14 the operators, 15 the closing
bracket, 16 unused (LRA's out-of-vocabulary id; its own ids depend on Python's hash seed and are
not reproducible). Sequences are padded to ``max_length`` steps; the answer is scored at the last
token of each.

The trees are strings, made on the host: a split's bank is generated once, on its first
``sample``, and kept in memrl's cache folder (``~/.cache/memrl/tasks``, or ``XDG_CACHE_HOME``);
sampling draws whole sequences from the bank in JAX.
"""

from __future__ import annotations

import dataclasses
import functools
import random

import jax
import jax.numpy as jnp
import numpy as np

from memrl.settings import check_positive
from memrl.tasks.bank import cached_bank
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, register

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")  # LRA's order: ``choice`` draws by position
CLOSE = "]"
VOCABULARY = ("<pad>", *(str(d) for d in range(10)), *OPERATORS, CLOSE, "<oov>")
TOKEN_IDS = {token: i for i, token in enumerate(VOCABULARY)}
LEAF_PROBABILITY_CUT = 0.25  # LRA's VALUE_P: a node is a leaf when random() > 0.25


def apply_operator(operator: str, values: list[int]) -> int:
    """LRA's ``to_value`` of one operator applied to its arguments."""
    if operator == "[MIN":
        return min(values)
    if operator == "[MAX":
        return max(values)
    if operator == "[SM":
        return sum(values) % 10
    ordered, middle = sorted(values), len(values) // 2  # [MED: int(np.median(...)), truncated
    return ordered[middle] if len(values) % 2 else (ordered[middle - 1] + ordered[middle]) // 2


def random_tree(rng: random.Random, max_depth: int, max_args: int, depth: int = 1) -> tuple[list[str], int]:
    """(tokens, value) of one tree, drawn as ``generate_tree(depth, max_depth, max_args)`` draws it."""
    r = rng.random() if depth < max_depth else 1
    if r > LEAF_PROBABILITY_CUT:
        value = rng.choice(range(10))
        return [str(value)], value
    children = [random_tree(rng, max_depth, max_args, depth + 1) for _ in range(rng.randint(2, max_args))]
    operator = rng.choice(OPERATORS)
    tokens = [operator, *(token for child, _ in children for token in child), CLOSE]
    return tokens, apply_operator(operator, [value for _, value in children])


def unique_trees(seed: int, count: int, min_length: int, max_length: int, max_depth: int, max_args: int):
    """The first ``count`` distinct trees of ``min_length < length < max_length`` tokens from ``Random(seed)``."""
    rng, seen = random.Random(seed), set()
    while len(seen) < count:
        tokens, value = random_tree(rng, max_depth, max_args)
        if min_length < len(tokens) < max_length and tuple(tokens) not in seen:
            seen.add(tuple(tokens))
            yield tokens, value


@dataclasses.dataclass(frozen=True)
class ListOps(SequenceTask):
    """The value of a nested list expression, from a bank of LRA-drawn trees (module docstring)."""

    batch_size: int = 32
    """sequences per batch (LRA ListOps: 32)"""
    min_length: int = 500
    """trees have more tokens than this (LRA: 500)"""
    max_length: int = 2000
    """and fewer than this; the padded sequence length (LRA: 2000)"""
    max_depth: int = 10
    max_args: int = 10
    train_size: int = 96_000
    """training trees (LRA: 96,000)"""
    test_size: int = 2_000
    """held-out trees, distinct from the training ones (LRA: 2,000)"""
    seed: int = 0
    """seed of Python's ``random`` that draws the trees"""

    input_kind = "tokens"

    def __post_init__(self):
        check_positive(self, "batch_size", "max_length", "max_depth", "max_args", "train_size", "test_size")
        if not isinstance(self.min_length, int) or not 0 <= self.min_length < self.max_length - 1:
            raise ValueError(f"ListOps.min_length must be an integer in [0, max_length - 1), got {self.min_length!r}")
        if self.max_args < 2:
            raise ValueError(
                f"ListOps.max_args must be >= 2 (an operator takes 2..max_args arguments), got {self.max_args}"
            )

    @property
    def input_size(self) -> int:
        return len(VOCABULARY)

    @property
    def num_outputs(self) -> int:
        return 10

    @functools.cached_property
    def banks(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per split, (tokens [trees, max_length] uint8, zero-padded; values [trees] uint8)."""

        def make() -> dict[str, np.ndarray]:
            trees = list(
                unique_trees(
                    self.seed,
                    self.train_size + self.test_size,
                    self.min_length,
                    self.max_length,
                    self.max_depth,
                    self.max_args,
                )
            )
            tokens = np.zeros((len(trees), self.max_length), np.uint8)
            for row, (tree, _) in enumerate(trees):
                tokens[row, : len(tree)] = [TOKEN_IDS[t] for t in tree]
            return {"tokens": tokens, "values": np.array([value for _, value in trees], np.uint8)}

        settings = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "batch_size"}
        bank = cached_bank("listops", settings, make)
        tokens, values, n = bank["tokens"], bank["values"], self.train_size
        return {"train": (tokens[:n], values[:n]), "test": (tokens[n:], values[n:])}

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        check_split(split)
        tokens, values = self.banks[split]
        rows = jax.random.randint(key, (self.batch_size,), 0, len(values))
        inputs = jnp.asarray(tokens)[rows].astype(jnp.int32).T  # [T, B]
        last = (inputs > 0).sum(0) - 1
        at_last = jnp.arange(self.max_length)[:, None] == last[None]
        targets = jnp.where(at_last, jnp.asarray(values)[rows].astype(jnp.int32)[None], 0)
        return SequenceBatch(inputs, targets, at_last)


register("listops", ListOps)
