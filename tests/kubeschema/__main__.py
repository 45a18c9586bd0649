"""`python -m tests.kubeschema [--xrd PATH]... [--strict] FILE...`: validate YAML streams.

Every object is checked against the repository's vendored upstream schemas (schemas/upstream)
and the composite resources of the XRDs given with --xrd (a file, or a directory searched for
them); see tests/kubeschema/report.py for the output and exit status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.kubeschema.report import validate_files
from tests.kubeschema.validate import Validator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.kubeschema", description="Validate YAML streams against schemas/upstream and XRDs."
    )
    parser.add_argument("files", nargs="+", type=Path, help="YAML files (multi-document streams)")
    parser.add_argument("--xrd", action="append", default=[], type=Path, help="an XRD file or a directory of them")
    parser.add_argument("--strict", action="store_true", help="warnings fail too")
    args = parser.parse_args(argv)
    for path in [*args.files, *args.xrd]:
        if not path.exists():
            parser.error(f"{path}: no such file or directory")
    validator = Validator(xrds=args.xrd)
    run = validate_files(validator, args.files, strict=args.strict)
    sys.stderr.write(run.stderr)
    sys.stdout.write(run.stdout)
    return 2 if validator.problems else run.returncode


if __name__ == "__main__":
    sys.exit(main())
