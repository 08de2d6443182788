"""``memrl bench``: PPO training throughput per core on T-LN (64 envs x 128-step rollouts), and the
same for the minimal single-file PPO-GRU loop in ``benchmarks/`` so the framework's overhead shows
as a ratio; then EPN (all-to-all and N×k) on the Memory&Planning Game: V-trace training throughput,
and the time of one acting step as the episodic memory grows; then HTM against TrXL as the attended
past grows, acting and learning (``htm_scaling``), and where one update of HTM's image agents spends
its time (``htm_agents``), and one update of the EPN and RMC papers' agents (``agent_updates``), each with
``--baseline REV`` also with another revision's code beside it; then supervised training throughput (sequences/s
and tokens/s) of lstm, gtrxl, rmc and dnc on copying and Nth Farthest; then the RMC's cost as its
slots and heads grow (``rmc_scaling``) and the RMC paper's BoxWorld agents under V-trace. Figures, not tests."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import jax
from rich.table import Table

from memrl.bench.revisions import revision_source
from memrl.console import console
from memrl.learn.ppo import PPO
from memrl.learn.ppo_config import PPOConfig

BENCH_SHAPES = dict(env="tmaze/T-LN", num_envs=64, rollout_len=128, num_minibatches=4, update_epochs=4)


def time_training(learner, updates: int) -> tuple[float, float]:
    """(compile seconds, steps/s after compile) of ``updates`` updates of ``learner`` in one jit (steps:
    the learner's, environment steps or sequences)."""
    run = jax.jit(lambda r: learner.run(r, updates))
    runner = learner.init(jax.random.PRNGKey(0))
    start = time.perf_counter()
    runner, _ = jax.block_until_ready(run(runner))
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(run(runner))
    return compile_s, updates * learner.config.steps_per_update / (time.perf_counter() - start)


def measure_memrl(core: str, updates: int, separate_critic: bool = False, **core_args) -> tuple[float, float]:
    """PPO on T-LN with the benchmark shapes (and, with ``separate_critic``, a critic network of its own)."""
    config = PPOConfig(
        core=core, core_args=core_args, total_steps=updates * 64 * 128, separate_critic=separate_critic, **BENCH_SHAPES
    )
    return time_training(PPO(config), updates)


MINIMAL_PPO_GRU = Path(__file__).resolve().parents[3] / "benchmarks" / "minimal_ppo_gru.py"
"""the minimal PPO-GRU loop of the source checkout (not part of an installed package)"""


def measure_minimal(updates: int, path: Path = MINIMAL_PPO_GRU) -> tuple[float, float] | None:
    """(compile seconds, env steps/s) of the minimal PPO-GRU loop; None, said on the console, where
    this memrl is not a source checkout that holds it."""
    if not path.exists():
        console.print(
            f"[dim]no minimal PPO-GRU loop at {path} (it comes with memrl's source checkout): no ratios to it[/]"
        )
        return None
    spec = importlib.util.spec_from_file_location("minimal_ppo_gru", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure(updates)


def host_table(updates: int) -> None:
    """PPO-GRU on T-LN in JAX against the same T-LN stepped on the host (memrl -> gymnasium ->
    ``gymnasium/<id>``), benchmark shapes."""
    import gymnasium

    from memrl import envs
    from memrl.envs.gymnasium_adapter import GymnasiumEnv

    if "memrl-bench/TLN-v0" not in gymnasium.registry:
        tln = envs.make("tmaze/T-LN")  # one environment object: the copies share its compiled steps
        gymnasium.register("memrl-bench/TLN-v0", entry_point=lambda: GymnasiumEnv(tln))
    table = Table(
        title="PPO-GRU (hidden 128), 64 envs x 128 steps: T-LN in JAX and stepped on the host through gymnasium"
    )
    for column in ("environment", "compile s", "env steps/s", "ratio to JAX"):
        table.add_column(column)
    rows = {}
    for label, env in (
        ("tmaze/T-LN (JAX)", "tmaze/T-LN"),
        ("gymnasium/memrl-bench/TLN-v0 (host, sync)", "gymnasium/memrl-bench/TLN-v0"),
    ):
        config = PPOConfig(
            core="gru", core_args={"hidden": 128}, total_steps=updates * 64 * 128, **{**BENCH_SHAPES, "env": env}
        )
        rows[label] = time_training(PPO(config), updates)
    jax_sps = rows["tmaze/T-LN (JAX)"][1]
    for label, (compile_s, sps) in rows.items():
        table.add_row(label, f"{compile_s:.1f}", f"{sps:,.0f}", f"{sps / jax_sps:.2f}")
    console.print(table)


def measure_vtrace(core: str, updates: int, **core_args) -> tuple[float, float]:
    """V-trace on memory-planning/4x4 with 16 envs x 100-step rollouts (whole episodes)."""
    from memrl.learn.impala import Impala
    from memrl.learn.impala_config import ImpalaConfig

    config = ImpalaConfig(
        env="memory-planning/4x4",
        core=core,
        core_args=core_args,
        head_widths=(64, 64),
        num_envs=16,
        rollout_len=100,
        total_steps=updates * 1600,
    )
    return time_training(Impala(config), updates)


def measure_epn_step(core: str, capacity: int, batch: int = 16, repeats: int = 20) -> float:
    """Milliseconds per acting step of an EPN core whose memory holds ``capacity`` rows."""
    import jax.numpy as jnp

    from memrl import cores as core_registry

    model = core_registry.make(core, capacity=capacity)
    x = {"observation": jnp.ones((batch, 16)), "goal": jnp.ones((batch, 16)), "prev_action": jnp.ones((batch, 5))}
    carry = model.initialize_carry(None, (batch,))
    carry = {**carry, "count": jnp.full((batch,), float(capacity))}
    reset = jnp.zeros((batch,), bool)
    params = model.init(jax.random.PRNGKey(0), carry, x, reset)
    step = jax.jit(lambda c: model.apply(params, c, x, reset))
    jax.block_until_ready(step(carry))
    start = time.perf_counter()
    for _ in range(repeats):
        carry, y = step(carry)
    jax.block_until_ready(y)
    return 1000 * (time.perf_counter() - start) / repeats


def epn_tables(updates: int, capacities: tuple[int, ...]) -> None:
    """EPN training throughput and acting-step time against memory capacity."""
    table = Table(title=f"V-trace on memory-planning/4x4, 16 envs x 100 steps, {jax.default_backend()}")
    for column in ("core", "compile s", "env steps/s"):
        table.add_column(column)
    for core, core_args in (("epn", {"capacity": 100}), ("epn-nxk", {"capacity": 100}), ("lstm", {})):
        compile_s, sps = measure_vtrace(core, updates, **core_args)
        table.add_row(core, f"{compile_s:.1f}", f"{sps:,.0f}")
    console.print(table)
    table = Table(title="EPN acting step (batch 16, memory full) as the memory grows: all-to-all vs N×k (k = 50)")
    for column in ("capacity", "epn ms/step", "epn-nxk ms/step", "epn / epn-nxk"):
        table.add_column(column)
    for capacity in capacities:
        a2a, nxk = measure_epn_step("epn", capacity), measure_epn_step("epn-nxk", capacity)
        table.add_row(str(capacity), f"{a2a:.2f}", f"{nxk:.2f}", f"{a2a / nxk:.1f}")
    console.print(table)


SUPERVISED_SHAPES = {
    "copying": dict(task_args={"gap": 100}, batch_size=100),  # TLB's batch, gap 100: 121 steps
    "nth-farthest": dict(
        task_args={}, batch_size=1600, head_widths=(256, 256, 256, 256)
    ),  # RMC's batch and MLP, 8 x 16
}


def measure_supervised(task: str, core: str, updates: int) -> tuple[float, float, float]:
    """(compile seconds, sequences/s, tokens/s after compile) of ``updates`` supervised updates."""
    from memrl.learn.supervised import SupervisedLearner
    from memrl.learn.supervised_config import SupervisedConfig

    shapes = SUPERVISED_SHAPES[task]
    config = SupervisedConfig(task=task, core=core, total_steps=updates * shapes["batch_size"], **shapes)
    learner = SupervisedLearner(config)
    compile_s, sequences_per_s = time_training(learner, updates)
    length = jax.eval_shape(learner.task.sample, jax.random.PRNGKey(0)).target_mask.shape[0]
    return compile_s, sequences_per_s, sequences_per_s * length


def supervised_table(updates: int, cores: tuple[str, ...] = ("lstm", "gtrxl", "rmc", "dnc")) -> None:
    """Supervised throughput of ``cores`` on each task of ``SUPERVISED_SHAPES``."""
    table = Table(title=f"Supervised training, cores at their defaults, embedding 64, {jax.default_backend()}")
    for column in ("task", "core", "batch", "compile s", "sequences/s", "tokens/s"):
        table.add_column(column)
    for task, shapes in SUPERVISED_SHAPES.items():
        for core in cores:
            compile_s, sequences, tokens = measure_supervised(task, core, updates)
            table.add_row(
                task, core, str(shapes["batch_size"]), f"{compile_s:.1f}", f"{sequences:,.0f}", f"{tokens:,.0f}"
            )
    console.print(table)


def rmc_tables(updates: int, slots: tuple[int, ...], heads: tuple[int, ...], head_size: int) -> None:
    """The RMC's cost against its memory's shape, and the BoxWorld agents' V-trace throughput."""
    from memrl.bench.rmc_scaling import rmc_cost_rows
    from memrl.experiments.rmc_boxworld import boxworld_runs
    from memrl.learn.impala import Impala

    table = Table(
        title=f"RMC (head size {head_size}, input 64, batch 32): one acting step, and the gradient of a 32-step unroll per step"
    )
    for column in ("slots", "heads", "units", "step ms", "step MB", "train ms/step", "train MB"):
        table.add_column(column)
    for row in rmc_cost_rows(slots, heads, head_size):
        table.add_row(
            str(row.slots),
            str(row.heads),
            f"{row.units:,}",
            f"{row.step_ms:.2f}",
            f"{row.step_mb:.1f}",
            f"{row.train_ms:.2f}",
            f"{row.train_mb:.1f}",
        )
    console.print(table)
    table = Table(
        title=f"V-trace on boxworld/viewport, the RMC paper's agents, 32 envs x 40 steps, {jax.default_backend()}"
    )
    for column in ("agent", "compile s", "env steps/s"):
        table.add_column(column)
    for run, config in boxworld_runs("cpu").items():
        compile_s, sps = time_training(Impala(config), updates)
        table.add_row(run.split("/")[1], f"{compile_s:.1f}", f"{sps:,.0f}")
    console.print(table)


def check_bench_settings(
    cores,
    updates,
    epn_capacities,
    htm_pasts,
    htm_width,
    htm_layers,
    rmc_slots,
    rmc_heads,
    rmc_head_size,
    tlb_chunks,
    tlb_length,
    tlb_lengths,
    tlb_batch,
    unroll_lengths,
) -> None:
    """Refuse ``memrl bench``'s own settings before anything is measured, naming the flag."""
    from memrl import cores as registered

    unknown = [c for c in cores if c not in registered.names()]
    if unknown:
        raise ValueError(f"--cores: {registered.CORES.unknown(unknown[0])}")
    single = {
        "updates": updates,
        "htm-width": htm_width,
        "htm-layers": htm_layers,
        "rmc-head-size": rmc_head_size,
        "tlb-length": tlb_length,
        "tlb-batch": tlb_batch,
    }
    several = {
        "epn-capacities": epn_capacities,
        "htm-pasts": htm_pasts,
        "rmc-slots": rmc_slots,
        "rmc-heads": rmc_heads,
        "tlb-chunks": tlb_chunks,
        "tlb-lengths": tlb_lengths,
        "unroll-lengths": unroll_lengths,
    }
    for flag, value in single.items():
        if value < 1:
            raise ValueError(f"--{flag} must be a positive integer, got {value}")
    for flag, values in several.items():
        if not values or any(v < 1 for v in values):
            raise ValueError(f"--{flag} must be positive integers, got {' '.join(map(str, values)) or 'nothing'}")
    if htm_width % 8:
        raise ValueError(f"--htm-width must be a multiple of 8 (the HTM table's 8 heads), got {htm_width}")


def command(
    cores: tuple[str, ...] = ("gru", "lstm", "lstm-stack", "amrl-max", "amrl-avg", "set", "gtrxl", "rmc", "dnc"),
    updates: int = 3,
    epn: bool = True,
    epn_capacities: tuple[int, ...] = (100, 200, 400, 800),
    htm: bool = True,
    htm_pasts: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384),
    htm_width: int = 256,
    htm_layers: int = 2,
    htm_agents: bool = True,
    epn_agents: bool = True,
    rmc_agents: bool = True,
    supervised: bool = True,
    rmc: bool = True,
    rmc_slots: tuple[int, ...] = (1, 4, 8, 16),
    rmc_heads: tuple[int, ...] = (1, 4, 8),
    rmc_head_size: int = 64,
    tlb: bool = True,
    tlb_chunks: tuple[int, ...] = (1000, 100, 40, 20, 10),
    tlb_length: int = 2000,
    tlb_lengths: tuple[int, ...] = (500, 1000, 2000, 4000),
    tlb_batch: int = 1,
    host: bool = True,
    unroll: bool = True,
    unroll_lengths: tuple[int, ...] = (128, 1024, 8192),
    baseline: str | None = None,
) -> None:
    """Training throughput (env steps/s after compile, compile time apart) per core; EPN's scaling.

    Args:
        cores: cores to measure with PPO on T-LN (gru runs with hidden 128, the others with their defaults).
        updates: updates per measurement.
        epn: also measure EPN on the Memory&Planning Game.
        epn_capacities: memory sizes for the EPN acting-step table.
        htm: also measure htm against trxl as the attended past grows (one acting step, and the gradient of an unroll).
        htm_pasts: attended past lengths (TrXL's cache, HTM's store of 16-step chunks, top-8).
        htm_width: d_model of both.
        htm_layers: layers of both.
        htm_agents: also profile one V-trace update of HTM's image agents (htm-pvm, htm-ballet cpu presets) on one core's worth of work.
        epn_agents: also profile one V-trace update of the EPN and LSTM agents of epn-memory-planning's cpu preset.
        rmc_agents: also profile one V-trace update of the RMC and LSTM agents of rmc-pacman's cpu preset.
        supervised: also measure supervised training (lstm, gtrxl, rmc, dnc on copying and Nth Farthest).
        rmc: also measure the RMC's cost against its slots and heads, and the BoxWorld agents (rmc, conv-lstm).
        rmc_slots: memory slots of the RMC cost table.
        rmc_heads: heads of the RMC cost table.
        rmc_head_size: units per head in the RMC cost table.
        tlb: also measure TLB against a Transformer of its width (Table 5): inference and training time and memory.
        tlb_chunks: TLB chunk sizes of the Table 5 comparison.
        tlb_length: sequence length of the chunk-size table.
        tlb_lengths: sequence lengths of the growth table (TLB with chunks of 100).
        tlb_batch: sequences per batch in both TLB tables.
        host: also measure T-LN stepped on the host through gymnasium (gymnasium/<id>) against T-LN in JAX.
        unroll: also time the gradient of each memory's unroll (LSTM, GRU, GTrXL and the linear-recurrent memories) as T grows.
        unroll_lengths: the unroll lengths T of that table.
        baseline: a git revision of this checkout: the HTM, EPN and RMC agents' updates are measured with its code too, each run in a fresh process, the two in turn, with the speed-up.
    """
    check_bench_settings(
        cores,
        updates,
        epn_capacities,
        htm_pasts,
        htm_width,
        htm_layers,
        rmc_slots,
        rmc_heads,
        rmc_head_size,
        tlb_chunks,
        tlb_length,
        tlb_lengths,
        tlb_batch,
        unroll_lengths,
    )
    baseline_source = revision_source(baseline) if baseline else None  # a bad revision stops here, before any measuring
    table = Table(
        title=f"PPO on tmaze/T-LN, 64 envs x 128 steps, {jax.default_backend()} ({jax.devices()[0].device_kind})"
    )
    for column in ("trainer", "compile s", "env steps/s", "ratio to minimal"):
        table.add_column(column)
    minimal = measure_minimal(updates)
    results = {}
    for core in cores:
        results[core] = measure_memrl(core, updates, **({"hidden": 128} if core == "gru" else {}))
    if minimal:
        table.add_row("minimal PPO-GRU (benchmarks/)", f"{minimal[0]:.1f}", f"{minimal[1]:,.0f}", "1.00")
    for core, (compile_s, sps) in results.items():
        ratio = f"{sps / minimal[1]:.2f}" if minimal else "-"
        table.add_row(
            f"memrl {core}" + (" (hidden 128)" if core == "gru" else ""), f"{compile_s:.1f}", f"{sps:,.0f}", ratio
        )
    console.print(table)
    if host:
        host_table(updates)
    if epn:
        epn_tables(updates, epn_capacities)
    if htm:
        htm_table(htm_pasts, htm_width, htm_layers)
    if htm_agents:
        htm_agents_table(baseline, baseline_source)
    if epn_agents:
        agent_updates_table("epn", baseline, baseline_source)
    if rmc_agents:
        agent_updates_table("rmc", baseline, baseline_source)
    if supervised:
        supervised_table(updates)
    if rmc:
        rmc_tables(updates, rmc_slots, rmc_heads, rmc_head_size)
    if tlb:
        tlb_tables(tlb_chunks, tlb_length, tlb_lengths, tlb_batch)
    if unroll:
        from memrl.bench.unroll_scaling import unroll_table

        unroll_table(lengths=unroll_lengths)


def tlb_tables(chunks: tuple[int, ...], length: int, lengths: tuple[int, ...], batch: int, repeats: int = 3) -> None:
    """TLB against a Transformer of its width: Table 5's ratios per chunk size, then as the sequence grows."""
    from memrl.bench.tlb_scaling import PAPER_RATIOS, ratios, tlb_cost, transformer_cost

    base = transformer_cost(length, batch, repeats)
    by_chunk = Table(
        title=f"TLB vs Transformer (Table 5), {length} steps, batch {batch}, width 256: speed = Transformer time / TLB time, "
        "memory = TLB / Transformer (paper's in brackets)"
    )
    for column in (
        "chunk",
        "TLB infer ms",
        "TLB train ms",
        "infer speed",
        "infer memory",
        "train speed",
        "train memory",
    ):
        by_chunk.add_column(column)
    by_chunk.add_row(
        "Transformer",
        f"{base.inference_ms:.1f}",
        f"{base.training_ms:.1f}",
        "1",
        f"1 ({base.inference_mb:.0f} MB)",
        "1",
        f"1 ({base.training_mb:.0f} MB)",
    )
    for chunk in chunks:
        cost = tlb_cost(chunk, length, batch, repeats)
        paper = PAPER_RATIOS.get(chunk)
        cells = [
            f"{ours:.2f}" + (f" ({theirs})" if paper else "")
            for ours, theirs in zip(ratios(cost, base), paper or (None,) * 4)
        ]
        by_chunk.add_row(str(chunk), f"{cost.inference_ms:.1f}", f"{cost.training_ms:.1f}", *cells)
    console.print(by_chunk)
    growth = Table(title=f"TLB (chunks of 100) vs Transformer as the sequence grows, batch {batch}")
    for column in (
        "steps",
        "Transformer infer / train ms",
        "TLB infer / train ms",
        "infer speed",
        "infer memory",
        "train speed",
        "train memory",
    ):
        growth.add_column(column)
    for steps in lengths:
        base, cost = transformer_cost(steps, batch, repeats), tlb_cost(100, steps, batch, repeats)
        growth.add_row(
            str(steps),
            f"{base.inference_ms:.1f} / {base.training_ms:.1f}",
            f"{cost.inference_ms:.1f} / {cost.training_ms:.1f}",
            *(f"{r:.2f}" for r in ratios(cost, base)),
        )
    console.print(growth)


def htm_agents_table(baseline: str | None = None, baseline_source: Path | None = None) -> None:
    """One V-trace update of HTM's image agents, and its acting and gradient measured apart; with a
    baseline revision, the update with that revision's code beside it."""
    from memrl.bench.htm_agents import htm_agent_rows, htm_agent_rows_beside

    title = (
        "One V-trace update of HTM's image agents (cpu presets of htm-pvm and htm-ballet), seconds; acting and the gradient are "
        "compiled apart, so they add up to more than the update, whose scan fuses them"
    )
    if baseline_source is None:
        rows = [(run, label, cost, None) for run, label, cost in htm_agent_rows()]
    else:
        rows = htm_agent_rows_beside(baseline_source)
        title += f"; each run in a fresh process, this checkout and then revision {baseline}"
    table = Table(title=title)
    columns = ("run", "recon.", "steps", "update", "acting", "gradient", "steps/s")
    for column in columns + ((f"update at {baseline}", "speed-up") if baseline_source else ()):
        table.add_column(column)
    for run, label, cost, base in rows:
        cells = [
            run.split(" ")[-1],
            label,
            str(cost.steps),
            f"{cost.update_s:.3f}",
            f"{cost.acting_s:.3f}",
            f"{cost.gradient_s:.3f}",
            f"{cost.steps / cost.update_s:,.0f}",
        ]
        if base:
            cells += [f"{base.update_s:.3f}", f"{base.update_s / cost.update_s:.2f}"]
        table.add_row(*cells)
    console.print(table)


def agent_updates_table(name: str, baseline: str | None = None, baseline_source: Path | None = None) -> None:
    """One V-trace update of the cpu-preset agents of ``AGENT_PROFILES[name]``; with a baseline
    revision, the update with that revision's code beside it."""
    from memrl.bench.agent_updates import AGENT_PROFILES, agent_update_rows
    from memrl.experiments import get

    profile = AGENT_PROFILES[name]
    config = get(profile.experiment, "cpu").runs[profile.runs[0]]
    title = f"One V-trace update of {profile.experiment}'s agents (cpu preset: {config.num_envs} envs x {config.rollout_len} steps), seconds, the mean of the first {profile.updates}"
    if baseline_source is not None:
        title += f"; each run in a fresh process, this checkout and then revision {baseline}"
    table = Table(title=title)
    for column in ("run", "steps", "update", "acting", "gradient", "steps/s") + (
        (f"update at {baseline}", "speed-up") if baseline_source else ()
    ):
        table.add_column(column)
    for run, cost, base in agent_update_rows(profile, baseline_source):
        cells = [
            run,
            str(cost.steps),
            f"{cost.update_s:.3f}",
            f"{cost.acting_s:.3f}",
            f"{cost.gradient_s:.3f}",
            f"{cost.steps / cost.update_s:,.0f}",
        ]
        if base:
            cells += [f"{base.update_s:.3f}", f"{base.update_s / cost.update_s:.2f}"]
        table.add_row(*cells)
    console.print(table)


def htm_table(pasts: tuple[int, ...], width: int, layers: int) -> None:
    """HTM (16-step chunks, top-8) against TrXL attending over the same past: one acting step, and learning."""
    from memrl.bench.htm_scaling import htm_scaling_rows

    rows = htm_scaling_rows(pasts, width, layers, chunk_size=16, k=8, batch=1, train_batch=8, train_steps=32)
    shape = f"{layers} layers, width {width}; htm chunks of 16, k = 8"
    acting = Table(title=f"One acting step (batch 1, {shape}) vs attended past")
    learning = Table(title=f"Gradient over a 32-step unroll (batch 8, {shape}) vs attended past, per unrolled step")
    for table in (acting, learning):
        for column in ("past steps", "htm ms", "trxl ms", "trxl / htm", "htm MB", "trxl MB"):
            table.add_column(column)
    for row in rows:
        acting.add_row(
            str(row.past),
            f"{row.htm_step_ms:.2f}",
            f"{row.trxl_step_ms:.2f}",
            f"{row.trxl_step_ms / row.htm_step_ms:.2f}",
            f"{row.htm_step_mb:.1f}",
            f"{row.trxl_step_mb:.1f}",
        )
        learning.add_row(
            str(row.past),
            f"{row.htm_train_ms:.2f}",
            f"{row.trxl_train_ms:.2f}",
            f"{row.trxl_train_ms / row.htm_train_ms:.2f}",
            f"{row.htm_train_mb:.1f}",
            f"{row.trxl_train_mb:.1f}",
        )
    console.print(acting)
    console.print(learning)
