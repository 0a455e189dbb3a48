"""The flux-dws ``dws`` service: Flux jobs' DWS Workflows on HPE Rabbit systems.

One file, two ways to run it (see flux-dws-service(8)):

    flux module load /path/to/dws.py [OPTIONS]    # a broker module (flux-core >= 0.84)
    flux python /path/to/dws.py [OPTIONS]         # stand-alone (systemd unit, a Flux job)

Both register the ``dws`` service on the broker, read ``[rabbit]`` from the
broker's configuration, talk to Kubernetes with ``rabbit.kubeconfig`` (or
the client's default), and serve until stopped.

Exit codes (stand-alone): 0 stopped, 2 bad options or configuration, 3 no
Kubernetes (both mean "do not restart" to the systemd unit).

Stopping: the broker's ``dws.shutdown`` request (``flux module remove``,
rc3), or SIGTERM -- what the broker sends a module loaded by hand and never
removed, at the very end of its shutdown (flux-core 0.88's rexec module,
which then waits 5 s for it), and what systemd sends the stand-alone
service.  Either way the reactor stops, the threads are stopped and joined
within STOP_SECONDS, and the module returns (the loader then reports a
clean unload) or the process exits 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

EXIT_USAGE = 2
EXIT_NO_KUBERNETES = 3
#: how long stopping the threads may take: within the 5 s that flux-core's
#: rexec gives a module it sends SIGTERM at shutdown
STOP_SECONDS = 3.5

try:
    from flux_dws.k8s.errors import KubeError
    from flux_dws.k8s.layer import KubeLayer
    from flux_dws.libdws.rabbitconf import ConfigError, check_drain_properties, parse
    from flux_dws.service.core import Service
    from flux_dws.service.fluxlink import FluxLink
except ImportError as _exc:  # pragma: no cover - a deployment error, said plainly
    sys.stderr.write(f"dws: cannot import flux_dws ({_exc}); is flux-dws installed for this"
                     " Python, or PYTHONPATH set?\n")
    raise


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """Bad options raise UsageError with argparse's words (a broker module
    must not exit, and a stand-alone run says them once)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dws", description="the flux-dws dws service")
    p.add_argument("-k", "--kubeconfig", help="kubeconfig (default: rabbit.kubeconfig, then"
                   " KUBECONFIG or ~/.kube/config)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v info, -vv debug messages in the log")
    p.add_argument("-m", "--min-allocation-size", type=int, metavar="GiB",
                   help="minimum rabbit allocation in GiB (default rabbit.min_allocation_size,"
                        " 4)")
    p.add_argument("--drain-queues", nargs="+", metavar="QUEUE",
                   help="only drain nodes whose properties include one of these"
                        " (also rabbit.drain_queues)")
    p.add_argument("-w", "--watch-interval", type=int, metavar="S",
                   help="accepted for compatibility; the service watches, it does not poll")
    p.add_argument("--retry-delay", type=float, metavar="S",
                   help="accepted for compatibility; retries back off on their own")
    p.add_argument("--disable-fluxion", action="store_true",
                   help="rabbits are not ssd vertices in Fluxion: keep jobs off broken or"
                        " busy rabbits with the badrabbit and alloc_rabbit properties")
    p.add_argument("--namespace", default="default",
                   help="namespace of the Workflows (DWS keeps SystemConfiguration, Storage"
                        " and SystemStatus in default whatever this is)")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if args.min_allocation_size is not None and args.min_allocation_size < 1:
        raise UsageError("--min-allocation-size must be at least 1 (GiB)")
    return args


#: the nodes' properties could not be read: why (node_properties)
Unreadable = str


def node_properties(handle: Any) -> dict[str, Any] | Unreadable:
    """The nodes' properties (R's ``execution.properties``, ``{name:
    idset}``) from the resource module on rank 0: ``resource.status``
    answers R without its scheduling graph, so this is small even where R
    is a 100-MB Fluxion graph.  Read once, at start (a node's properties
    are R's, which a config reload does not change); a reload checks the
    drain queues against them.  The text of the error when it fails."""
    try:
        status = handle.rpc("resource.status", nodeid=0).get()
    except OSError as exc:
        return f"resource.status: {exc.strerror or exc}"
    props = (((status or {}).get("R") or {}).get("execution") or {}).get("properties")
    return props if isinstance(props, dict) else {}


