"""Fail when a mutant survives that docs/MUTATION.md does not explain as equivalent.

Run after ``mutmut run``; reads ``mutmut results`` and the page's table of equivalent
mutants (the first column, in backticks), prints the score, exits 1 on an unexplained
survivor.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    listed = subprocess.run(["mutmut", "results", "--all", "true"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    status = dict(re.findall(r"^\s*(\S+): (\w[\w ]*)$", listed, flags=re.M))
    survived = sorted(name for name, state in status.items() if state == "survived")
    page = (ROOT / "docs" / "MUTATION.md").read_text()
    explained = set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.M))
    killed = sum(state == "killed" for state in status.values())
    print(f"mutants: {len(status)}, killed {killed}, survived {len(survived)} "
          f"({len(set(survived) & explained)} explained as equivalent)")
    unexplained = [name for name in survived if name not in explained]
    for name in unexplained:
        print(f"unexplained survivor: {name} (mutmut show {name})")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
