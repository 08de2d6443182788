"""Paired Associative Inference, PAI (Banino et al. 2020, "MEMO", Sec. 4.1; used by Lampinen et
al. 2021, App. B.4), on procedurally generated stimuli.

Each trial draws ``num_chains`` chains of ``chain_length`` distinct stimuli, A -> B -> C for the
paper's length 3. The memory holds every adjacent pair of every chain, (A_i, B_i) and (B_i, C_i),
in a random order. A trial asks one of two kinds of query, as MEMO's batches do (half of each):

- indirect: the cue is A_q and the two choices are its chain's end C_q (the match) and the end C_f
  of another chain (the lure). No pair links A_q to C_q: the answer needs an inference across
  ``chain_length - 1`` memories;
- direct: the cue and the match are one stored pair of chain q (A_q -> B_q or B_q -> C_q), the
  lure the item in the match's place in another chain (B_f or C_f): recall of one memory.

The lure is always in memory, so familiarity alone cannot pick the match; the match's place among
the two choices is random. Chains of 2 have only direct queries.

With ``stored_chains`` < ``num_chains`` a trial stores the pairs of that many chains only, and the
slots of the others are masked out (``PAITrial.memory_mask``), so that a curriculum can grow the
memory (e.g. 2, 4, 8 then 16 chains) while the trials keep their shapes.

As a sequence task a batch is one step (T = 1): the inputs are the trials (``PAITrial``, read by
HTM's App. B.4 model, ``agents/associative_inference.py``), the target the index of the match
among the two choices, and the batch's ``kinds`` say which trials ask direct and indirect queries
(no "indirect" kind for chains of 2; a kind may have no trial in a batch, e.g. in a warm-up).

The stimuli stand in for MEMO's ImageNet images: random binary patterns (entries ±1, scaled to
unit norm) of ``stimulus_dim``, from a pool of ``pool_size`` per split, the "test" pool disjoint from the
"train" pool, so that test accuracy measures inference on stimuli never trained on.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from memrl.settings import check_positive
from memrl.tasks.base import SequenceBatch, SequenceTask, check_split, register

POOL_SEED = 2020  # the pools are fixed: split i uses PRNGKey(POOL_SEED + i)


class PAITrial(NamedTuple):
    memory: jax.Array  # [B, num_chains * (chain_length - 1), 2, D] the stored pairs
    query: jax.Array  # [B, D] the cue
    choices: jax.Array  # [B, 2, D] the match and the lure
    memory_mask: jax.Array  # [B, num_chains * (chain_length - 1)] bool, true where a pair is stored


@dataclasses.dataclass(frozen=True)
class PairedAssociativeInference(SequenceTask):
    batch_size: int = 32
    """trials per batch (MEMO and HTM: 32)"""
    num_chains: int = 16
    """chains (triplets, for length 3) per trial"""
    chain_length: int = 3
    """stimuli per chain; an indirect query's cue is its first, the match its last"""
    direct_fraction: float = 0.5
    """fraction of each batch's trials that ask a direct query (MEMO: half)"""
    stimulus_dim: int = 64
    pool_size: int = 1000
    """stimuli per split"""
    stored_chains: int = 0
    """chains whose pairs a trial stores and asks about (0: all ``num_chains``); the others' slots are masked out"""

    input_kind = "trials"

    def __post_init__(self):
        check_positive(self, "batch_size")
        if self.num_chains < 2:
            raise ValueError(f"num_chains must be >= 2 (the foil comes from another chain), got {self.num_chains}")
        if self.stored_chains != 0 and not 2 <= self.stored_chains <= self.num_chains:
            raise ValueError(
                f"stored_chains must be 0 (all) or between 2 and num_chains ({self.num_chains}), got {self.stored_chains}"
            )
        if self.chain_length < 2:
            raise ValueError(f"chain_length must be >= 2, got {self.chain_length}")
        if not 0.0 <= self.direct_fraction <= 1.0:
            raise ValueError(f"direct_fraction must be in [0, 1], got {self.direct_fraction}")
        if self.stimulus_dim < 1:
            raise ValueError(f"stimulus_dim must be >= 1, got {self.stimulus_dim}")
        if self.pool_size < self.num_chains * self.chain_length:
            raise ValueError(
                f"pool_size ({self.pool_size}) must hold num_chains * chain_length = "
                f"{self.num_chains * self.chain_length} distinct stimuli"
            )

    @property
    def num_outputs(self) -> int:
        """The two choices."""
        return 2

    @property
    def num_pairs(self) -> int:
        """Slots of a trial's memory, stored or masked."""
        return self.num_chains * (self.chain_length - 1)

    @property
    def active_chains(self) -> int:
        """Chains a trial stores and asks about."""
        return self.stored_chains or self.num_chains

    def stimuli(self, split: str) -> jax.Array:
        """[pool_size, stimulus_dim] the fixed ±1 patterns of ``split``, scaled to unit norm."""
        key = jax.random.PRNGKey(POOL_SEED + check_split(split))
        signs = jax.random.rademacher(key, (self.pool_size, self.stimulus_dim), dtype=jnp.float32)
        return signs / jnp.sqrt(self.stimulus_dim)

    def sample(self, key, split: str = "train", state=None) -> SequenceBatch:
        """The first round(direct_fraction * batch_size) trials ask direct queries, the rest indirect."""
        pool, size = self.stimuli(split), self.batch_size
        direct = jnp.arange(size) < round(self.direct_fraction * size)
        trial, label, hops = jax.vmap(lambda k, d: self._trial(k, d, pool))(jax.random.split(key, size), direct)
        kinds = {"direct": hops == 1} | ({"indirect": hops > 1} if self.chain_length > 2 else {})
        return SequenceBatch(trial, label[None], jnp.ones((1, size), bool), kinds)

    def _trial(self, key, direct, pool) -> tuple[PAITrial, jax.Array, jax.Array]:
        """(the trial, the match's index among the choices, the stored pairs between cue and match)."""
        k_items, k_order, k_query, k_lure, k_link, k_label = jax.random.split(key, 6)
        n, length = self.num_chains, self.chain_length
        chains = jax.random.choice(k_items, self.pool_size, (n, length), replace=False)
        pairs = jnp.stack([chains[:, :-1], chains[:, 1:]], axis=-1).reshape(self.num_pairs, 2)
        order = jax.random.permutation(k_order, self.num_pairs)
        stored = jnp.repeat(jnp.arange(n), length - 1)[order] < self.active_chains
        query_chain = jax.random.randint(k_query, (), 0, self.active_chains)
        lure_chain = (query_chain + jax.random.randint(k_lure, (), 1, self.active_chains)) % self.active_chains
        link = jax.random.randint(k_link, (), 0, length - 1)  # the stored pair a direct query asks for
        cue_at = jnp.where(direct, link, 0)
        match_at = jnp.where(direct, link + 1, length - 1)
        label = jax.random.randint(k_label, (), 0, 2)
        match, lure = chains[query_chain, match_at], chains[lure_chain, match_at]
        choices = jnp.where(label == 0, jnp.stack([match, lure]), jnp.stack([lure, match]))
        cue = chains[query_chain, cue_at]
        trial = PAITrial(pool[pairs[order]], pool[cue], pool[choices], stored)
        return trial, label.astype(jnp.int32), (match_at - cue_at).astype(jnp.int32)


register("pai", PairedAssociativeInference)
