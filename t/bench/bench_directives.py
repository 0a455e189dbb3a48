"""#DW parse + validate cost per directive (µs), through the Python API.

A jobdw + copy_in + copy_out workflow is validated against the nnf ruleset
(compiled once, as the dws service does); split and maximums are timed too.
"""

from __future__ import annotations

import timeit

from flux_dws.libdws.directives import check_maximums, default_ruleset, split_directives, validate

DW = ("#DW jobdw type=lustre capacity=1TiB name=lus requires=copy-offload\n"
      "#DW copy_in source=/p/lustre1/in destination=$DW_JOB_lus/in\n"
      "#DW copy_out source=$DW_JOB_lus/out destination=/p/lustre1/out")


def per_call_us(fn: object, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    rules = default_ruleset()
    dws = split_directives(DW)
    n = len(dws)
    t = per_call_us(lambda: split_directives(DW), 5000)
    print(f"split a 3-directive dw string: {t:.1f} µs")
    t = per_call_us(lambda: validate(dws, rules), 5000)
    print(f"validate against the nnf ruleset: {t / n:.1f} µs per directive ({t:.1f} per workflow)")
    t = per_call_us(lambda: validate(split_directives(DW), rules), 5000)
    print(f"split + validate: {t / n:.1f} µs per directive")
    t = per_call_us(lambda: check_maximums(dws, 16, {"lustre": 100}), 5000)
    print(f"maximums check: {t:.1f} µs")


if __name__ == "__main__":
    main()