def service_config(rabbit: Any, args: argparse.Namespace, owner: int,
                   properties: dict[str, Any] | Unreadable | None = None,
                   warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """A [rabbit] table, checked, with the command line on top (at start and
    at every reload, so an option given on the command line stays).  The
    drain queues, from the option or the table, name node properties (as
    the reference's --drain-queues): refused when no node has any of them
    (``properties``: the nodes' properties, or why they could not be read;
    None: no node has any), and ``warn`` is told of those no node has."""
    cfg = parse(rabbit)
    if args.min_allocation_size is not None:
        cfg["min_allocation_size"] = args.min_allocation_size
    if args.drain_queues:
        cfg["drain_queues"] = args.drain_queues
    where = "--drain-queues" if args.drain_queues else "rabbit.drain_queues"
    if cfg["drain_queues"] is not None and isinstance(properties, str):
        raise ConfigError(f"{where}: cannot check them against the nodes' properties"
                          f" ({properties})")
    missing = check_drain_properties(cfg["drain_queues"],
                                     None if isinstance(properties, str) else properties, where)
    if missing and warn is not None:
        found = [q for q in cfg["drain_queues"] if q not in missing]
        warn(f"{where}: no node has the propert{'ies' if len(missing) > 1 else 'y'} "
             f"{', '.join(json.dumps(m) for m in missing)}; rabbit faults drain only nodes"
             f" with {', '.join(found)}")
    if args.kubeconfig:
        cfg["kubeconfig"] = args.kubeconfig
    cfg["fluxion"] = not args.disable_fluxion
    cfg["owner"] = owner
    return cfg


def start(handle: Any, args: argparse.Namespace,
          module_name: str | None = None) -> tuple[Service, FluxLink]:
    link = FluxLink(handle, module_name)
    owner = int(handle.attr_get("security.owner"))
    config = handle.rpc("config.get").get() or {}
    properties = node_properties(handle)

    def warn(message: str) -> None:
        link.log("warning", message)

    try:
        cfg = service_config(config.get("rabbit"), args, owner, properties, warn)
    except ConfigError:
        link.close()  # its reactor watcher must not outlive a failed start
        raise

    def factory(post: Any) -> KubeLayer:
        kube = KubeLayer(cfg.get("kubeconfig"), post, logging.getLogger("flux_dws.kube"), cfg)
        kube.connect()  # KubeError: no Kubernetes
        return kube

    try:
        service = Service(link, cfg, factory, namespace=args.namespace)
    except KubeError:
        link.close()  # its reactor watcher must not outlive a failed start
        raise

    def reload(conf: dict[str, Any]) -> str | None:
        try:
            new = service_config(conf.get("rabbit"), args, owner, properties, warn)
        except ConfigError as exc:
            link.log("err", f"config reload refused, keeping the old one: {exc}")
            return str(exc)
        service.reconfig(new, conf)
        link.log("info", "configuration reloaded: [rabbit] and resource.exclude applied to"
                         " the engine and rabbit health")
        return None

    link.config_reload = reload
    service.start()
    return service, link


def _logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="dws: %(levelname)s %(message)s")


def mod_main(handle: Any, *argv: str) -> None:
    """Entry point for ``flux module load dws.py``.

    Bad options or configuration, or no Kubernetes to talk to, make the
    load fail (EINVAL), as they make the stand-alone service exit 2 or 3:
    the one-line message goes to the broker's log (``flux dmesg``) and,
    through flux-core's Python module loader (which prints a ValueError's
    text), to the broker's standard error, with no traceback; ``flux
    module load`` itself only gets the errno."""
    block_sigterm()
    try:
        args = parse_args(list(argv))
        _logging(args.verbose)
        service, link = start(handle, args, module_name=_module_name(handle, argv))
    except (UsageError, ConfigError, KubeError) as exc:
        _log_err(handle, f"dws: {exc}")
        raise ValueError(str(exc)) from None
    if serve(handle, service, link) < 0:
        raise OSError("dws: reactor exited with an error")


def block_sigterm() -> None:
    """Block SIGTERM in this thread and so in every thread it starts: the
    Flux reactor reads its signals from a signalfd, which only gets a
    signal blocked in every thread (a thread with it unblocked would take
    the default action, death).  Called before any thread is started."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def serve(handle: Any, service: Service, link: FluxLink) -> int:
    """Run the reactor until a shutdown request or SIGTERM stops it, then
    stop the service's threads (STOP_SECONDS at most) and close the link.
    The reactor's return code."""
    def on_term(h: Any, watcher: Any, signum: int, arg: Any) -> None:
        link.log("info", "SIGTERM: stopping")
        h.reactor_stop()

    term = handle.signal_watcher_create(signal.SIGTERM, on_term)
    term.start()
    rc = -1
    try:
        rc = int(handle.reactor_run())
    finally:
        term.stop()
        t0 = time.monotonic()
        service.stop(STOP_SECONDS)
        link.close()
        link.log("info", f"stopped in {time.monotonic() - t0:.2f} s")
    return rc


def _log_err(handle: Any, message: str) -> None:
    try:
        import syslog

        handle.log(syslog.LOG_ERR, message)
    except (OSError, AttributeError):  # pragma: no cover - no log: stderr still says it
        pass


def _module_name(handle: Any, argv: tuple[str, ...]) -> str:
    """The name the broker loaded this module under (``dws`` for dws.py)."""
    from flux.brokermod import BrokerModule  # flux-core >= 0.84, as module loading is

    return str(BrokerModule(handle, *argv).name)


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``flux python dws.py``."""
    import flux

    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"dws: {exc}\n")
        return EXIT_USAGE
    _logging(args.verbose)
    block_sigterm()
    os.environ.pop("FLUX_KVS_NAMESPACE", None)  # job data lives in the primary namespace
    handle = flux.Flux()
    try:
        service, link = start(handle, args)
    except ConfigError as exc:
        sys.stderr.write(f"dws: {exc}\n")
        return EXIT_USAGE
    except KubeError as exc:
        sys.stderr.write(f"dws: {exc}\n")
        return EXIT_NO_KUBERNETES
    jobid = os.environ.get("FLUX_JOB_ID")
    if jobid:  # running as a Flux job: tell whoever waits that we serve
        import flux.job

        handle.rpc("job-manager.raise", {"id": int(flux.job.JobID(jobid)), "severity": 7,
                                         "type": "dws-watchers",
                                         "note": "dws watchers setup"}).get()
    serve(handle, service, link)
    return 0


if __name__ == "__main__":
    sys.exit(main())
