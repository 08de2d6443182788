"""The papers' agents and learners as named presets: config fields written once, with their ``cpu``
and ``paper`` sizes, that the experiments, the analyses that train the same agents (ballet-memory:
htm-ballet's) and the benchmarks build their runs from. Where a field comes from is said beside it;
the experiments' settings tables compare every one with the paper. It sits with the agents, below
the analyses and experiments, since it holds nothing but their settings."""

from __future__ import annotations

import dataclasses

from memrl import envs
from memrl.cores.conv_lstm import ConvLSTM
from memrl.cores.htm import HierarchicalTransformerMemory
from memrl.cores.lstm import LSTM
from memrl.cores.rmc import RelationalMemory
from memrl.cores.transformer_xl import TransformerXL
from memrl.envs.ballet import MAX_STEPS as BALLET_MAX_STEPS

# --- HTM (Lampinen et al. 2021, Table 1)

HTM_TABLE_1_LOSSES = dict(policy_coef=0.1, value_coef=1.0, entropy_coef=1e-3, optimizer="adam", lr=2e-4)
"""Table 1 for its RL tasks but One-Shot StreetLearn: the V-trace loss weights, Adam at 2e-4"""
HTM_STREETS_LOSSES = dict(policy_coef=1.0, value_coef=0.3, entropy_coef=1e-4, optimizer="adam", lr=4e-4, rollout_len=64)
"""Table 1's Streets column: V-trace loss weights, entropy, Adam and its learning rate, unroll length"""
HTM_AGENT = dict(encoder="conv", encoder_widths=(), head_widths=(512,), gamma=0.99, updates_per_chunk=25)
"""the image agent of HTM's 3D-room tasks: the conv encoder straight into the memory, policy and
value MLPs of one hidden layer of 512 (Table 1); γ is not stated"""
HTM_VISUAL = {
    "cells": dict(conv_kernels=(1, 3, 3), conv_strides=(1, 1, 1)),
    "frames": dict(conv_kernels=(9, 3, 3), conv_strides=(9, 1, 1)),
}
"""the conv encoder on Ballet-room views: Table 1's 9×9 stride-9 first layer on the 99×99 frames, or a
1×1 one on the 11×11 grid of cell codes the frames are drawn from (what a CPU can afford)"""
HTM_VIEW_SETTINGS = {"cells": {"observation": "cells"}, "frames": {}}
"""the room environments' settings that give each ``HTM_VISUAL`` encoder its view"""


def htm_view(preset: str) -> str:
    """The view of HTM's room tasks in ``preset``: the paper's frames, else the cells they are drawn from."""
    return "frames" if preset == "paper" else "cells"


def htm_room(name: str, preset: str):
    """The room environment ``name`` (Ballet, object permanence, word learning) in ``preset``'s view."""
    return envs.make(name, **HTM_VIEW_SETTINGS[htm_view(preset)])


@dataclasses.dataclass(frozen=True)
class HtmSize:
    """The size that HTM's memories share in a preset: the transformers' width, layers and heads, and
    the LSTM baseline's state."""

    width: int
    layers: int
    heads: int
    lstm: int

    def transformer(self) -> dict:
        """The core settings of a transformer memory (HTM or TrXL) of this size (MLP twice as wide)."""
        return dict(num_layers=self.layers, d_model=self.width, num_heads=self.heads, mlp_dim=2 * self.width)

    def memories(self, memory_length: int, chunk_size: int, **htm) -> dict:
        """name -> core of HTM's three memories: HTM with chunks of ``chunk_size`` and the task's
        other settings ``htm``, the gated TrXL with ``memory_length`` steps of extra memory, and the
        LSTM. HTM's window of recent steps is 16, or the chunk if longer, so that no step of the open
        chunk is out of both the window and the store (Table 1 gives no window)."""
        return {
            "htm": HierarchicalTransformerMemory(
                **self.transformer(), window=max(16, chunk_size), chunk_size=chunk_size, **htm
            ),
            "gtrxl": self.gtrxl(memory_length),
            "lstm": LSTM(hidden=self.lstm),
        }

    def gtrxl(self, memory_length: int) -> TransformerXL:
        """The gated TrXL of this size with ``memory_length`` steps of extra memory."""
        return TransformerXL(gated=True, **self.transformer(), memory_length=memory_length)


HTM_SIZES = {
    "cpu": HtmSize(width=64, layers=2, heads=4, lstm=128),
    "paper": HtmSize(width=512, layers=4, heads=8, lstm=512),
}
"""Table 1: state dimension 512, 4 layers, 8 heads, an LSTM of 512; cpu: small memories whose
training fits a CPU (the gpu presets train them too)"""

