"""One writer per run folder: an OS file lock (``flock``) on ``RUN/.writer.lock``; and the checks an
output folder passes before anything is written.

Whatever trains or evaluates into a folder holds its lock for as long as it writes; a second
process is refused at once with the holder's process id and command. The kernel drops the lock
when the last process holding it ends, however it ends, so a crashed run never blocks its resume.
The training workers a holder starts inherit the lock (``held_descriptors``): a worker left
running after its parent was killed still keeps a second writer out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".writer.lock"
_HELD: dict[Path, int] = {}
"""the folders this process holds, with their lock files' descriptors"""


class FolderBusy(RuntimeError):
    """Another process writes into the run folder."""


def held_descriptors() -> tuple[int, ...]:
    """The descriptors of the locks this process holds (to pass on to the workers it starts)."""
    return tuple(_HELD.values())


@contextlib.contextmanager
def writing(folder: Path | str, what: str | None = None) -> Iterator[None]:
    """Hold ``folder``'s writer lock while the block runs (``what``: the command, for the message
    another writer gets; default this process's). Re-entrant within a process. Raises
    ``FolderBusy`` at once if another process holds it."""
    folder = Path(folder).resolve()
    if folder in _HELD:
        yield
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:  # e.g. EPERM under /sys, which os.access lets root pass
        raise ValueError(f"{folder} cannot be made or written: {err.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise FolderBusy(
            f"{folder} is being written by {holder}; wait for it to finish (or stop it) and run again, or choose another --out"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"process {os.getpid()} ({what or command_line()})\n".encode(), 0)
    _HELD[folder] = fd
    try:
        yield
    finally:
        del _HELD[folder]
        os.close(fd)  # releases the lock (workers that inherited it keep it until they end)


def command_line() -> str:
    """This process's command, for a lock's holder line."""
    return " ".join(["memrl", *sys.argv[1:]]) if sys.argv else "memrl"


MARKERS = {"run": "config.json", "experiment": "experiment.json"}
"""the file that makes a folder a memrl run folder or an experiment folder"""


def is_memrl_run(path: Path) -> bool:
    """Whether ``path`` holds a memrl run (a config.json with a learner and its config)."""
    import json

    try:
        record = json.loads((path / MARKERS["run"]).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"learner", "config"} <= record.keys()


def check_output_folder(path: Path, flag: str = "--out", holds: str | None = None) -> None:
    """Refuse an output folder that cannot be one before anything is built: the current directory
    (an empty ``--out``, or its own path), an existing file, a path under a file, a place this user
    cannot write; and, where it ``holds`` a "run" or an "experiment", a folder inside a run folder
    or an existing folder with other files than that one's (``MARKERS``; lock files aside)."""
    check_path_length(path, flag)
    if str(path) in ("", ".") or path.resolve() == Path.cwd().resolve():
        raise ValueError(f"{flag} must name a folder for the output's files, not the current directory")
    if holds is None:
        return check_writable(path, flag)
    inside = next((parent for parent in path.resolve().parents if is_memrl_run(parent)), None)
    if inside is not None:
        raise ValueError(f"{flag} {path} lies inside the run folder {inside}; choose a folder outside it")
    if path.is_dir() and not (path / MARKERS[holds]).is_file():
        others = sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_file() and f.name != LOCK_NAME)
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            raise ValueError(
                f"{flag} {path} holds files that are not a memrl {holds}'s ({shown}); choose a new or empty folder"
            )
    check_writable(path, flag)


INSIDE_A_RUN = 100
"""characters the files a run writes add below its folder (seed_<s>/kept_params/update_<n>.msgpack, a
sweep's or an experiment's run names aside), kept free of the file system's path limit"""


def check_path_length(path: Path, flag: str) -> None:
    """Refuse a path with a name longer than the file system allows, or one so long that the files
    written inside it would pass the limit of a whole path."""
    name_max, path_max = os.pathconf("/", "PC_NAME_MAX"), os.pathconf("/", "PC_PATH_MAX")
    if long := next((part for part in path.parts if len(os.fsencode(part)) > name_max), None):
        raise ValueError(
            f"{flag}: the name {long[:40]}... is {len(os.fsencode(long))} bytes long; this file system allows {name_max}"
        )
    if (length := len(os.fsencode(os.path.abspath(path)))) > path_max - INSIDE_A_RUN:
        raise ValueError(
            f"{flag}: the path is {length} bytes long; the files inside it would pass this file system's limit of "
            f"{path_max} bytes (keep it under {path_max - INSIDE_A_RUN})"
        )


def check_writable(path: Path, flag: str) -> None:
    """Refuse an existing file, a path under a file, or a place this user cannot write."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {path} is a file, not a folder; choose another {flag}")
    existing = next(p for p in [path, *path.absolute().parents] if p.exists())
    if not existing.is_dir():
        raise ValueError(f"{flag} {path} cannot be made: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(
            f"{flag} {path} cannot be {'written' if existing == path else 'made'}: {existing} is not writable by this user"
        )
