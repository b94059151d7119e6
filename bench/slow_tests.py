"""The test cases left out of the suite for their cost (tests/conftest.py ``SLOW``), run on every core.

    python bench/slow_tests.py [PYTEST ARGS...]

They are real checks, not benchmarks: the exhaustive sweeps over every model of ``models/real`` (conversion with
no flags, calibrated float SQNR, quantized models against their runtime), the 4 GiB zip bomb, the README's bench
scripts. Run them before a release or after touching the importers; the suite (``pytest -q``) keeps at least one
case of each kind. Exits with pytest's code.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    start = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-m", "slow", "tests", *sys.argv[1:]], cwd=ROOT)
    print(f"slow cases: {time.monotonic() - start:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
