"""Optional access to a running Flux instance (flux-core Python bindings).

flux-dws' command-line tools work without Flux when given explicit inputs;
where Flux is installed and an instance is reachable they read its
configuration and job data.  Everything here raises FluxUnavailable with a
message saying what was needed when Flux is not there.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any


class FluxUnavailable(Exception):
    """flux-core (or a running instance) is needed but not available."""


#: what flux-dws uses of flux-core's bindings (their own imports come along:
#: flux.job needs ply, through flux.constraint)
FLUX_MODULES = ("flux", "flux.job", "flux.kvs")


def _missing(exc: ImportError) -> str | None:
    """The module a failed import lacked (None: it failed otherwise)."""
    return exc.name if isinstance(exc, ModuleNotFoundError) else None


def _why(exc: ImportError) -> str:
    name = _missing(exc)
    return f"no module named '{name}'" if name else str(exc)


def flux_python_path(flux_cmd: str | None = None) -> str | None:
    """Where flux-core's Python bindings are: ``flux config builtin
    python_path`` of the flux on PATH (flux(1) puts its own directory
    first on the PATH of the commands it runs), or None."""
    flux_cmd = flux_cmd or shutil.which("flux")
    if flux_cmd is None:
        return None
    try:
        proc = subprocess.run([flux_cmd, "config", "builtin", "python_path"],
                              capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    path = proc.stdout.strip()
    return path if proc.returncode == 0 and path else None


def import_flux() -> None:
    """Import flux-core's Python bindings (FLUX_MODULES).  flux(1) gives a
    command that is not a ``flux-*.py`` file no Python path, so a venv's
    ``flux-dws`` (FLUX_EXEC_PATH_PREPEND) does not see them: where ``flux``
    itself is missing, its directory is taken from flux-core (see
    flux_python_path) and added to ``sys.path``.  FluxUnavailable names
    the module that is missing: the bindings, or one they import."""
    try:
        for name in FLUX_MODULES:
            importlib.import_module(name)
        return
    except ImportError as exc:
        if _missing(exc) != "flux":
            raise FluxUnavailable(f"the flux Python bindings cannot be imported: {_why(exc)}"
                                  f" (in {sys.executable})") from None
    path = flux_python_path()
    if path is None or not os.path.isdir(path):
        raise FluxUnavailable("the flux Python bindings are not installed (no module named "
                              "'flux' in this Python's path, nor a 'flux' command on PATH"
                              " to ask where they are)") from None
    if path not in sys.path:
        sys.path.append(path)
    try:
        for name in FLUX_MODULES:
            importlib.import_module(name)
    except ImportError as exc:
        if _missing(exc) == "flux":
            raise FluxUnavailable("the flux Python bindings are not installed (no module "
                                  f"named 'flux' in this Python's path nor in {path})"
                                  ) from None
        raise FluxUnavailable(f"the flux Python bindings in {path} cannot be imported: "
                              f"{_why(exc)} (in {sys.executable})") from None


def open_flux(uri: str | None = None) -> Any:
    if uri is None and "FLUX_URI" not in os.environ:
        raise FluxUnavailable("not running inside a Flux instance (FLUX_URI is not set)")
    import_flux()
    import flux

    try:
        return flux.Flux(uri) if uri else flux.Flux()
    except OSError as exc:
        raise FluxUnavailable(f"cannot connect to Flux: {exc.strerror}") from None


def job_id(text: str) -> Any:
    """The flux.job.JobID of ``text`` (any form flux accepts: f58,
    decimal, ...); ValueError "malformed job id 'TEXT'" when it is none."""
    import flux.job

    try:
        return flux.job.JobID(text)
    except (ValueError, TypeError, OSError):
        raise ValueError(f"malformed job id '{text}'") from None


def config_get(handle: Any, dotted_key: str) -> Any:
    """Value of ``dotted_key`` in the instance's configuration, or None."""
    conf = handle.rpc("config.get").get()
    for part in dotted_key.split("."):
        if not isinstance(conf, dict) or part not in conf:
            return None
        conf = conf[part]
    return conf


