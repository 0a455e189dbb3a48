"""What the Kubernetes layer hands back: every outcome, as an event dict.

The layer does I/O only and hands every outcome back as an event dict
through ``post(event)`` (thread-safe, never blocking for long: the
reactor's queue).  The wire is doc/guide/service.rst; the shapes posted
are::

    {"type": "sync", "kind": K, "objects": [O, ...]}
    {"type": "watch", "kind": K, "event": "ADDED"|"MODIFIED"|"DELETED", "object": O}
    {"type": "k8s-result", "token": T, "ok": B, "code": C, "message": S, "object": O|None}

(the reactor adds ``now``).  The first two come from the watches
(watching.py), the last from the writers (writing.py).  Objects are
decoded JSON as the API server sent it, never the client's models; a
watch event's object and an answer's are DecodedObjects (dicts that keep
the text they were decoded from, which the engine is handed instead of
the object encoded again).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Post"]

#: where the layer's watches and writers post their events
Post = Callable[[dict[str, Any]], None]
