"""Memory cores behind one contract (see ``base``); importing this package registers them all."""

from memrl.cores import (
    amrl,
    conv_lstm,
    delta_net,
    dnc,
    epn,
    feedback_transformer,
    ffm,
    gru,
    htm,
    linear_attention,
    lru,
    lstm,
    min_gru,
    mlstm,
    rmc,
    s5,
    s6,
    tlb,
    transformer_xl,
)
from memrl.cores.base import CORES, MemoryCore, make, names, register

__all__ = ["CORES", "MemoryCore", "make", "names", "register"]
