import os
from pathlib import Path

import pytest

# Tests compile far more than they run: LLVM's optimisation passes cost about a third of the suite's time
# and barely change the speed of these small computations (set before jax starts its backend).
os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), "--xla_backend_optimization_level=0"]).strip()

DATA = Path(__file__).parent / "data"

D = 6  # input width of the core contract tests
SMALL_CORES = {  # every registered core at test sizes (`from conftest import SMALL_CORES`)
    "lstm": dict(hidden=16),
    "lstm-stack": dict(hidden=16),
    "gru": dict(hidden=16),
    "amrl-max": dict(hidden=16),
    "amrl-avg": dict(hidden=16),
    "amrl-sum": dict(hidden=16),
    "set": dict(features=D),
    "trxl": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4),
    "gtrxl": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4),
    "trxl-topk": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, memory_length=4, top_k=2),
    "epn": dict(capacity=24, embed_dim=8, width=16, num_heads=2),
    "epn-nxk": dict(capacity=24, embed_dim=8, width=16, num_heads=2, k=3),
    "conv-lstm": dict(grid=1, channels=8, kernel=2),
    "rmc": dict(mem_slots=2, head_size=4, num_heads=2, num_blocks=2),
    "dnc": dict(memory_size=6, word_size=4, num_reads=2, num_writes=1, hidden=16, output_size=16),
    "htm": dict(num_layers=2, d_model=16, num_heads=2, mlp_dim=16, window=3, chunk_size=2, num_chunks=4, k=2),
    "tlb": dict(chunk_size=3, num_state=2, d_model=16, num_heads=2, mlp_dim=16),
    "transformer": dict(chunk_size=4, d_model=16, num_heads=2, mlp_dim=16),
}


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
