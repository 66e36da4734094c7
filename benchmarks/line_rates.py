"""Realized recognizer-error rates of the simulated phone line beside their targets.

Runs 50,000 synthetic caller turns (the realistic mix of `pytest_callm.phone.turn_mix`, as calls of eight
turns by one caller, five attempts per task) through the default line and prints, per 100 caller
turns, how many turns carried no error, one, or two or more, and how often each error type was
applied, beside the targets (the paper's totals; the default profile's own per-type rates).

    python benchmarks/line_rates.py [--turns 50000] [--profile default|PATH] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

from pytest_callm.phone.line import make_line
from pytest_callm.phone.turn_mix import synthetic_turns
from pytest_callm.phone.error_profile import format_rates, load_profile, realized_rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seed", default="benchmarks/line-rates")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    turns = synthetic_turns(args.turns, args.seed, 8)
    errors, lines = [], {}
    for n, (said, caller) in enumerate(turns):
        call, turn = divmod(n, 8)
        task, attempt = divmod(call, 5)
        key = (f"bench/T{task}", attempt + 1)
        line = lines.get(key) or lines.setdefault(key, make_line(args.profile, key[0], key[1], caller))
        errors.append(line.transmit(said, turn).errors)
    elapsed = time.perf_counter() - started

    rates = realized_rates(errors, load_profile(args.profile))
    print(format_rates(rates))
    p = rates["totals"]["none"]["target"] / 100
    se = 100 * math.sqrt(p * (1 - p) / len(turns))
    print(f"\n{len(turns)} turns in {elapsed:.1f} s ({1e6 * elapsed / len(turns):.0f} us a turn); "
          f"one standard error of 'no error' with independent draws: {se:.2f} points")
    worst = max(abs(r["realized"] - r["target"]) for r in rates["totals"].values())
    worst_type = max(abs(r["realized"] - r["target"]) for r in rates["types"].values() if r["target"] is not None)
    print(f"largest gap on the totals: {worst:.2f} points; on a single error type: {worst_type:.2f} points")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
