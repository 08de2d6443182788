"""``memrl`` and ``python -m memrl``: the command line (``memrl.cli``), with a Ctrl-C while it is still
importing answered as one later is: one line and exit status 130, not a traceback."""

import sys


def main() -> None:
    try:
        from memrl.cli import main as command_line
    except KeyboardInterrupt:
        print("memrl: interrupted while starting; nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    command_line()


if __name__ == "__main__":
    main()
