"""``flux rabbitmapping``: write the rabbitmapping JSON from a Kubernetes API.

Reads the DWS SystemConfiguration ``default/default``, every Storage and
(unless --ignore-external-allocations) every Servers object, and prints the
mapping described in flux_dws.rabbitmapping_build: each rabbit's capacity is its
drives' total less external allocations.  A rabbit whose figure is below the
free space its Storage reports gets a warning on standard error.  Also installed as the command
``flux-rabbitmapping`` (``flux rabbitmapping`` where Flux is installed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from flux_dws import inputfile, rabbitmapping_build
from flux_dws.inputfile import InputError
from flux_dws.k8s import crd


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", "--kubeconfig", metavar="FILE",
                   help="kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)")
    p.add_argument("-i", "--indent", type=int, metavar="N", default=None,
                   help="indent the JSON output by N spaces (default: compact)")
    p.add_argument("--nosort", dest="sort_keys", action="store_false",
                   help="keep the API's order instead of sorting keys")
    p.add_argument("--ignore-external-allocations", action="store_true",
                   help="do not subtract storage held by Servers not created by Flux")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("rabbitmapping", help="write the rabbit mapping from Kubernetes")
    add_arguments(p)
    p.set_defaults(func=run)


def fetch(api: Any, ignore_external: bool,
          warnings: list[str] | None = None) -> dict[str, Any]:
    """Read the DWS objects through ``api`` (a CustomObjectsApi) and build the
    mapping (its warnings appended to ``warnings``)."""
    version = crd.probe_dws_version(api)
    g = crd.DWS_GROUP
    sysconfig = api.get_namespaced_custom_object(
        g, version, "default", "systemconfigurations", "default"
    )
    storages = crd.items(api.list_cluster_custom_object(g, version, "storages"))
    servers: list[dict[str, Any]] = []
    if not ignore_external:
        servers = crd.items(api.list_cluster_custom_object(g, version, "servers"))
    return rabbitmapping_build.build_mapping(sysconfig, storages, servers, ignore_external,
                                       warnings)


def check_kubeconfig(path: str | None) -> None:
    """Read each kubeconfig the client would (``path``, else every file of
    $KUBECONFIG, else ~/.kube/config) and raise InputError naming the first
    that is missing, unreadable, not YAML or not a YAML mapping; the
    Kubernetes client's own errors on such files are tracebacks."""
    if path is not None:
        paths = [path]
    else:
        env = os.environ.get("KUBECONFIG")
        paths = ([p for p in env.split(os.pathsep) if p] if env
                 else [os.path.expanduser("~/.kube/config")])
    for p in paths:
        doc = inputfile.load_yaml(p)
        if not isinstance(doc, dict):
            raise InputError(f"{p}: not a kubeconfig (expected a YAML mapping)")


def run(args: argparse.Namespace) -> int:
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    try:
        check_kubeconfig(args.kubeconfig)
        api = client.CustomObjectsApi(
            config.new_client_from_config(args.kubeconfig)  # type: ignore[no-untyped-call]
        )
    except InputError as exc:
        print(f"flux-rabbitmapping: cannot load kubeconfig: {exc}", file=sys.stderr)
        return 1
    except (ConfigException, OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        what = inputfile.one_line(str(exc)) or type(exc).__name__
        print(f"flux-rabbitmapping: cannot load kubeconfig: {what}", file=sys.stderr)
        return 1
    warnings: list[str] = []
    try:
        mapping = fetch(api, args.ignore_external_allocations, warnings)
    except ApiException as exc:
        print(f"flux-rabbitmapping: Kubernetes API error {exc.status}: {exc.reason}",
              file=sys.stderr)
        return 1
    except (rabbitmapping_build.MappingError, crd.CRDVersionError) as exc:
        print(f"flux-rabbitmapping: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # urllib3 connection errors and the like
        print(f"flux-rabbitmapping: cannot reach the Kubernetes API: {exc}", file=sys.stderr)
        return 1
    for warning in warnings:
        print(f"flux-rabbitmapping: warning: {warning}", file=sys.stderr)
    print(json.dumps(mapping, indent=args.indent, sort_keys=args.sort_keys))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="flux-rabbitmapping", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
