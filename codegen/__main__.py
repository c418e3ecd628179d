"""``python -m codegen build | check``."""

import argparse
import sys

from codegen.build import build, check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument(
        "command", choices=["build", "check"], help="generate packages, or verify they are fresh"
    )
    parser.add_argument(
        "--full", action="store_true", help="check: translate every module again and show diffs (slow)"
    )
    args = parser.parse_args(argv)
    return build() if args.command == "build" else check(full=args.full)


if __name__ == "__main__":
    sys.exit(main())
