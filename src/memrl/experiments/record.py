"""The record of one reproduction: what ran, on what budget against the paper's, every check with
the per-seed values it compares, its margin over the seeds and whether it was decided, and the
experiment's verdict from its central checks. ``memrl reproduce`` writes one; the records committed
under ``docs/results/NAME/vN.json`` (every version kept) are what the scoreboard (``memrl results``,
``docs/scoreboard.md``) is generated from, each check recomputed from its per-seed values."""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
from pathlib import Path

from memrl.experiments.base import KINDS, Experiment
from memrl.experiments.seed_statistics import MIN_SEEDS, OPS, decide, undecided

VERDICTS = {
    "reproduced": "every central check passes and is decided beyond the seed noise, on at least 3 seeds per run",
    "partly": "some central checks are so decided, not all",
    "direction only": "every central check has the claimed direction, none beyond the seed noise (or on fewer than 3 seeds)",
    "not reproduced": "the claimed direction does not hold (where the record checks it: the model the claim is about learned)",
    "not trained": "the model the claim is about never left its memoryless or chance level: the run says nothing about the claim",
    "reversed": "the model the claim is about learned, and the opposite ordering holds beyond the seed noise",
    "not run": "nothing was checked",
}
"""each verdict and what it means, in the order they are counted (the first that applies, with
*not trained* before *direction only*)"""
RECORD_KEYS = (
    "experiment",
    "version",
    "preset",
    "kind",
    "date",
    "device",
    "verdict",
    "runs",
    "checks",
    "paper",
    "figure",
    "finding",
    "section",
)
CHECK_KEYS = (
    "description",
    "central",
    "op",
    "threshold",
    "value",
    "margin",
    "passed",
    "decided",
    "reversed",
    "per_seed",
)
DERIVED = ("value", "threshold", "margin", "passed", "decided", "reversed")
"""the keys of a check that are computed from its per-seed values (``recomputed``)"""
FAILED = ("partly", "not reproduced", "not trained", "reversed")
"""verdicts after which a new version of the same experiment and preset must say what it changed"""
RECORDS = Path("docs") / "results"
"""where the project keeps its committed records (relative to the repository root)"""
KEPT = "kept"
"""the folder beside an experiment's records that holds its parts' kept results (``kept_parts.py``)"""


def learned(checks: list[dict]) -> bool | None:
    """Whether the model the claim is about learned, from the learning checks: True when all are
    decided, False when one fails its direction or is undecided on enough seeds, None where the
    record cannot tell (no learning check, or one without a spread over seeds)."""
    learning = [c for c in checks if c.get("learning") and c["passed"] is not None]
    if any(not c["passed"] or (decidable(c) and not c["decided"]) for c in learning):
        return False
    return True if learning and all(c["decided"] for c in learning) else None


def decidable(check: dict) -> bool:
    """Whether a check's per-seed values could decide it: a spread over at least ``MIN_SEEDS`` seeds of each run."""
    runs = [check.get("per_seed")] + ([check["against_per_seed"]] if check.get("against_per_seed") is not None else [])
    return (
        check["margin"] is not None
        and not check.get("undecided_because")
        and all(r and len(r) >= MIN_SEEDS for r in runs)
    )


def verdict(checks: list[dict]) -> str:
    """The experiment's verdict from its checks (see ``VERDICTS``)."""
    central = [c for c in checks if c["central"] and c["passed"] is not None]
    if not central:
        return "not run"
    if all(c["decided"] for c in central):
        return "reproduced"
    if any(c["decided"] for c in central):
        return "partly"
    trained = learned(checks)
    if trained is False:
        return "not trained"
    if all(c["passed"] for c in central):
        return "direction only"
    return "reversed" if trained and any(c["reversed"] for c in central) else "not reproduced"


def recomputed(check: dict) -> dict:
    """The derived keys of ``check`` (``DERIVED``) computed from what it compares: its per-seed
    values (``per_seed``, and for an ordering, one with a run ``against``, ``against_per_seed``,
    paired or not), or where either run has none (a transcribed number) its value and threshold,
    for their direction only."""
    ordering = bool(check.get("against"))
    if check.get("per_seed") and (not ordering or check.get("against_per_seed")) and not check.get("undecided_because"):
        result = decide(
            check["op"],
            check["per_seed"],
            None if ordering else check["threshold"],
            check.get("against_per_seed"),
            check.get("paired", False),
        )
    else:
        result = undecided(check["op"], check["value"], check["threshold"])
    return {key: result[key] for key in DERIVED}


def paper_and_figure(reproduces: str) -> tuple[str, str]:
    """("Beck et al. 2020", "Fig. 4 and Sec. 5") from "Beck et al. 2020, Fig. 4 and Sec. 5 (T-maze results)"."""
    paper, _, rest = reproduces.partition(", ")
    return paper, rest.split(" (")[0]


def device_name() -> str:
    """The JAX backend and, on a CPU, the cores this process may use ("cpu, 2 cores")."""
    import jax

    backend = jax.default_backend()
    return (
        f"cpu, {len(os.sched_getaffinity(0))} cores"
        if backend == "cpu"
        else f"{backend}: {jax.devices()[0].device_kind}"
    )


