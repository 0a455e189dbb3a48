"""Python's cyclic garbage collector, run on the reactor thread only.

Python collects cyclic garbage in whichever thread's allocation crosses
a threshold, and runs the finalizers there.  A flux-core Python future is
such garbage (it holds a cffi handle to itself): collected in a watch or
writer thread, it is destroyed there, and its RPC's matchtag goes back
to the handle's pool while the reactor thread takes tags from it.  A
flux handle is not thread-safe: two RPCs got the same tag, and the
second failed with "File exists" (flux-core refuses a second response
handler for a tag), hundreds at once in an El Capitan chaos run
(``t/bench/bench_scale.py --chaos``: "ssd update for elcapN failed
(retrying in 5s): File exists", "KVS write failed: File exists").

So the service turns the automatic collector off (``hold``) and collects
on the reactor thread, as Python would have, when the allocation counts
cross Python's own thresholds (``collect_due``, called by the link after
each slice of posted events and once a second).
"""

from __future__ import annotations

import gc

__all__ = ["collect_due", "hold", "release"]


def hold() -> None:
    """No collection from any thread but where collect_due is called."""
    gc.disable()


def release() -> None:
    """Python collects by itself again (the link is closed)."""
    gc.enable()


def collect_due() -> int:
    """Collect the oldest generation whose count is over its threshold, as
    Python's automatic collector does (gc.get_threshold); returns the
    generation collected, -1 for none."""
    counts = gc.get_count()
    limits = gc.get_threshold()
    for generation in (2, 1, 0):
        if limits[generation] and counts[generation] > limits[generation] \
                and (generation == 0 or counts[0] > limits[0]):
            gc.collect(generation)
            return generation
    return -1
