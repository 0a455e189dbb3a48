"""Hostlist and idset costs at El Capitan size (11,136 hosts), per call in µs.

Goal (issue 2): decode, encode, count and index-of of 11,136-host lists in
microseconds.  The C calls are timed through the cffi wrapper, so each
figure includes the Python call overhead (about 0.1-0.3 µs).  "Fragmented"
is the worst realistic shape: the same hosts as 5,568 ranges (every other
host, then the rest), where index-of goes through libdws' lazy range index.
"""

from __future__ import annotations

import timeit

from flux_dws.libdws.hostlist import Hostlist
from flux_dws.libdws.idset import IDset

N = 11136


def per_call_us(stmt: object, number: int) -> float:
    return min(timeit.repeat(stmt, number=number, repeat=3)) / number * 1e6  # type: ignore[arg-type]


def main() -> None:
    compressed = f"elcap[1001-{1000 + N}]"
    names = list(Hostlist(compressed))
    expanded = ",".join(names)
    hl = Hostlist(compressed)
    frag_names = names[::2] + names[1::2]
    fragmented = Hostlist(frag_names)
    frag_text = fragmented.encode()
    print(f"hostlist decode+encode '{compressed}': "
          f"{per_call_us(lambda: Hostlist(compressed).encode(), 2000):.2f} µs")
    print(f"hostlist decode+encode of the 11,136 names spelled out: "
          f"{per_call_us(lambda: Hostlist(expanded).encode(), 5):.0f} µs")
    print(f"hostlist decode+encode of the fragmented form (5,568 ranges): "
          f"{per_call_us(lambda: Hostlist(frag_text).encode(), 5):.0f} µs")
    print(f"hostlist from a Python list of 11,136 names: "
          f"{per_call_us(lambda: Hostlist(names), 5):.0f} µs")
    print(f"hostlist count: {per_call_us(lambda: len(hl), 20000):.2f} µs")
    print(f"hostlist nth (hl[5000], fragmented): "
          f"{per_call_us(lambda: fragmented[5000], 20000):.2f} µs")
    print(f"hostlist index-of (compressed list), per host, all 11,136: "
          f"{per_call_us(lambda: [hl.index(n) for n in names], 3) / N:.3f} µs")
    print(f"hostlist index-of (fragmented list), per host, all 11,136: "
          f"{per_call_us(lambda: [fragmented.index(n) for n in names], 3) / N:.3f} µs")
    print(f"hostlist first index-of on a fresh fragmented list (builds the index): "
          f"{per_call_us(lambda: Hostlist(frag_text).index('elcap1001'), 5):.0f} µs")
    t = per_call_us(lambda: list(Hostlist(compressed)), 20)
    print(f"hostlist expand to 11,136 names: {t:.0f} µs")
    other = Hostlist(f"elcap[{1000 + N // 2}-{1000 + N + 100}]")
    print(f"hostlist union / intersection / difference (11,136 x 5,668): "
          f"{per_call_us(lambda: hl | other, 5):.0f} / {per_call_us(lambda: hl & other, 5):.0f}"
          f" / {per_call_us(lambda: hl - other, 5):.0f} µs")
    print(f"hostlist sort / uniq of the fragmented list: "
          f"{per_call_us(lambda: fragmented.sorted(), 5):.0f} / "
          f"{per_call_us(lambda: fragmented.uniq(), 5):.0f} µs")
    print(f"idset decode+encode '0-11135': "
          f"{per_call_us(lambda: IDset('0-11135').encode(), 5000):.2f} µs")
    a, b = IDset("0-11135"), IDset(range(0, N, 2))
    b_text = b.encode()
    print(f"idset decode+encode of 5,568 single ids: "
          f"{per_call_us(lambda: IDset(b_text).encode(), 50):.0f} µs")
    print(f"idset contains (5,568 ranges): {per_call_us(lambda: 5001 in b, 20000):.2f} µs")
    print(f"idset union / intersection / difference of 0-11135 and 5,568 single ids: "
          f"{per_call_us(lambda: a | b, 200):.1f} / {per_call_us(lambda: a & b, 200):.1f} / "
          f"{per_call_us(lambda: a - b, 200):.1f} µs")


if __name__ == "__main__":
    main()
