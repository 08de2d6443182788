"""Figures of this checkout's code beside those of another git revision (``memrl bench htm-agents
--baseline REV``), each measured in a fresh Python process, the two in turn: a speed-up shown side by side with
the code it replaces, without keeping a copy of that code."""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import memrl

CHECKOUT_SOURCE = Path(memrl.__file__).parents[1]  # the folder memrl is imported from (``src``)


@functools.cache
def revision_source(revision: str) -> Path:
    """The ``src`` folder of ``revision`` of the git repository this memrl is imported from, extracted
    into a temporary folder once per process (the repository itself is not touched)."""
    root = CHECKOUT_SOURCE.parent

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True)

    if git("rev-parse", "--show-toplevel").returncode:
        raise ValueError(f"--baseline needs memrl imported from a git checkout; {root} is not one")
    archive = git("archive", "--format=tar", revision, "src")
    if archive.returncode:
        raise ValueError(
            f"--baseline {revision!r}: git cannot read that revision's src folder ({archive.stderr.decode().strip()})"
        )
    folder = Path(tempfile.mkdtemp(prefix="memrl-baseline-"))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def run_script(source: Path, script: str, argument) -> object:
    """Run ``script`` in a fresh Python process that imports memrl from ``source``; it gets
    ``argument`` as JSON in ``sys.argv[1]`` and prints its result as JSON on its last line."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argument)], capture_output=True, text=True, env=environment
    )
    if done.returncode:
        raise RuntimeError(
            f"measuring with the code in {source} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])
