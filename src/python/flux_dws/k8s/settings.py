"""The Kubernetes layer's settings: pool size, retries, timeouts, versions.

Config keys (``KubeSettings.from_config``; others are ignored): ``writers``,
``retry_initial``, ``retry_max``, ``retry_attempts``, ``retry_deadline``,
``log_retry_deadline``, ``request_timeout``, ``connect_timeout``, ``watch_timeout``,
``watch_backoff_initial``, ``watch_backoff_max``, ``watch_silence``, ``list_limit``,
``dws_api_version``, ``nnf_api_version``.  The service passes its whole
``[rabbit]`` table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["KubeSettings"]


@dataclass(frozen=True)
class KubeSettings:
    """How many writers, how writes are retried, the timeouts of calls and
    watches, the page size of lists, and the API versions to pin."""

    writers: int = 16
    retry_initial: float = 0.05
    retry_max: float = 5.0
    #: a write is given up after retry_attempts or retry_deadline seconds,
    #: whichever comes first: with the backoff capped at retry_max, 40
    #: attempts outlast the deadline, so an API server that restarts within
    #: a minute costs no job (8 attempts gave up after 6.4 s)
    retry_attempts: int = 40
    retry_deadline: float = 60.0
    #: a user container's log read (for the job's KVS, before Teardown,
    #: which waits for it) is given up sooner: it informs, and a rabbit
    #: whose kubelet cannot be reached answers 500 every time (a real
    #: kubelet out of the API server's reach held each job 57 s)
    log_retry_deadline: float = 5.0
    request_timeout: float = 30.0
    connect_timeout: float = 10.0
    watch_timeout: int = 60
    watch_backoff_initial: float = 0.1
    watch_backoff_max: float = 10.0
    #: seconds a watch may hear of no object while objects it knows must
    #: still change, before it is listed again (watching.py)
    watch_silence: float = 120.0
    list_limit: int = 500
    dws_api_version: str | None = None
    nnf_api_version: str | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> KubeSettings:
        """Settings from a config table; unknown keys are ignored, bad values refused."""
        args: dict[str, Any] = {}
        for f in fields(cls):
            if config is None or f.name not in config:
                continue
            value = config[f.name]
            default = getattr(cls, f.name)
            if default is None:
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"{f.name} must be a string")
            elif isinstance(default, int):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"{f.name} must be a positive integer")
            elif (isinstance(value, bool) or not isinstance(value, (int, float))
                  or value <= 0):
                raise ValueError(f"{f.name} must be a positive number")
            args[f.name] = value
        return cls(**args)
