"""What a memory's training step costs as the unroll grows (issue 67 §2): the gradient (forward and
backward) of mean(y²) over ``core.unroll`` on T steps of random inputs, batch 16, inputs and
memories of width 128, after compiling, with XLA's working memory for it.

The sequential depth of each computation: T dependent steps for the LSTM and the GRU (a scan over
time); for the linear-recurrent memories, measured both ways side by side, T steps of a sequential
scan or about 2 log2 T combine levels of an associative one (twice the arithmetic); for GTrXL one
segment of T steps whose attention over T + memory positions is one matrix product per layer
(depth: its layers), at T² memory. A cell whose working memory would pass ``MEMORY_LIMIT_MB``
is compiled, not run, and shows the memory it asks for.

Each cell also gives the arithmetic (XLA's count of floating-point operations, per step of the
unroll) over the time: the GFLOP/s achieved, beside the machine's own rate on one large matrix
product, so that the distance to what the CPU can do is a number. XLA's cost analysis counts a
loop's body once, so a sequential scan's count is T times one step's gradient (with respect to the
parameters and the carry, as the unroll's backward pass takes it); an associative scan and GTrXL's
segment are counted whole.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from memrl import cores
from memrl.bench.htm_scaling import timed_ms
from memrl.nn.compiled_init import compiled_init

WIDTH, BATCH = 128, 16
LENGTHS = (128, 1024, 8192)
MEMORIES = {
    "lstm": dict(hidden=WIDTH),
    "gru": dict(hidden=WIDTH),
    "gtrxl": dict(num_layers=2, d_model=WIDTH, num_heads=4, mlp_dim=2 * WIDTH, memory_length=WIDTH),
    "lru": dict(hidden=WIDTH, state=WIDTH),
    "s6": dict(hidden=WIDTH, channels=WIDTH, state=16),
    "linear-attention": dict(hidden=WIDTH, num_heads=4, head_size=32),
    "min-gru": dict(hidden=WIDTH),
    "ffm": dict(hidden=WIDTH, trace=32, context=4),
    "s5": dict(hidden=WIDTH, state=WIDTH // 2, blocks=4),
    "delta-net": dict(hidden=WIDTH, num_heads=4, head_size=32),
    "mlstm": dict(hidden=WIDTH, num_heads=4, head_size=32),
}
"""each memory at width 128 (S6 with the paper's 16 states per channel; GTrXL of 2 layers, 4 heads,
a memory of 128 steps; FFM with 32 traces read at 4 frequencies; S5 with 64 complex states standing
for 128; DeltaNet and the mLSTM with 4 heads of 32)"""
DEPTH = {
    "lstm": "T",
    "gru": "T",
    "gtrxl": "layers (T² attention)",
    "delta-net": "T",
    "mlstm": "T",
    "sequential": "T",
    "associative": "~2 log2 T",
}
"""the sequential depth of an unroll of T steps, by memory or by scan"""
LINEAR = ("lru", "s5", "s6", "linear-attention", "min-gru", "ffm")
"""the linear-recurrent memories, each measured with both scans"""
MEMORY_LIMIT_MB = 8192


def compiled_flops(compiled) -> float:
    """XLA's count of the floating-point operations of a compiled function (its cost analysis;
    a loop's body counted once)."""
    analysis = compiled.cost_analysis()
    return float((analysis[0] if isinstance(analysis, list) else analysis)["flops"])


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """The machine's rate on one float32 matrix product of ``size`` x ``size`` (2·size³ operations)."""
    a = jax.random.normal(jax.random.PRNGKey(0), (size, size))
    product = jax.jit(jnp.matmul).lower(a, a).compile()
    return 2 * size**3 / (timed_ms(product, a, a, repeats=repeats) / 1000) / 1e9


def unroll_gradient_cost(name: str, length: int, repeats: int = 3, scan: str = "") -> tuple[float, float, float]:
    """(ms per gradient of mean(y²) over ``name``'s unroll of ``length`` steps, XLA working MB,
    FLOPs per step of it), a linear-recurrent memory's with ``scan``; the time is NaN where the
    working memory passes ``MEMORY_LIMIT_MB``."""
    core = cores.make(name, **MEMORIES[name], **({"scan": scan} if scan else {}))
    xs = jax.random.normal(jax.random.PRNGKey(1), (length, BATCH, WIDTH))
    resets = jnp.zeros((length, BATCH), bool).at[0].set(True)
    carry = core.initialize_carry(None, (BATCH,))
    params = compiled_init(core, None, jax.random.PRNGKey(0), carry, xs[0], jnp.ones((BATCH,), bool))

    def loss(p):
        return jnp.mean(core.apply(p, carry, xs, resets, method=core.unroll)[1] ** 2)

    def step_loss(p, c):  # the carry's gradient too: an unroll's backward pass carries it through time
        return jnp.mean(core.apply(p, c, xs[0], resets[0], method=core.step)[1] ** 2)

    gradient = jax.jit(jax.grad(loss)).lower(params).compile()
    if "while" in gradient.as_text():  # a loop over time: its body is counted once
        flops = compiled_flops(jax.jit(jax.grad(step_loss, argnums=(0, 1))).lower(params, carry).compile())
    else:
        flops = compiled_flops(gradient) / length
    working_mb = gradient.memory_analysis().temp_size_in_bytes / 2**20
    if working_mb > MEMORY_LIMIT_MB:
        return float("nan"), working_mb, flops
    return timed_ms(gradient, params, repeats=repeats), working_mb, flops


def unroll_table(names: tuple[str, ...] = tuple(MEMORIES), lengths: tuple[int, ...] = LENGTHS) -> None:
    """Print the cost of each memory's unroll gradient at each length, its ratio to the LSTM's and
    the GFLOP/s it achieves, beside the machine's matrix-product rate."""
    from rich.table import Table

    from memrl.console import console

    rows = [(name, scan) for name in names for scan in (("sequential", "associative") if name in LINEAR else ("",))]
    costs = {(row, length): unroll_gradient_cost(row[0], length, scan=row[1]) for row in rows for length in lengths}
    table = Table(
        title=f"unroll gradient (forward + backward), batch {BATCH}, width {WIDTH}, on {jax.devices()[0].platform}: "
        "ms (working MB), the LSTM's time / this one's, and GFLOP/s achieved "
        f"(a {1024}² float32 matrix product here: {matmul_gflops():,.0f} GFLOP/s)"
    )
    table.add_column("memory")
    table.add_column("sequential depth")
    table.add_column(f"MFLOP per step (T = {lengths[-1]})", justify="right")
    for length in lengths:
        table.add_column(f"T = {length}", justify="right")
    for name, scan in rows:
        cells = []
        for length in lengths:
            ms, mb, flops = costs[(name, scan), length]
            lstm_ms = costs.get((("lstm", ""), length), (float("nan"),))[0]
            rate = flops * length / (ms / 1000) / 1e9
            cells.append(
                f"not run ({mb:,.0f} MB)"
                if ms != ms
                else f"{ms:,.1f} ({mb:,.0f} MB), {lstm_ms / ms:.2g}x, {rate:.2g} GFLOP/s"
            )
        per_step = costs[(name, scan), lengths[-1]][2] / 1e6
        table.add_row(f"{name} ({scan})" if scan else name, DEPTH[scan or name], f"{per_step:.3g}", *cells)
    console.print(table)
