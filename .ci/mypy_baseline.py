"""mypy with a checked-in baseline that may only shrink.

Runs mypy (configuration in pyproject.toml) and compares its errors with
``.ci/mypy-baseline.txt``, one error per line as ``path: message  [code]`` (line numbers
left out, so editing a file does not churn the baseline). Exits 1 when an error is not in
the baseline (a new error: fix it) and when a baseline error is gone (shrink the baseline
with ``--update``, so that it cannot come back unnoticed). ``--update`` rewrites the
baseline but refuses to add errors (unless there is no baseline yet).

    python .ci/mypy_baseline.py            # CI
    python .ci/mypy_baseline.py --update   # after fixing errors
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
ERROR = re.compile(r"^(?P<path>[^:\s]+):\d+(?::\d+)?: error: (?P<message>.*)$")


def current_errors() -> Counter[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode not in (0, 1) or "errors prevented further checking" in done.stdout:
        sys.stdout.write(done.stdout + done.stderr)
        raise SystemExit("mypy could not check the project (see above)")
    errors: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            errors[f"{match['path']}: {match['message']}"] += 1
    return errors


def read_baseline() -> Counter[str]:
    if not BASELINE.exists():
        return Counter()
    lines = BASELINE.read_text(encoding="utf-8").splitlines()
    return Counter(line for line in lines if line.strip() and not line.startswith("#"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the (shrunk) baseline")
    args = parser.parse_args()
    errors, baseline = current_errors(), read_baseline()
    new = errors - baseline
    gone = baseline - errors
    if new and not (args.update and not BASELINE.exists()):
        print(f"mypy: {sum(new.values())} error(s) not in the baseline {BASELINE.name}:")
        for error in sorted(new.elements()):
            print(f"  {error}")
        if args.update:
            print("the baseline only shrinks: fix these instead of adding them")
        return 1
    if args.update:
        header = "# mypy errors accepted for now; this file may only shrink (.ci/mypy_baseline.py)"
        BASELINE.write_text(
            "\n".join([header, *sorted(errors.elements())]) + "\n", encoding="utf-8"
        )
        print(f"baseline rewritten: {sum(errors.values())} error(s)")
        return 0
    if gone:
        print(
            f"mypy: {sum(gone.values())} baseline error(s) are fixed; shrink the baseline with "
            "`python .ci/mypy_baseline.py --update` (so they cannot come back unnoticed)"
        )
        return 1
    print(f"mypy: {sum(errors.values())} known error(s) in the baseline, no new one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
