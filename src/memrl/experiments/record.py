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
from memrl.experiments.seed_statistics import OPS, RESULT_KEYS, could_decide, decide, seed_note, undecided

VERDICTS = {
    "reproduced": "every central check passes and is decided by its one-sided test at 95% over the seeds, on at least 3 seeds per run",
    "reversed": "a central check's opposite holds by the same test (it outranks every verdict below it), and no learning check failed",
    "partly": "some central checks are so decided, not all, and none is reversed",
    "direction only": "every central check has the claimed direction, not all decided (too few seeds, or within the seed noise)",
    "not trained": "the model the claim is about was not shown to leave its memoryless or chance level (a learning check failed its direction, or was not decided where its seeds could decide it): the run says nothing about the claim",
    "not reproduced": "the model the claim is about learned (its learning check is decided), and the claimed direction does not hold",
    "learning unchecked": "the claimed direction does not hold, and no learning check says whether the model learned: the run says nothing about the claim",
    "analogue": "the analogue tests another property than the paper's claim (the record's ``analogue`` says which); not counted among the reproduced",
    "not run": "nothing was checked",
}
BENCHMARK_VERDICTS = {
    "controls pass": "every central check (the benchmark's controls) is decided",
    "controls undecided": "every control has its claimed direction, not all decided",
    "controls fail": "a control does not have its claimed direction",
    "not run": "nothing was checked",
}
"""a benchmark's verdicts: whether its controls pass, never whether a paper's claim is reproduced"""
"""each verdict and what it means, in the order they are given (the first that applies; *not trained*
is decided before all but *analogue*, and *analogue* before everything)"""
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
    "test",
    "p",
    "passed",
    "decided",
    "reversed",
    "per_seed",
)
DERIVED = RESULT_KEYS
"""the keys of a check that are computed from its per-seed values (``recomputed``)"""
FAILED = ("partly", "not reproduced", "not trained", "reversed", "learning unchecked", "controls fail")
"""verdicts after which a new version of the same experiment and preset must say what it changed"""
RECORDS = Path("docs") / "results"
"""where the project keeps its committed records (relative to the repository root)"""
KEPT = "kept"
"""the folder beside an experiment's records that holds its parts' kept results (``kept_parts.py``)"""


def learned(checks: list[dict]) -> bool | None:
    """Whether the model the claim is about learned, from the learning checks: False when one fails
    its direction or is undecided where its seeds could have decided it, else True when one is
    decided, None where the record cannot tell (no learning check, or none its seeds could decide)."""
    learning = [c for c in checks if c.get("learning") and c["passed"] is not None]
    if any(not c["passed"] or (decidable(c) and not c["decided"]) for c in learning):
        return False
    return True if any(c["decided"] for c in learning) else None


def decidable(check: dict) -> bool:
    """Whether a check's per-seed values could decide it at their number of seeds: a test with a p,
    on at least ``MIN_SEEDS`` seeds of each run, whose most favourable outcome (for 0/1 values) is
    below the test's level (``seed_statistics.could_decide``)."""
    return check.get("p") is not None and not check.get("undecided_because") and could_decide(*test_arguments(check))


def verdict(checks: list[dict], analogue: str = "", kind: str = "reproduction") -> str:
    """The experiment's verdict from its checks (see ``VERDICTS``, and ``BENCHMARK_VERDICTS`` for a
    benchmark); ``analogue`` the property an analogue tests in place of the paper's claim."""
    central = [c for c in checks if c["central"] and c["passed"] is not None]
    if not central:
        return "not run"
    if kind == "benchmark":
        if all(c["decided"] for c in central):
            return "controls pass"
        return "controls undecided" if all(c["passed"] for c in central) else "controls fail"
    if analogue:
        return "analogue"
    trained = learned(checks)
    if trained is False:
        return "not trained"
    if all(c["decided"] for c in central):
        return "reproduced"
    if any(c["reversed"] for c in central):
        return "reversed"
    if any(c["decided"] for c in central):
        return "partly"
    if all(c["passed"] for c in central):
        return "direction only"
    return "not reproduced" if trained else "learning unchecked"


def test_arguments(check: dict) -> tuple:
    """What ``seed_statistics.decide`` (and ``could_decide``) take, read from a record's check."""
    ordering = bool(check.get("against"))
    return (
        check["op"],
        check["per_seed"],
        None if ordering else check["threshold"],
        check.get("against_per_seed"),
        check.get("paired", False),
        check.get("parity", 0.0),
        check.get("shared_episodes", 0),
    )


def recomputed(check: dict) -> dict:
    """The derived keys of ``check`` (``DERIVED``) computed from what it compares: its per-seed
    values (``per_seed``, and for an ordering, one with a run ``against``, ``against_per_seed``,
    paired or not, with its ``parity`` bound and ``shared_episodes``), or where either run has none
    (a transcribed number) its value and threshold, for their direction only."""
    ordering = bool(check.get("against"))
    if check.get("per_seed") and (not ordering or check.get("against_per_seed")) and not check.get("undecided_because"):
        result = decide(*test_arguments(check))
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
        "verdict": verdict(checks, experiment.analogue, experiment.kind),
        **({"analogue": experiment.analogue} if experiment.analogue else {}),
        **({"part_of": experiment.part_of} if experiment.part_of else {}),
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
    given = verdict(record["checks"], record.get("analogue", ""), record["kind"])
    if record["verdict"] != given:
        raise ValueError(f"{where}: verdict {record['verdict']!r}, but its checks give {given!r}")
    return record


def refreshed(record: dict) -> dict:
    """``record`` with every check's derived keys and test note, and its verdict, recomputed by
    today's tests from its per-seed values (what ``memrl results --write`` writes back)."""
    checks = []
    for check in record["checks"]:
        derived = recomputed(check)
        note = check.get("note", "")
        if derived["p"] is not None or derived["test"] != "none: no per-seed values":
            _, within, rest = note.partition(" (within seeds: ")
            note = seed_note(derived) + (f" (within seeds: {rest}" if within else "")
        checks.append({**check, **derived, "note": note})
    return {**record, "checks": checks, "verdict": verdict(checks, record.get("analogue", ""), record["kind"])}


def refresh_records(folder: Path = RECORDS) -> list[Path]:
    """Rewrite every record file in ``folder`` as ``refreshed`` gives it; the paths that changed."""
    changed = []
    for path in sorted(Path(folder).glob("*/v*.json")):
        record = json.loads(path.read_text())
        fresh = refreshed(record)
        if fresh != record:
            path.write_text(json.dumps(fresh, indent=2, ensure_ascii=False) + "\n")
            changed.append(path)
    return changed


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
