"""flux-dws CLI plugin: --coral2-chassis=N and --coral2-rabbit-cores=N.

Adds to flux run, submit, batch and alloc:

  --coral2-chassis=N       spread the job's nodes (-N) evenly over N
                           chassis, i.e. N Rabbits; -N must be a multiple of N.
  --coral2-rabbit-cores=N  (experimental) with --coral2-chassis, also
                           allocate N cores of each chassis' Rabbit and
                           allow the job on Rabbit nodes.

The root Flux instance must schedule on a Fluxion graph that has chassis
(R with a ``scheduling`` key, see flux-dws2jgf(1)).  The jobspec rewrite
itself is flux_dws.jobspec_chassis; this file only connects it to flux-core.
Installed into flux-core's CLI plugin directory by ``meson install``, or
found through FLUX_CLI_PLUGINPATH (see doc/guide/admin-plugins.rst).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from flux.cli.plugin import CLIPlugin

# meson writes flux_dws' install directory here when it installs this file
# into flux-core's plugin directory; in the package (flux_dws/flux_plugins/cli)
# flux_dws is found three levels up.
_PYTHONDIR = "@PYTHONDIR@"


def _import_chassis() -> Any:
    try:
        from flux_dws import jobspec_chassis
    except ImportError:
        here = Path(__file__).resolve()
        for cand in (_PYTHONDIR, str(here.parents[3]) if len(here.parents) > 3 else ""):
            if cand and not cand.startswith("@") and (Path(cand) / "flux_dws").is_dir():
                if cand not in sys.path:
                    sys.path.append(cand)
                break
        try:
            from flux_dws import jobspec_chassis
        except ImportError as exc:
            return exc
    return jobspec_chassis


class ChassisPlugin(CLIPlugin):  # type: ignore[misc]
    """Rabbit chassis placement (flux-dws).

    --coral2-chassis=N spreads the -N nodes of the job evenly over N chassis
    (each chassis is the set of compute nodes that share one Rabbit), so the
    job's rabbit storage is spread over N Rabbits.  The jobspec's node request
    becomes chassis(count=N){node(count=NODES/N)}.  NODES must be a multiple
    of N, and the root instance must schedule on a Fluxion graph built by
    flux-dws2jgf(1).

    --coral2-rabbit-cores=C (experimental, needs --coral2-chassis) also asks
    for C exclusive cores on each chassis' Rabbit node (storage_node) and
    sets attributes.system.allow_rabbits.
    """

    def __init__(self, prog: str, prefix: str = "coral2") -> None:
        super().__init__(prog, prefix=prefix)
        if self.prog not in ("run", "submit", "batch", "alloc"):
            return
        self.add_option("--chassis", type=int, metavar="N",
                        help="spread the job's nodes evenly over N chassis (N rabbits)")
        self.add_option("--rabbit-cores", type=int, metavar="N",
                        help="(experimental) allocate N cores of each chassis' rabbit")

    @staticmethod
    def _values(args: Any) -> tuple[Any, Any]:
        return getattr(args, "chassis", None), getattr(args, "rabbit_cores", None)

    def preinit(self, args: Any) -> None:
        chassis, cores = self._values(args)
        if chassis is None and cores is None:
            return
        mod = _import_chassis()
        if isinstance(mod, ImportError):
            raise ValueError(f"--coral2-chassis: cannot import flux_dws: {mod}")
        mod.check_options(chassis, cores, getattr(args, "nodes", None))

    def modify_jobspec(self, args: Any, jobspec: Any) -> None:
        chassis, cores = self._values(args)
        if chassis is None:
            return
        mod = _import_chassis()
        if isinstance(mod, ImportError):
            raise ValueError(f"--coral2-chassis: cannot import flux_dws: {mod}")
        import flux
        import flux.kvs

        from flux_dws.fluxutil import root_handle

        try:
            root = root_handle(flux.Flux())
            try:
                R = flux.kvs.get(root, "resource.R")
            except (OSError, FileNotFoundError):
                R = None
            config = root.rpc("config.get").get()
        except OSError as exc:
            raise ValueError(
                f"--coral2-chassis: cannot read the root instance's resources: {exc.strerror}"
            ) from None
        if not mod.has_scheduling(R, config):
            raise ValueError(
                "--coral2-chassis: the root instance has no Fluxion resource graph"
                " (configure resource.scheduling, or an R with a scheduling key;"
                " see flux-dws2jgf(1))"
            )
        new = mod.rewrite_jobspec(jobspec.jobspec, chassis, cores)
        jobspec.jobspec["resources"] = new["resources"]
        if cores is not None:
            jobspec.setattr("system.allow_rabbits", True)
