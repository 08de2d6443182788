"""``memrl`` and ``python -m memrl``: the command line (``memrl.cli``), with a Ctrl-C while it is still
importing answered as one later is: one line and exit status 130, not a traceback."""

import os
import sys


def main() -> None:
    # This process launches the training workers and evaluates after them on the same accelerator.
    # XLA would reserve 75% of a GPU's memory here when JAX first starts its backend (importing the
    # command line does: the environments' constant arrays), and the worker then runs out of memory;
    # so every memrl process allocates on demand, set before anything is imported.
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    try:
        from memrl.cli import main as command_line
    except KeyboardInterrupt:
        print("memrl: interrupted while starting; nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    command_line()


if __name__ == "__main__":
    main()
