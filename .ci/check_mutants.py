"""Fail when a mutant survives that docs/MUTATION.md does not explain.

Run after ``mutmut run``; reads ``mutmut results`` and the page's tables of equivalent
mutants, of mutants killed outside mutmut and of survivors no test pins (the first
column, in backticks), prints
the score, exits 1 on an unexplained survivor or on a mutant no test covers (``no
tests``: a survivor nobody ran). With module patterns (``causefs.numerics.simplex*``, as
``mutmut run`` takes them), only the mutants of those modules are checked, so a targeted
run is judged on what it ran; without, every mutant must have been run.
"""

import argparse
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: statuses of a mutant no test caught
UNCAUGHT = ("survived", "no tests")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="*", help="mutant name patterns (default: all)")
    patterns = parser.parse_args(argv).patterns or ["*"]
    listed = subprocess.run(["mutmut", "results", "--all", "true"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    status = {name: state for name, state
              in re.findall(r"^\s*(\S+): (\w[\w ]*)$", listed, flags=re.M)
              if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)}
    page = (ROOT / "docs" / "MUTATION.md").read_text()
    explained = set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.M))
    uncaught = sorted(name for name, state in status.items() if state in UNCAUGHT)
    counts = {state: sum(s == state for s in status.values())
              for state in ("killed", "timeout", "survived", "no tests", "not checked")}
    print(f"mutants: {len(status)}, " + ", ".join(f"{n} {s}" for s, n in counts.items())
          + f" ({len(set(uncaught) & explained)} survivors explained: equivalent, killed "
            "outside mutmut, or pinned by no test)")
    unexplained = [name for name in uncaught if name not in explained]
    for name in unexplained:
        print(f"unexplained {status[name]}: {name} (mutmut show {name})")
    unrun = [name for name, state in status.items() if state == "not checked"]
    if unrun:
        print(f"{len(unrun)} mutants not run, e.g. {unrun[0]}: run mutmut on them first")
    return 1 if unexplained or unrun else 0


if __name__ == "__main__":
    sys.exit(main())
