"""Word-level language modelling on text that ships with Python: an analogue of WikiText-103 (the
RMC paper's Sec. 4.3, App. A.4), which cannot be downloaded here.

The corpus ``python-docs`` is CPython's own English documentation: the language-reference topics of
``pydoc_data.topics`` and the docstrings of the standard library's modules, classes and functions
(tests and idlelib left out): on Python 3.11.7, about 490k training, 27k validation and 22k test
tokens (WikiText-103: 103M words). It depends on the Python version that runs memrl; a bank
records the version and is made once per version.
Documents (a topic, or a module's docstrings) are split by their sorted position, as WikiText's
three splits: every 20th is held out for testing (``test``), every 20th counted from the 10th for
validation (``valid``: choosing a checkpoint, never trained on), the rest train.

Tokens: words, numbers and single punctuation marks (case kept), ``<eos>`` at each line end,
words seen fewer than ``min_count`` times in the training split as ``<unk>`` (as WikiText does
with rare words). A sequence is ``unroll`` + 1 consecutive tokens from a random offset of its
split's stream: the model reads the first ``unroll`` and predicts each next token, every step
scored; perplexity = exp(mean cross-entropy).
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import functools
import re
import sys
import sysconfig
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from memrl.settings import check_positive
from memrl.tasks.bank import cached_bank
from memrl.tasks.base import SequenceBatch, SequenceTask, register, split_key

CORPORA = ("python-docs",)
SPECIALS = ("<unk>", "<eos>")
TOKEN = re.compile(r"[A-Za-z]+(?:'[a-z]+)?|[0-9]+|[^\sA-Za-z0-9]")
HELD_OUT_EVERY = 20
SPLITS = ("train", "valid", "test")
"""the corpus's splits: ``sample`` draws from train and test (``tasks.SPLITS``), ``stream`` reads any"""


def python_documents() -> list[tuple[str, str]]:
    """(name, text) of every document of the corpus, sorted by name."""
    from pydoc_data.topics import topics

    documents = [(f"topic:{name}", text) for name, text in topics.items()]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if {"site-packages", "test", "tests", "idlelib"} & set(path.relative_to(stdlib).parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        texts = [ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, kinds)]
        text = "\n".join(t for t in texts if t)
        if text:
            documents.append((f"module:{path.relative_to(stdlib)}", text))
    return sorted(documents)


def tokenize(text: str) -> list[str]:
    """Words, numbers and punctuation marks, with ``<eos>`` after each non-empty line."""
    tokens = []
    for line in text.splitlines():
        words = TOKEN.findall(line)
        if words:
            tokens += words + ["<eos>"]
    return tokens


def make_corpus(min_count: int) -> dict[str, np.ndarray]:
    """Token streams of the three splits as ids, and the vocabulary of the training split (ids 0, 1 =
    ``<unk>``, ``<eos>``)."""
    documents = python_documents()
    splits = {split: [] for split in SPLITS}
    for i, (_, text) in enumerate(documents):
        splits[split_of(i)] += tokenize(text)
    counts = collections.Counter(splits["train"])
    vocabulary = list(SPECIALS) + sorted(w for w, n in counts.items() if n >= min_count and w not in SPECIALS)
    ids = {w: i for i, w in enumerate(vocabulary)}
    arrays = {split: np.array([ids.get(w, 0) for w in tokens], np.int32) for split, tokens in splits.items()}
    return {**arrays, "vocabulary": np.array(vocabulary), "documents": np.array(len(documents))}


def split_of(document: int) -> str:
    """The split of the ``document``-th document in sorted order."""
    return {0: "test", HELD_OUT_EVERY // 2: "valid"}.get(document % HELD_OUT_EVERY, "train")


@functools.cache
def corpus(name: str, min_count: int) -> dict[str, np.ndarray]:
    """The corpus's arrays, made once per Python version and kept in memrl's cache."""
    if name not in CORPORA:
        raise ValueError(f"corpus must be one of {CORPORA}, got {name!r}")
    settings = {"corpus": name, "min_count": min_count, "python": sys.version.split()[0], "version": 2}
    return cached_bank("language-model", settings, lambda: make_corpus(min_count))


@dataclasses.dataclass(frozen=True)
class LanguageModel(SequenceTask):
    """Next-word prediction on ``corpus`` over windows of ``unroll`` tokens (module docstring)."""

    batch_size: int = 64
    """sequences per batch (RMC: 64 per GPU, 384 in all)"""
    unroll: int = 100
    """tokens per sequence, the truncated-BPTT window (RMC: 100)"""
    corpus_name: str = "python-docs"
    """the text: python-docs (CPython's documentation; the analogue of WikiText-103)"""
    min_count: int = 2
    """words seen fewer times in training become <unk>"""

    input_kind = "tokens"

    def __post_init__(self):
        check_positive(self, "batch_size", "unroll", "min_count")
        if self.corpus_name not in CORPORA:
            raise ValueError(f"corpus_name must be one of {CORPORA}, got {self.corpus_name!r}")
        if len(self.stream("test")) <= self.unroll + 1:
            raise ValueError(
                f"unroll {self.unroll} is longer than the held-out text ({len(self.stream('test'))} tokens)"
            )

    def stream(self, split: str) -> np.ndarray:
        """The token ids of ``split`` (one of ``SPLITS``), in order."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return corpus(self.corpus_name, self.min_count)[split]

    @property
    def vocabulary(self) -> np.ndarray:
        return corpus(self.corpus_name, self.min_count)["vocabulary"]

    @property
    def input_size(self) -> int:
        return len(self.vocabulary)

    @property
    def num_outputs(self) -> int:
        return len(self.vocabulary)

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        tokens = jnp.asarray(self.stream(split))
        starts = jax.random.randint(split_key(key, split), (self.batch_size,), 0, len(tokens) - self.unroll - 1)
        windows = jax.vmap(lambda s: jax.lax.dynamic_slice(tokens, (s,), (self.unroll + 1,)))(starts)  # [B, unroll + 1]
        inputs, targets = windows[:, :-1].T, windows[:, 1:].T
        return SequenceBatch(inputs, targets, jnp.ones(inputs.shape, bool))


register("language-model", LanguageModel)