def make_record(experiment: Experiment, checks: list[dict], wall_time_s: float) -> dict:
    """The record of a ``memrl reproduce`` run of ``experiment`` whose checks gave ``checks`` (the
    runner's entries: each expectation's outcome with its description and whether it is central)."""
    paper, figure = paper_and_figure(experiment.reproduces)
    return {
        "experiment": experiment.name,
        "version": experiment.version,
        "preset": experiment.preset or "-",
        "kind": experiment.kind,
        "date": datetime.date.today().isoformat(),
        "device": device_name(),
        "machine": platform.node(),
        "verdict": verdict(checks),
        "paper": paper,
        "figure": figure,
        "finding": experiment.finding,
        "section": experiment.name,
        "command": f"memrl reproduce {experiment.name}"
        + (f" --preset {experiment.preset}" if experiment.preset else ""),
        "wall_time_s": round(wall_time_s, 1),
        **({"changes": experiment.changes} if experiment.changes else {}),
        "runs": {
            run: {
                "steps": config.total_steps,
                "unit": config.step_label,
                "paper_steps": experiment.paper_steps,
                "seeds": config.seeds,
            }
            for run, config in experiment.runs.items()
        },
        "checks": checks,
    }


def record_name(experiment: str, preset: str, version: int) -> str:
    """``NAME/vN.json`` for a ``cpu`` preset or an experiment without presets, else ``NAME/vN.PRESET.json``."""
    suffix = "" if preset in ("cpu", "-", "") else f".{preset}"
    return f"{experiment}/v{version}{suffix}.json"


def write_record(record: dict, folder: Path, name: str | None = None) -> Path:
    """Write ``record`` into ``folder`` as ``name`` (default: ``record_name``'s)."""
    path = Path(folder) / (name or record_name(record["experiment"], record["preset"], record["version"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, (int, float)) and b is not None:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def check_record(record: dict, where: str) -> dict:
    """Refuse a record that lacks a key, a check that lacks one or whose value, margin or decision
    its per-seed values do not give, or a verdict that its checks do not give; return the record."""
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        raise ValueError(f"{where}: a record needs the keys {', '.join(RECORD_KEYS)}; missing {', '.join(missing)}")
    if record["kind"] not in KINDS:
        raise ValueError(f"{where}: kind must be one of {KINDS}, got {record['kind']!r}")
    for i, check in enumerate(record["checks"]):
        lacking = [key for key in CHECK_KEYS if key not in check]
        if lacking:
            raise ValueError(f"{where}: check {i} needs {', '.join(CHECK_KEYS)}; missing {', '.join(lacking)}")
        if check["op"] not in OPS:
            raise ValueError(f"{where}: check {i}'s op must be one of {tuple(OPS)}, got {check['op']!r}")
        wrong = {key: value for key, value in recomputed(check).items() if not same(check[key], value)}
        if wrong:
            given = ", ".join(f"{key} {check[key]!r}" for key in wrong)
            raise ValueError(
                f"{where}: check {i} ({check['description']!r}) says {given}; its per-seed values give {wrong}"
            )
    for run, budget in record["runs"].items():
        if not {"steps", "paper_steps", "seeds"} <= budget.keys():
            raise ValueError(f"{where}: run {run!r} needs steps, paper_steps and seeds")
    if record["verdict"] != verdict(record["checks"]):
        raise ValueError(f"{where}: verdict {record['verdict']!r}, but its checks give {verdict(record['checks'])!r}")
    return record


def check_history(records: list[dict]) -> None:
    """Refuse a version that follows a failed one (``FAILED``) of the same experiment and preset
    without saying what it changed (``changes``)."""
    previous: dict[tuple, dict] = {}
    for record in sorted(records, key=lambda r: (r["experiment"], r["preset"], r["version"])):
        before = previous.get((record["experiment"], record["preset"]))
        if before and before["verdict"] in FAILED and not record.get("changes"):
            raise ValueError(
                f"{record['experiment']} v{record['version']} follows v{before['version']} ({before['verdict']}): "
                'its record must say what it changed ("changes")'
            )
        previous[(record["experiment"], record["preset"])] = record


def load_records(folder: Path = RECORDS) -> list[dict]:
    """Every record in ``folder`` (``NAME/vN[.PRESET].json``, every version; ``NAME/kept/`` holds no
    records), checked one by one and as a history, in the order of their paths; each is named after its experiment, version and preset."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no records folder {folder} (run from the repository root, or name the folder)")
    strays = sorted(
        p
        for p in folder.rglob("*.json")
        if (p.parent.parent != folder or not p.name.startswith("v")) and p.relative_to(folder).parts[1:2] != (KEPT,)
    )
    if strays:
        raise ValueError(
            f"{strays[0]}: not where a record lies (records are {folder}/<experiment>/v<N>[.<preset>].json); move or remove it"
        )
    records = []
    for path in sorted(folder.glob("*/v*.json")):
        try:
            record = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: not a JSON record ({error})") from None
        check_record(record, str(path))
        expected = record_name(record["experiment"], record["preset"], record["version"])
        if path.relative_to(folder).as_posix() != expected:
            raise ValueError(
                f"{path}: a record of {record['experiment']} v{record['version']} ({record['preset']}) belongs in {folder / expected}"
            )
        records.append(record)
    check_history(records)
    return records


def newest(records: list[dict]) -> list[dict]:
    """The newest version's record of each experiment and preset."""
    latest: dict[tuple, dict] = {}
    for record in records:
        key = (record["experiment"], record["preset"])
        if key not in latest or record["version"] > latest[key]["version"]:
            latest[key] = record
    return list(latest.values())


def older(records: list[dict], record: dict) -> list[dict]:
    """The earlier versions' records of ``record``'s experiment and preset, oldest first."""
    same_row = [r for r in records if (r["experiment"], r["preset"]) == (record["experiment"], record["preset"])]
    return sorted((r for r in same_row if r["version"] < record["version"]), key=lambda r: r["version"])