def ask_dws(topic: str) -> Any:
    """The dws service's answer to ``topic``; FluxUnavailable says why
    there is none (no instance, or the service did not answer)."""
    h = open_flux()
    try:
        return h.rpc(topic, {}).get()
    except OSError as exc:
        hint = " (is it loaded? flux module load dws.py)" if exc.errno == errno.ENOSYS else ""
        raise FluxUnavailable(f"the dws service did not answer {topic}: {exc.strerror}"
                              f"{hint}") from None


def root_handle(handle: Any) -> Any:
    """A handle on the root instance (following ``parent-uri`` upward)."""
    import flux

    current = handle
    while True:
        try:
            parent = current.attr_get("parent-uri")
        except OSError:
            return current
        if not parent:
            return current
        current = flux.Flux(parent)


def config_get_or_root(key: str) -> Any:
    """Look ``key`` up in this instance, falling back to the root instance."""
    h = open_flux()
    value = config_get(h, key)
    if value is None:
        value = config_get(root_handle(h), key)
    return value


def job_annotations(jobid: str) -> dict[str, Any]:
    """The annotations of a job (memos live under ``user``)."""
    h = open_flux()
    import flux.job

    try:
        jid = flux.job.JobID(jobid)
    except (ValueError, OSError):
        raise FluxUnavailable(f"invalid job id '{jobid}'") from None
    resp = h.rpc("job-list.list-id", {"id": int(jid), "attrs": ["annotations"]}).get()
    job = resp.get("job", {}) if isinstance(resp, dict) else {}
    annotations = job.get("annotations", {})
    return annotations if isinstance(annotations, dict) else {}


def parse_config_R(path: str) -> dict[str, Any]:
    """``flux R parse-config PATH``: R from a [resource] TOML config."""
    flux_cmd = shutil.which("flux")
    if flux_cmd is None:
        raise FluxUnavailable("the 'flux' command is not on PATH")
    proc = subprocess.run(
        [flux_cmd, "R", "parse-config", path], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise FluxUnavailable(f"flux R parse-config {path}: {proc.stderr.strip()}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def job_info_keys(handle: Any, requests: list[tuple[int, str]]) -> dict[tuple[int, str], str]:
    """Read keys of jobs' KVS directories through job-info (which lets a
    user read only their own jobs), one lookup per (jobid, key), all sent
    before the first answer is waited for (job_info_window with room for
    all).  The raw values of the keys found; a missing key (or job) is left
    out; PermissionError when job-info refuses a job (another user's)."""
    return {(jobid, key): value
            for jobid, key, value in job_info_window(handle, requests,
                                                     in_flight=max(len(requests), 1))
            if value is not None}


def job_info_window(handle: Any, requests: Iterable[tuple[int, str]], in_flight: int = 64,
                    deadline: float | None = None
                    ) -> Iterator[tuple[int, str, str | None]]:
    """Read one key of each of many jobs' KVS directories through
    job-info, as job_info_keys does, with at most ``in_flight`` lookups
    unanswered at a time: each answer taken sends the next request.
    Yields (jobid, key, raw value) in the order asked, the value None for
    a missing key or job (ENOENT).  PermissionError when job-info refuses
    a job (another user's); TimeoutError when an answer has not come by
    ``deadline`` (a time.monotonic() time; None: no bound)."""
    if in_flight < 1:
        raise ValueError("in_flight must be at least 1")
    todo = iter(requests)
    pending: deque[tuple[int, str, Any]] = deque()
    answered = 0
    while True:
        while len(pending) < in_flight:
            nxt = next(todo, None)
            if nxt is None:
                break
            jobid, key = nxt
            pending.append((jobid, key, handle.rpc("job-info.lookup",
                                                   {"id": jobid, "keys": [key], "flags": 0})))
        if not pending:
            return
        jobid, key, f = pending.popleft()
        left = -1.0 if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            f.wait_for(left)
        except OSError as exc:
            if exc.errno == errno.ETIMEDOUT:
                raise TimeoutError(f"job-info answered {answered} lookups, not job {jobid}'s"
                                   f" (nor {len(pending)} more sent)") from None
            raise
        answered += 1
        try:
            value = f.get().get(key)
        except OSError as exc:
            if exc.errno == errno.EPERM:
                raise PermissionError(f"job {jobid} belongs to another user") from None
            if exc.errno == errno.ENOENT:
                yield jobid, key, None
                continue
            raise
        yield jobid, key, value if isinstance(value, str) else None
