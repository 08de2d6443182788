"""``memrl bench``: each table measured beside what it measures, all in turn (each can be left out):
PPO throughput per core against the minimal single-file PPO-GRU loop (``throughput``, with T-LN
stepped on the host against T-LN in JAX); EPN's V-trace throughput and acting step as the memory
grows (``epn_scaling``); HTM against TrXL as the attended past grows (``htm_scaling``); one
V-trace update of HTM's image agents (``htm_agents``) and of the EPN and RMC papers' agents
(``agent_updates``), each with ``--baseline REV`` also with another revision's code beside it;
supervised throughput (``supervised_throughput``); the RMC's cost as its slots and heads grow and
the BoxWorld agents (``rmc_scaling``); TLB against a Transformer (``tlb_scaling``); each memory's
unroll as T grows (``unroll_scaling``). Figures, not tests."""

from __future__ import annotations

from memrl.bench.agent_updates import agent_updates_table
from memrl.bench.epn_scaling import epn_tables
from memrl.bench.htm_agents import htm_agents_table
from memrl.bench.htm_scaling import htm_table
from memrl.bench.revisions import revision_source
from memrl.bench.rmc_scaling import rmc_tables
from memrl.bench.supervised_throughput import supervised_table
from memrl.bench.throughput import host_table, ppo_table
from memrl.bench.tlb_scaling import tlb_tables
from memrl.bench.unroll_scaling import unroll_table


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
    ppo_table(cores, updates)
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
        unroll_table(lengths=unroll_lengths)
