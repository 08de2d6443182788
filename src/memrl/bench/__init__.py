"""``memrl bench TABLE``: each table measured beside what it measures, one subcommand per table
(``TABLES``; ``all`` runs every one at its defaults): PPO throughput per core against the minimal
single-file PPO-GRU loop (``throughput``); environments stepped on the host, sequential and
pipelined, against T-LN in JAX (``host``);
EPN's V-trace throughput and acting step as the memory grows (``epn``); HTM against TrXL as the
attended past grows (``htm``); one V-trace update of HTM's image agents (``htm-agents``) and of the
EPN and RMC papers' agents (``epn-agents``, ``rmc-agents``), each with ``--baseline REV`` also with
another revision's code beside it; supervised throughput (``supervised``); the RMC's cost as its
slots and heads grow and the BoxWorld agents (``rmc``); TLB against a Transformer (``tlb``); each
memory's unroll as T grows (``unroll``). Options are checked by their types (``settings.Count``)
before anything is measured. Figures, not tests."""

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
from memrl.registry import Registry
from memrl.settings import Count

CORES = ("gru", "lstm", "lstm-stack", "amrl-max", "amrl-avg", "set", "gtrxl", "rmc", "dnc")


def throughput(cores: tuple[str, ...] = CORES, updates: Count = 3) -> None:
    """PPO on T-LN per core (env steps/s after compile, compile time apart) against the minimal PPO-GRU loop.

    Args:
        cores: cores to measure (gru with hidden 128, the others with their defaults).
        updates: updates per measurement.
    """
    from memrl import cores as registered

    unknown = [c for c in cores if c not in registered.names()]
    if unknown:
        raise ValueError(f"--cores: {registered.CORES.unknown(unknown[0])}")
    ppo_table(cores, updates)


def host(updates: Count = 3) -> None:
    """Environments stepped on the host (gymnasium/<id>: T-LN, POPGym) against T-LN in JAX, sequential and pipelined.

    Args:
        updates: updates per measurement.
    """
    host_table(updates)


def epn(updates: Count = 3, capacities: tuple[Count, ...] = (100, 200, 400, 800)) -> None:
    """EPN's V-trace throughput on the Memory&Planning Game, and its acting step as the memory grows.

    Args:
        updates: updates per measurement.
        capacities: memory sizes of the acting-step table.
    """
    epn_tables(updates, capacities)


def htm(pasts: tuple[Count, ...] = (512, 1024, 2048, 4096, 8192, 16384), width: Count = 256, layers: Count = 2) -> None:
    """HTM against TrXL as the attended past grows: one acting step, and the gradient of an unroll.

    Args:
        pasts: attended past lengths (TrXL's cache, HTM's store of 16-step chunks, top-8).
        width: d_model of both (a multiple of 8: 8 heads).
        layers: layers of both.
    """
    if width % 8:
        raise ValueError(f"--width must be a multiple of 8 (the HTM table's 8 heads), got {width}")
    htm_table(pasts, width, layers)


def htm_agents(baseline: str | None = None) -> None:
    """One V-trace update of HTM's image agents (htm-pvm, htm-ballet cpu presets) on one core's worth of work.

    Args:
        baseline: a git revision of this checkout whose code is measured too, each in a fresh process, in turn, with the speed-up.
    """
    htm_agents_table(baseline, revision_source(baseline) if baseline else None)


def epn_agents(baseline: str | None = None) -> None:
    """One V-trace update of the EPN and LSTM agents of epn-memory-planning's cpu preset.

    Args:
        baseline: a git revision of this checkout whose code is measured too (see htm-agents).
    """
    agent_updates_table("epn", baseline, revision_source(baseline) if baseline else None)


def rmc_agents(baseline: str | None = None) -> None:
    """One V-trace update of the RMC and LSTM agents of rmc-pacman's cpu preset.

    Args:
        baseline: a git revision of this checkout whose code is measured too (see htm-agents).
    """
    agent_updates_table("rmc", baseline, revision_source(baseline) if baseline else None)


def supervised(updates: Count = 3) -> None:
    """Supervised training throughput (lstm, gtrxl, rmc, dnc on copying and Nth Farthest).

    Args:
        updates: updates per measurement.
    """
    supervised_table(updates)


def rmc(
    updates: Count = 3,
    slots: tuple[Count, ...] = (1, 4, 8, 16),
    heads: tuple[Count, ...] = (1, 4, 8),
    head_size: Count = 64,
) -> None:
    """The RMC's cost as its slots and heads grow, and the BoxWorld agents (rmc, conv-lstm).

    Args:
        updates: updates per measurement.
        slots: memory slots of the cost table.
        heads: heads of the cost table.
        head_size: units per head.
    """
    rmc_tables(updates, slots, heads, head_size)


def tlb(
    chunks: tuple[Count, ...] = (1000, 100, 40, 20, 10),
    length: Count = 2000,
    lengths: tuple[Count, ...] = (500, 1000, 2000, 4000),
    batch: Count = 1,
) -> None:
    """TLB against a Transformer of its width (TLB Table 5): inference and training time and memory.

    Args:
        chunks: TLB chunk sizes of the chunk-size table.
        length: sequence length of the chunk-size table.
        lengths: sequence lengths of the growth table (TLB with chunks of 100).
        batch: sequences per batch in both tables.
    """
    tlb_tables(chunks, length, lengths, batch)


def unroll(lengths: tuple[Count, ...] = (128, 1024, 8192)) -> None:
    """The gradient of each memory's unroll (LSTM, GRU, GTrXL and the linear-recurrent memories) as T grows.

    Args:
        lengths: the unroll lengths T.
    """
    unroll_table(lengths=lengths)


def everything(baseline: str | None = None) -> None:
    """Every table in turn at its defaults.

    Args:
        baseline: a git revision of this checkout whose code the agent tables measure too.
    """
    if baseline:
        revision_source(baseline)  # a bad revision stops here, before any measuring
    throughput(), host(), epn(), htm()
    htm_agents(baseline), epn_agents(baseline), rmc_agents(baseline)
    supervised(), rmc(), tlb(), unroll()


TABLES: Registry = Registry("bench table")
"""``memrl bench``'s subcommands: name -> the function that measures and prints the table"""
TABLES.register("throughput", throughput)
TABLES.register("host", host)
TABLES.register("epn", epn)
TABLES.register("htm", htm)
TABLES.register("htm-agents", htm_agents)
TABLES.register("epn-agents", epn_agents)
TABLES.register("rmc-agents", rmc_agents)
TABLES.register("supervised", supervised)
TABLES.register("rmc", rmc)
TABLES.register("tlb", tlb)
TABLES.register("unroll", unroll)
TABLES.register("all", everything)
