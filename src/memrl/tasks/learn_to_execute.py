"""Learning to Execute (Zaremba & Sutskever 2014) as sonnet's ``learn_to_execute`` generates it and
the RMC paper trains on it (Santoro et al. 2018, Sec. 4.2 and App. A.3): character-level
mini-programs whose printed value the model must output, and memorisation tasks.

Programs (reference README §6). A program of literal length L and nesting N applies N operations
drawn from the task's set; each takes its first operand from the one before (wrapped in
parentheses) and new L-digit literals for the rest; the outer parentheses are dropped:

    addition  (15759+61097)+62508                 algebra  + - *        control  if/else, for
    x=Afor[k]x+=B  = A + k·B (k in 1..9)          AifB<CelseD (or >)    all, alg-ctrl: the mixes
    copy 84373 -> 84373    reverse 89849 -> 94898    double 62435 -> 6243562435   (N = 1 only)

Program values are taken modulo 10^(L+1) (Python's modulo: negative values wrap), memorisation
outputs are not. The vocabulary is sonnet's 45 character tokens; programs are right-padded with
``.`` to num_steps = (3L+10)(N−1) + 4L+10 + 2(N−1) characters (L+1 for memorisation), targets to
num_steps_out = 2L (L+1, or 2L+1 for double).

The model reads one stream through the same core, as sonnet's example does: the program, then
num_steps_out decoding steps whose outputs are scored at the target's characters (not its
padding). Two differences, for fixed shapes: sonnet stops the encoder at the program's last
character (``sequence_length``), so here programs are LEFT-padded, their last character just
before the decoding steps; and sonnet's decoding inputs are zeros, here the token ``_null_``
(which no program contains).

Curricula over (L, N) up to (``max_length``, ``max_nesting``): "baseline" (always the target),
"mix" (each sequence's L and N uniform in 1..max, the RMC paper's), "naive" (one level at a time,
from (1, 1), L first) and "combine" (each sequence uniform up to the current level). Naive and
combine move up a level as sonnet's curriculum does: after ``min_tries`` evaluations at a level,
when the mean change of the last (at most 10) held-out losses over their mean is below
``loss_threshold`` (so, as written there, whenever the loss fell). The held-out split is always at
the target level, as sonnet's test mode.

Programs are strings, made on the host: ``programs_per_level`` per (L, N) level for training
and ``test_programs`` at the target, from ``Random(seed)`` and ``Random(seed + 1)``, kept in fixed
arrays in memrl's cache folder, and sampled in JAX. Unlike sonnet's endless stream, training sees a
finite (large) set of programs per level.
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
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, register, split_key

VOCABULARY = (
    "_unk_",
    "_null_",
    "_eos_",
    "|",
    " ",
    "!",
    "(",
    ")",
    "*",
    "+",
    "-",
    ".",
    "/",
    *(str(d) for d in range(10)),
    ":",
    "<",
    "=",
    ">",
    "[",
    "]",
    "a",
    "e",
    "else",
    "f",
    "for",
    "g",
    "i",
    "if",
    "l",
    "n",
    "o",
    "r",
    "range",
    "s",
    "x",
    "~",
)
TOKEN_IDS = {token: i for i, token in enumerate(VOCABULARY)}
PAD, DECODE = TOKEN_IDS["."], TOKEN_IDS["_null_"]
OPERANDS = {"add": 2, "subtract": 2, "multiply": 2, "if": 4, "for": 2, "copy": 1, "reverse": 1, "double": 1}
PROGRAMS = {
    "addition": ("add",),
    "algebra": ("add", "subtract", "multiply"),
    "control": ("if", "for"),
    "all": ("add", "subtract", "multiply", "if", "for"),
    "alg-ctrl": ("add", "subtract", "if"),
    "copy": ("copy",),
    "reverse": ("reverse",),
    "double": ("double",),
}
MEMORISATION = ("copy", "reverse", "double")
CURRICULA = ("baseline", "mix", "naive", "combine")
LOSS_WINDOW = 10  # sonnet: max(min(min_tries, 10), 5) losses


def apply_operation(operation: str, values: list, codes: list[str], rng: random.Random) -> tuple:
    """(value, code) of one operation; ``if`` draws its comparator and ``for`` its count here, as sonnet's eval does."""
    if operation == "add":
        return values[0] + values[1], f"{codes[0]}+{codes[1]}"
    if operation == "subtract":
        return values[0] - values[1], f"{codes[0]}-{codes[1]}"
    if operation == "multiply":
        return values[0] * values[1], f"{codes[0]}*{codes[1]}"
    if operation == "if":
        comparator = "<>"[rng.randint(0, 1)]
        holds = values[1] < values[2] if comparator == "<" else values[1] > values[2]
        return (values[0] if holds else values[3]), f"{codes[0]}if{codes[1]}{comparator}{codes[2]}else{codes[3]}"
    if operation == "for":
        count = rng.randint(1, 9)
        return values[0] + count * values[1], f"x={codes[0]}for[{count}]x+={codes[1]}"
    if operation == "reverse":
        return str(values[0])[::-1], codes[0]
    if operation == "double":
        return str(values[0]) * 2, codes[0]
    return values[0], codes[0]  # copy


