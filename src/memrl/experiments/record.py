"""The record of one reproduction: what ran, on what budget against the paper's, every check with
its value, margin and verdict, and the experiment's verdict from its central checks. ``memrl
reproduce`` writes one; the records committed under ``docs/results/`` are what the scoreboard
(``memrl results``, ``docs/scoreboard.md``) is generated from."""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path

from memrl.experiments.base import Experiment

VERDICTS = ("reproduced", "partly", "not reproduced", "reversed", "not run")
"""every central check passes; some do; none does; none does and some found the opposite ordering
beyond the noise; nothing was checked"""
RECORD_KEYS = ("experiment", "version", "preset", "date", "device", "verdict", "runs", "checks", "paper", "figure", "finding", "section")
CHECK_KEYS = ("description", "central", "value", "margin", "passed")
RECORDS = Path("docs") / "results"
"""where the project keeps its committed records (relative to the repository root)"""


def verdict(checks: list[dict]) -> str:
    """The experiment's verdict from its central checks (see ``VERDICTS``)."""
    central = [c for c in checks if c["central"] and c["passed"] is not None]
    if not central:
        return "not run"
    passed = sum(c["passed"] for c in central)
    if passed == len(central):
        return "reproduced"
    if passed:
        return "partly"
    return "reversed" if any(c.get("reversed") for c in central) else "not reproduced"


def paper_and_figure(reproduces: str) -> tuple[str, str]:
    """("Beck et al. 2020", "Fig. 4 and Sec. 5") from "Beck et al. 2020, Fig. 4 and Sec. 5 (T-maze results)"."""
    paper, _, rest = reproduces.partition(", ")
    return paper, rest.split(" (")[0]


def device_name() -> str:
    """The JAX backend and, on a CPU, the cores this process may use ("cpu, 2 cores")."""
    import jax

    backend = jax.default_backend()
    return f"cpu, {len(os.sched_getaffinity(0))} cores" if backend == "cpu" else f"{backend}: {jax.devices()[0].device_kind}"


def make_record(experiment: Experiment, checks: list[dict], wall_time_s: float) -> dict:
    """The record of a ``memrl reproduce`` run of ``experiment`` whose checks gave ``checks`` (the
    runner's entries: each expectation's outcome with its description and whether it is central)."""
    paper, figure = paper_and_figure(experiment.reproduces)
    return {
        "experiment": experiment.name, "version": experiment.version, "preset": experiment.preset or "-",
        "date": datetime.date.today().isoformat(), "device": device_name(), "machine": platform.node(),
        "verdict": verdict(checks), "paper": paper, "figure": figure, "finding": experiment.finding,
        "section": experiment.name, "command": f"memrl reproduce {experiment.name}" + (f" --preset {experiment.preset}" if experiment.preset else ""),
        "wall_time_s": round(wall_time_s, 1),
        "runs": {
            run: {"steps": config.total_steps, "unit": config.step_label, "paper_steps": experiment.paper_steps, "seeds": config.seeds}
            for run, config in experiment.runs.items()
        },
        "checks": checks,
    }


def record_name(experiment: str, preset: str) -> str:
    """``NAME.json`` for a ``cpu`` preset or an experiment without presets, else ``NAME.PRESET.json``."""
    return f"{experiment}.json" if preset in ("cpu", "-", "") else f"{experiment}.{preset}.json"


def write_record(record: dict, folder: Path, name: str | None = None) -> Path:
    """Write ``record`` into ``folder`` as ``name`` (default: ``record_name``'s)."""
    path = Path(folder) / (name or record_name(record["experiment"], record["preset"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def check_record(record: dict, where: str) -> dict:
    """Refuse a record that lacks a key, a check that lacks one, or a verdict that its central
    checks do not give; return the record."""
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        raise ValueError(f"{where}: a record needs the keys {', '.join(RECORD_KEYS)}; missing {', '.join(missing)}")
    for i, check in enumerate(record["checks"]):
        lacking = [key for key in CHECK_KEYS if key not in check]
        if lacking:
            raise ValueError(f"{where}: check {i} needs {', '.join(CHECK_KEYS)}; missing {', '.join(lacking)}")
    for run, budget in record["runs"].items():
        if not {"steps", "paper_steps", "seeds"} <= budget.keys():
            raise ValueError(f"{where}: run {run!r} needs steps, paper_steps and seeds")
    if record["verdict"] != verdict(record["checks"]):
        raise ValueError(f"{where}: verdict {record['verdict']!r}, but its central checks give {verdict(record['checks'])!r}")
    return record


def load_records(folder: Path = RECORDS) -> list[dict]:
    """Every record in ``folder``, checked, in the order of their file names."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no records folder {folder} (run from the repository root, or name the folder)")
    return [check_record(json.loads(path.read_text()), str(path)) for path in sorted(folder.glob("*.json"))]