BALLET_LONGEST_EPISODE = max(BALLET_MAX_STEPS.values())
"""steps of Ballet's longest episodes (delay 48's time limit): HTM's store holds one more chunk"""
BALLET_LOSSES = dict(HTM_TABLE_1_LOSSES, reconstruction_coef=1.0, rollout_len=64)
"""Table 1's Ballet column: the reconstruction loss at weight 1 and 64-step unrolls"""
BALLET_BATCH = {
    "cpu": dict(num_envs=16, seeds=1, total_steps=500_000),
    "gpu": dict(num_envs=256, seeds=3, total_steps=100_000_000),
    "paper": dict(num_envs=32, seeds=3, total_steps=1_000_000_000),
}
"""cpu: 16 environments on 2 cores, what they train in about two hours; gpu: 256 environments to
fill one GPU, about half an hour a run on an H100; paper: Table 1's batch of 32, 3 seeds (Fig. 8)"""


def htm_ballet_agents(preset: str, level: str) -> dict[str, dict]:
    """core -> the config fields of HTM's three Ballet agents on the Ballet ``level`` in ``preset``
    ("cpu", "gpu" or "paper"; Table 1's Ballet column at ``paper``)."""
    size = HTM_SIZES["paper" if preset == "paper" else "cpu"]
    chunk_size, k, memory_length = (32, 8, 256) if preset == "paper" else (16, 4, 128)
    memories = size.memories(
        memory_length, chunk_size=chunk_size, num_chunks=BALLET_LONGEST_EPISODE // chunk_size + 1, k=k
    )
    visual, env = HTM_VISUAL[htm_view(preset)], htm_room(level, preset)
    return {
        name: dict(core=core, env=env, **HTM_AGENT, **BALLET_LOSSES, **visual, **BALLET_BATCH[preset])
        for name, core in memories.items()
    }


# --- RMC (Santoro et al. 2018, App. A.3.1: the BoxWorld agent, which Mini Pacman reuses)

RMC_BOXWORLD_AGENT = dict(
    encoder="conv",
    conv_channels=(12, 24),
    conv_kernels=(2, 2),
    conv_strides=(1, 1),
    conv_coordinates=True,
    encoder_widths=(),
    head_widths=(),
)
"""two 2×2 convolutions of 12 and 24 channels, each cell tagged with its x and y, straight into the memory"""
RMC_BOXWORLD_CORES = {
    "rmc": RelationalMemory(mem_slots=4, num_heads=4, head_size=64, num_blocks=1, gate_style="memory"),
    "conv-lstm": ConvLSTM(grid=5, channels=64, kernel=2),
}
"""the RMC of 4 memories × 4 heads of 64 (1024 units, memory gates) and its ConvLSTM baseline (64 channels, 2×2)"""
RMC_BOXWORLD_LOSSES = dict(entropy_coef=0.005, gamma=0.99, rollout_len=40)
"""V-trace with entropy 0.005, γ 0.99, unrolls of 40"""
RMC_RMSPROP = dict(num_envs=32, optimizer="rmsprop", rmsprop_eps=0.01, rmsprop_initial_scale=1.0, seeds=1)
"""TensorFlow 1's RMSprop (ε 0.01, squared-gradient average from 1), IMPALA's, on batches of 32
trajectories; the paper's learning rate is 1e-4, the cpu presets take 2e-4"""

# --- EPN (Ritter et al. 2021, App. A.2-A.3)

EPN_RMSPROP = dict(
    optimizer="rmsprop", rmsprop_eps=1e-4, rmsprop_decay=0.99, rmsprop_momentum=0.0, rmsprop_initial_scale=1.0
)
"""the EPN paper's optimiser (Table 1), TensorFlow 1's RMSprop (squared-gradient average from 1)"""
EPN_TRAINING = {
    "cpu": dict(
        num_envs=16,
        rollout_len=20,
        optimizer="adam",
        lr=1e-3,
        entropy_coef=0.01,
        total_steps=2_000_000,
        updates_per_chunk=25,
    ),
    "paper": dict(
        num_envs=128,
        rollout_len=40,
        lr=4e-4,
        entropy_coef=1e-2,
        total_steps=100_000_000,
        updates_per_chunk=100,
        **EPN_RMSPROP,
    ),
}
"""cpu: 20-step unrolls (five updates a 100-step episode) and Adam at 1e-3, which learns faster at
small budgets than the paper's RMSprop inside its ranges (epn-settings-sweep); paper: inside the
ranges of Table 1 (batch 32-128, unroll 10-40, lr 1e-5-4e-4, entropy 1e-3-1e-2)"""
EPN_PLANNER = {"cpu": {}, "paper": {"iterations": 4, "num_heads": 1}}
"""the planner's settings beyond the core's defaults (embedding and rows of 64, 2 heads, 2 iterations):
4 iterations and one head in the paper's RL runs (footnote 5, A.3)"""
EPN_AGENT = dict(head_widths=(64, 64), gamma=0.95, seeds=3)
"""the policy's 2-layer MLP of 64 (A.3), γ at the top of Table 1's range, 3 seeds per condition (Fig. 4)"""
EPN_LSTM_BASELINE = dict(core=LSTM(hidden=256), encoder_widths=(64,), feed_prev_action=True)
"""memrl's LSTM baseline for the EPN tasks (the paper does not describe its own): 256 units, the previous action as input"""