def generate_program(rng: random.Random, length: int, nesting: int, operations: tuple[str, ...]) -> tuple[str, str]:
    """(program text, its output) as sonnet's ``generate_code(length, nesting, ops)`` draws it."""
    stack: list[tuple] = []
    for _ in range(nesting):
        operation = rng.choice(operations)
        operands = []
        for _ in range(OPERANDS[operation]):
            if stack:
                operands.append(stack.pop())
            else:
                literal = rng.randint(10 ** (length - 1), 10**length - 1)
                operands.append((literal, str(literal)))
        value, code = apply_operation(operation, [v for v, _ in operands], [c for _, c in operands], rng)
        stack.append((value, f"({code})"))
    value, code = stack.pop()
    if operation not in MEMORISATION:
        value = int(value) % 10 ** (length + 1)
    return code[1:-1], str(value)


def sequence_sizes(program: str, max_length: int, max_nesting: int) -> tuple[int, int]:
    """sonnet's (num_steps, num_steps_out) for character tokens."""
    if program in MEMORISATION:
        return max_length + 1, (2 * max_length + 1 if program == "double" else max_length + 1)
    return (3 * max_length + 10) * (max_nesting - 1) + 4 * max_length + 10 + 2 * (max_nesting - 1), 2 * max_length


@dataclasses.dataclass(frozen=True)
class LearnToExecute(SequenceTask):
    """The output of a mini-program (or a memorised copy), from banks of sonnet-drawn programs (module docstring)."""

    batch_size: int = 128
    """sequences per batch (RMC: 128)"""
    program: str = "addition"
    """addition, algebra, control, all ("full program"), alg-ctrl; or the memorisation tasks copy, reverse, double"""
    max_length: int = 5
    """literal length L at the target (RMC: 5; and 6)"""
    max_nesting: int = 2
    """nesting N at the target (RMC: 2; and 3); 1 for memorisation tasks"""
    curriculum: str = "mix"
    """baseline, mix (RMC's), naive or combine"""
    loss_threshold: float = 0.1
    min_tries: int = 10
    """naive and combine: held-out evaluations at a level before it may change"""
    programs_per_level: int = 20_000
    """training programs made for each (L, N) level"""
    test_programs: int = 12_800
    """held-out programs at the target level (RMC evaluates on 12,800)"""
    seed: int = 0
    """seed of Python's ``random`` that draws the programs (held out: seed + 1)"""

    input_kind = "tokens"

    def __post_init__(self):
        check_positive(
            self, "batch_size", "max_length", "max_nesting", "min_tries", "programs_per_level", "test_programs"
        )
        if self.program not in PROGRAMS:
            raise ValueError(f"program must be one of {tuple(PROGRAMS)}, got {self.program!r}")
        if self.curriculum not in CURRICULA:
            raise ValueError(f"curriculum must be one of {CURRICULA}, got {self.curriculum!r}")
        if self.program in MEMORISATION and self.max_nesting != 1:
            raise ValueError(
                f"memorisation tasks ({', '.join(MEMORISATION)}) have max_nesting 1 (sonnet refuses longer ones), got {self.max_nesting}"
            )

    @property
    def input_size(self) -> int:
        return len(VOCABULARY)

    @property
    def num_outputs(self) -> int:
        return len(VOCABULARY)

    @property
    def sizes(self) -> tuple[int, int]:
        """(num_steps, num_steps_out): program and output characters."""
        return sequence_sizes(self.program, self.max_length, self.max_nesting)

    @property
    def levels(self) -> list[tuple[int, int]]:
        """The (L, N) levels of the training bank, index (N − 1)·max_length + L − 1."""
        return [
            (length, nesting) for nesting in range(1, self.max_nesting + 1) for length in range(1, self.max_length + 1)
        ]

    def encode(self, programs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(programs [P, num_steps] left-padded, outputs [P, num_steps_out] right-padded, output lengths [P]) as token ids."""
        steps, steps_out = self.sizes
        inputs, outputs = (
            np.full((len(programs), steps), PAD, np.uint8),
            np.full((len(programs), steps_out), PAD, np.uint8),
        )
        lengths = np.zeros(len(programs), np.uint8)
        for row, (code, value) in enumerate(programs):
            if len(code) > steps or len(value) > steps_out:
                raise ValueError(f"program {code!r} -> {value!r} is longer than ({steps}, {steps_out}) characters")
            inputs[row, steps - len(code) :] = [TOKEN_IDS[c] for c in code]
            outputs[row, : len(value)] = [TOKEN_IDS[c] for c in value]
            lengths[row] = len(value)
        return inputs, outputs, lengths

    @functools.cached_property
    def banks(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per split, (programs [levels, P, num_steps], outputs [levels, P, num_steps_out], output lengths [levels, P]);
        the held-out split has one level, the target."""

        def make() -> dict[str, np.ndarray]:
            operations, train, test = PROGRAMS[self.program], random.Random(self.seed), random.Random(self.seed + 1)
            made = [
                self.encode([generate_program(train, l, n, operations) for _ in range(self.programs_per_level)])
                for l, n in self.levels
            ]
            held_out = self.encode(
                [
                    generate_program(test, self.max_length, self.max_nesting, operations)
                    for _ in range(self.test_programs)
                ]
            )
            return {f"train_{i}": np.stack([m[i] for m in made]) for i in range(3)} | {
                f"test_{i}": held_out[i][None] for i in range(3)
            }

        kept = ("program", "max_length", "max_nesting", "programs_per_level", "test_programs", "seed")
        bank = cached_bank("learn-to-execute", {k: getattr(self, k) for k in kept}, make)
        return {split: tuple(bank[f"{split}_{i}"] for i in range(3)) for split in ("train", "test")}

    def initial_state(self) -> dict:
        """The curriculum's state: the current L and N, evaluations at them, the window of held-out losses."""
        one, zero = jnp.ones((), jnp.int32), jnp.zeros((), jnp.int32)
        return {"length": one, "nesting": one, "tries": zero, "losses": jnp.zeros(LOSS_WINDOW), "count": zero}

    def next_state(self, state: dict, held_out_loss: jax.Array) -> dict:
        """sonnet's ``LTECurriculum.update(loss)`` for naive and combine; the others keep no state."""
        if self.curriculum not in ("naive", "combine"):
            return state
        losses = jnp.roll(state["losses"], -1).at[-1].set(held_out_loss)
        count = jnp.minimum(state["count"] + 1, LOSS_WINDOW)
        valid = jnp.arange(LOSS_WINDOW) >= LOSS_WINDOW - count
        first = losses[LOSS_WINDOW - count]
        mean_change = jnp.where(count > 1, (losses[-1] - first) / jnp.maximum(count - 1, 1), 0.0)
        mean_loss = jnp.sum(jnp.where(valid, losses, 0.0)) / count
        ready = state["tries"] >= self.min_tries - 1
        advance = ready & (mean_change / mean_loss < self.loss_threshold)
        stay = {
            **state,
            "tries": jnp.where(ready, state["tries"], state["tries"] + 1),
            "losses": losses,
            "count": count,
        }
        longer = state["length"] < self.max_length  # L first, then N (L stays at its maximum)
        moved = {
            **self.initial_state(),
            "length": jnp.where(longer, state["length"] + 1, state["length"]),
            "nesting": jnp.where(longer, state["nesting"], jnp.minimum(state["nesting"] + 1, self.max_nesting)),
        }
        return jax.tree.map(lambda m, s: jnp.where(advance, m, s), moved, stay)

    def state_metrics(self, state: dict) -> dict[str, jax.Array]:
        """Naive and combine: the current L and N."""
        if self.curriculum not in ("naive", "combine"):
            return {}
        return {"curriculum_length": state["length"], "curriculum_nesting": state["nesting"]}

    def sample(self, key, split: str = "train", state: dict | None = None) -> SequenceBatch:
        check_split(split)
        programs, outputs, lengths = (jnp.asarray(a) for a in self.banks[split])
        key = split_key(key, split)
        level_key, row_key = jax.random.split(key)
        level = self._levels(level_key, split, state)
        rows = jax.random.randint(row_key, (self.batch_size,), 0, programs.shape[1])
        steps, steps_out = self.sizes
        decode = jnp.full((steps_out, self.batch_size), DECODE, jnp.int32)
        inputs = jnp.concatenate([programs[level, rows].astype(jnp.int32).T, decode])
        pad = jnp.full((steps, self.batch_size), PAD, jnp.int32)
        targets = jnp.concatenate([pad, outputs[level, rows].astype(jnp.int32).T])
        scored = jnp.arange(steps_out)[:, None] < lengths[level, rows][None].astype(jnp.int32)
        mask = jnp.concatenate([jnp.zeros((steps, self.batch_size), bool), scored])
        return SequenceBatch(inputs, targets, mask)

    def _levels(self, key, split: str, state: dict | None) -> jax.Array:
        """[B] the level (index into ``levels``; 0 for the held-out bank) of each sequence."""
        b, target = self.batch_size, len(self.levels) - 1
        if split == "test":
            return jnp.zeros(b, jnp.int32)
        if self.curriculum == "baseline":
            return jnp.full(b, target, jnp.int32)
        if self.curriculum == "mix":
            return jax.random.randint(key, (b,), 0, target + 1)
        state = state or self.initial_state()
        if self.curriculum == "naive":
            length, nesting = jnp.full(b, state["length"]), jnp.full(b, state["nesting"])
        else:  # combine: L and N uniform up to the current ones
            length_key, nesting_key = jax.random.split(key)
            length = jax.random.randint(length_key, (b,), 1, state["length"] + 1)
            nesting = jax.random.randint(nesting_key, (b,), 1, state["nesting"] + 1)
        return ((nesting - 1) * self.max_length + length - 1).astype(jnp.int32)


register("learn-to-execute", LearnToExecute)
