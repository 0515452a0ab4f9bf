"""What a fresh page costs on this machine, with and without a fit's allocator policy.

Fills a temporary of ``--mb`` megabytes (a 100,000 x 216 block of floats by default, the
largest Laplacian product of a 100,000 x 256 fit's W system) in rounds: allocated, filled,
freed, then ``--pause`` seconds of sleep (a fit's other blocks run between two such
temporaries). Without the policy glibc gives the block back with ``munmap`` and the next
one faults in fresh pages; under :func:`causefs.numerics.allocation.retained_memory` it
stays in the heap. Prints the seconds of each round's fill and the ratio of the medians.

    python benchmarks/fresh_pages.py [--mb 173] [--rounds 5] [--pause 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import numpy as np

from causefs.numerics.allocation import glibc, retained_memory


def rounds(mb: float, count: int, pause: float) -> list:
    seconds = []
    for _ in range(count):
        start = time.perf_counter()
        block = np.empty(int(mb * 1e6) // 8)
        block.fill(1.0)
        seconds.append(time.perf_counter() - start)
        del block
        time.sleep(pause)
    return seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=172.8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause", type=float, default=3.0)
    args = parser.parse_args(argv)
    if glibc() is None:
        print("the C library is not glibc: the policy is a no-op here")
    print(f"| policy | fill of {args.mb:.0f} MB, s, by round (pause {args.pause:g} s) | median |")
    print("|---|---|---|")
    medians = {}
    for name, policy in (("glibc's default", contextlib.nullcontext),
                         ("retained_memory", retained_memory)):
        with policy():
            seconds = rounds(args.mb, args.rounds, args.pause)
        medians[name] = statistics.median(seconds)
        print(f"| {name} | {', '.join(f'{s:.3f}' for s in seconds)} | {medians[name]:.3f} |")
    default, retained = medians.values()
    print(f"\nretained / default (medians): {retained / default:.2f}")


if __name__ == "__main__":
    main()
