"""A real Kubernetes control plane for the real-stack tests: etcd and
kube-apiserver, built from Go modules by ``t/k8s/build.sh``.

    with ControlPlane(workdir) as cp:          # etcd + kube-apiserver, TLS, RBAC on
        cp.install_crds()                      # the emulator's kinds, as CRDs
        cp.apply_rbac()                        # the WLM roles, bound to user flux
        KubeLayer(cp.flux_kubeconfig, ...)     # the service, as a site runs it

Both servers listen on 127.0.0.1, on free ports.  etcd speaks plain HTTP
on loopback (only the API server talks to it); the API server serves TLS
with a certificate made here (flux_dws.apiserver.tls), authenticates with
a static token file (``admin``: system:masters; ``flux``: no group, only
what RBAC grants it; ``kubelet``: system:nodes, for the kubelets of
flux_dws.realstack.nodes) and authorizes with RBAC alone.  Everything either
writes (data, certificates, kubeconfigs, logs) stays in ``workdir``; the
logs are there to read when a start fails (the error quotes their tail).

A site's control plane (issue 77): ``apiservers=2`` starts a second
kube-apiserver on the same etcd (named ``kube-apiserver-2``; the first
keeps its name), ``balancer=True`` puts Debian's haproxy in front of them
(TCP, the TLS passed through; a server is taken out when its /readyz, asked
over TLS with a token of its own, fails twice, and the connections it held
are cut so the clients' watches reconnect to the other), and the
kubeconfigs and ``request`` go through the balancer.  ``audit=True`` makes
each API server write its audit log (``audit-<name>.log``: a line per
request, at the Metadata level); ``audit_events`` reads them all back.
``kill(name)`` stops a server for good (SIGKILL), ``start_again(name)``
starts it as it was; ``restart`` works for each, the balancer too.

``binaries()`` finds the built servers: ``FLUX_DWS_K8S_BIN`` (a directory
holding ``kube-apiserver`` and ``etcd``), else the build cache
``${FLUX_DWS_K8S_CACHE:-~/.cache/flux-dws/k8s}/<hash>/bin`` that build.sh
fills, where <hash> is that of t/k8s/go.mod and go.sum (so a new version
set is a new directory, and a stale build is never used).
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from flux_dws.apiserver import api_resources, tls
from flux_dws.apiserver.kubeconfig import kubeconfig, write

__all__ = ["APISERVER", "BALANCER", "FLUX_USER", "Binaries", "ControlPlane", "ControlPlaneError",
           "ControlPlaneUnavailable", "balancer_binary", "binaries", "build_hash", "free_port",
           "hold_lock", "k8s_dir", "log_tail", "rbac_files", "stop_process"]

FLUX_USER = "flux"
APISERVER = "kube-apiserver"   # the first API server's name; the n-th is APISERVER-n
BALANCER = "haproxy"
#: the balancer's health check of each API server: its /readyz every
#: CHECK_INTERVAL, out after two failures, back after one success
CHECK_INTERVAL = "1s"
#: the audit policy: every request at the Metadata level (who, what, the
#: answer's code; no bodies), once it is answered
AUDIT_POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                "omitStages": ["RequestReceived"], "rules": [{"level": "Metadata"}]}
# etcd, then the API server's /readyz (about 5-10 s here, quiet): a bound
# against a hang, wide enough for a machine a busy CI run loads
START_TIMEOUT = 600.0
STOP_TIMEOUT = 20.0


class ControlPlaneUnavailable(Exception):
    """The servers are not built (or t/k8s is not there): the reason why."""


class ControlPlaneError(Exception):
    """A server did not start, or did not answer as it should."""


#: the Services' addresses; the first is the API server's own Service,
#: ``kubernetes`` in ``default``, which a Pod's KUBERNETES_SERVICE_HOST names
SERVICE_CIDR = "10.96.0.0/16"
KUBERNETES_SERVICE_IP = "10.96.0.1"
KUBERNETES_SERVICE_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                            "kubernetes.default.svc.cluster.local")


def balancer_binary() -> Path:
    """Debian's haproxy, or ControlPlaneUnavailable saying it is not installed."""
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if not found:
        raise ControlPlaneUnavailable("no haproxy, the balancer of two API servers "
                                      "(Debian's haproxy: scripts/setup.sh installs it)")
    return Path(found)


@dataclass(frozen=True)
class Binaries:
    kube_apiserver: Path
    etcd: Path


def k8s_dir() -> Path:
    """t/k8s of the source tree this module comes from."""
    return Path(__file__).resolve().parents[4] / "t" / "k8s"


def build_hash(directory: Path | None = None) -> str:
    """What build.sh names the build directory after: go.mod and go.sum."""
    d = directory or k8s_dir()
    h = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        h.update((d / name).read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    env = os.environ.get("FLUX_DWS_K8S_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "flux-dws" / "k8s"


def binaries() -> Binaries:
    """The built servers, or ControlPlaneUnavailable saying why there are none."""
    env = os.environ.get("FLUX_DWS_K8S_BIN")
    if env:
        where = Path(env)
        how = f"FLUX_DWS_K8S_BIN={env}"
    else:
        try:
            where = cache_dir() / build_hash() / "bin"
        except OSError as exc:
            raise ControlPlaneUnavailable(f"no t/k8s to build the control plane from: "
                                          f"{exc}") from None
        how = "t/k8s/build.sh"
    b = Binaries(where / "kube-apiserver", where / "etcd")
    for p in (b.kube_apiserver, b.etcd):
        if not os.access(p, os.X_OK):
            nogo = "" if env or shutil.which("go") else ", which needs Go: no go on PATH"
            raise ControlPlaneUnavailable(f"{p.name} is not built (no {p}; run {how}{nogo})")
    return b


def hold_lock(path: Path, timeout: float, held_by: str) -> IO[bytes]:
    """``path`` locked (flock, exclusive) for the caller, who closes the
    file to give it back; ControlPlaneError naming ``held_by`` when another
    process held it for more than ``timeout`` seconds."""
    lock = path.open("ab")
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if time.monotonic() > deadline:
                lock.close()
                raise ControlPlaneError(f"{held_by} ({path}) for more than {timeout:.0f} s") \
                    from None
            time.sleep(0.5)


def rbac_files() -> list[Path]:
    """The WLM roles (t/k8s/rbac), bound to user flux."""
    return sorted((k8s_dir() / "rbac").glob("*.yaml"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no {path})"
    return "\n".join(text[-lines:])


def _pem_key(key: Any) -> bytes:
    out: bytes = key.private_bytes(serialization.Encoding.PEM,
                                   serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption())
    return out


def _service_account_key() -> tuple[bytes, bytes]:
    """The key pair the API server signs service account tokens with
    (it refuses to start without one)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    return _pem_key(key), pub


class ControlPlane:
    """etcd and kube-apiserver in ``workdir`` (see the module's docstring)."""

    def __init__(self, workdir: str | os.PathLike[str],
                 bins: Binaries | None = None, *, apiservers: int = 1,
                 balancer: bool = False, audit: bool = False) -> None:
        if apiservers < 1:
            raise ValueError(f"apiservers must be 1 or more, not {apiservers}")
        if apiservers > 1 and not balancer:
            raise ValueError("two API servers need the balancer in front of them")
        self.workdir = Path(workdir)
        self.bins = bins
        self.apiservers = [APISERVER] + [f"{APISERVER}-{i}" for i in range(2, apiservers + 1)]
        self.balancer = balancer
        self.audit = audit
        self.url = ""     # what clients talk to: the balancer, or the one API server
        self.server_urls: dict[str, str] = {}
        self._balancer_port = 0   # chosen once: a restarted haproxy keeps it
        self.health_token = secrets.token_hex(16)
        self.admin_kubeconfig = self.workdir / "admin.kubeconfig"
        self.flux_kubeconfig = self.workdir / "flux.kubeconfig"
        self.admin_token = secrets.token_hex(16)
        self.flux_token = secrets.token_hex(16)
        # the kubelets' (flux_dws.realstack.nodes): group system:nodes
        self.node_token = secrets.token_hex(16)
        self.ca_pem = b""
        self.etcd_url = ""
        self.started_in = 0.0  # seconds from start() to a ready API server
        self._procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self._argv: dict[str, list[str]] = {}
        self._discovery: dict[str, list[dict[str, Any]]] = {}

    # --- lifecycle ----------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> ControlPlane:
        """Start etcd, then the API server; return when /readyz says ok.
        ControlPlaneError (with the log's tail) if either fails or the
        API server is not ready within START_TIMEOUT."""
        bins = self.bins or binaries()
        t0 = time.monotonic()
        atexit.register(self.stop)  # a test run that ends early leaves no server
        self.workdir.mkdir(parents=True, exist_ok=True)
        pki = self.workdir / "pki"
        pki.mkdir(exist_ok=True)
        # the host's loopback, and the address and names a Pod knows it by
        # (flux_dws.realstack.podnet relays KUBERNETES_SERVICE to it)
        certs = tls.generate(["127.0.0.1", KUBERNETES_SERVICE_IP, *KUBERNETES_SERVICE_NAMES])
        self.ca_pem = certs.ca_pem
        (pki / "ca.pem").write_bytes(certs.ca_pem)
        (pki / "apiserver.pem").write_bytes(certs.cert_pem)
        (pki / "apiserver-key.pem").write_bytes(certs.key_pem)
        sa_key, sa_pub = _service_account_key()
        (pki / "sa-key.pem").write_bytes(sa_key)
        (pki / "sa.pem").write_bytes(sa_pub)
        for f in pki.iterdir():
            f.chmod(0o600)
        tokens = self.workdir / "tokens.csv"
        # the balancer's health check is a user of its own: /readyz is
        # open to every authenticated user (system:public-info-viewer)
        tokens.write_text(f'{self.admin_token},admin,admin,"system:masters"\n'
                          f"{self.flux_token},{FLUX_USER},{FLUX_USER}\n"
                          f"{self.health_token},balancer,balancer\n"
                          f'{self.node_token},kubelet,kubelet,"system:nodes"\n')
        tokens.chmod(0o600)

        client_port, peer_port = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        self._spawn("etcd", [
            str(bins.etcd), "--name=default", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=default={peer}", "--log-level=warn",
            # test data: losing it on a crash is fine, waiting for fsync is not
            "--unsafe-no-fsync"])
        self._wait("etcd", self._etcd_healthy, t0)

        if self.audit:
            (self.workdir / "audit-policy.yaml").write_text(yaml.safe_dump(AUDIT_POLICY))
        for name in self.apiservers:
            port = free_port()
            self.server_urls[name] = f"https://127.0.0.1:{port}"
            self._spawn(name, self._apiserver_argv(bins, name, port, pki, tokens))
        if self.balancer:
            self._spawn(BALANCER, self._balancer_argv())
            self.url = f"https://127.0.0.1:{self._balancer_port}"
        else:
            self.url = self.server_urls[APISERVER]
        self._write_kubeconfigs()
        for name in self.apiservers:
            self._wait(name, self._answers(name), t0)
        if self.balancer:
            self._wait(BALANCER, self._ready, t0)
        self._default_service_account()
        self.started_in = time.monotonic() - t0
        return self

    def _apiserver_argv(self, bins: Binaries, name: str, port: int, pki: Path,
                        tokens: Path) -> list[str]:
        argv = [
            str(bins.kube_apiserver), f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={port}", f"--cert-dir={pki}",
            f"--tls-cert-file={pki / 'apiserver.pem'}",
            f"--tls-private-key-file={pki / 'apiserver-key.pem'}",
            f"--client-ca-file={pki / 'ca.pem'}",
            f"--token-auth-file={tokens}", "--anonymous-auth=false",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={pki / 'sa.pem'}",
            f"--service-account-signing-key-file={pki / 'sa-key.pem'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--allow-privileged=true",
            # a kubelet (flux_dws.realstack.nodes) by the address it
            # reports, never by its host name: no name is looked up
            "--kubelet-preferred-address-types=InternalIP",
            "--profiling=false", "--v=1"]
        if self.audit:
            argv += [f"--audit-policy-file={self.workdir / 'audit-policy.yaml'}",
                     f"--audit-log-path={self.audit_log(name)}", "--audit-log-format=json",
                     "--audit-log-maxsize=0"]
        return argv

    def _balancer_argv(self) -> list[str]:
        """haproxy in the foreground (-db) with its configuration in workdir."""
        self._balancer_port = self._balancer_port or free_port()
        ca = self.workdir / "pki" / "ca.pem"
        servers = "\n".join(
            f"    server {name} {url.removeprefix('https://')}"
            for name, url in self.server_urls.items())
        cfg = self.workdir / "haproxy.cfg"
        check = (f"check check-ssl ca-file {ca} verify required inter {CHECK_INTERVAL} "
                 "fall 2 rise 1 on-marked-down shutdown-sessions")
        cfg.write_text(f"""# in front of the API servers (flux_dws.realstack.controlplane)
global
    log stdout format raw local0 info
    maxconn 4096
defaults
    mode tcp
    log global
    option tcplog
    timeout connect 2s
    # a watch stream is quiet for up to its timeoutSeconds (60 s)
    timeout client 10m
    timeout server 10m
    retries 3
    option redispatch
frontend apiserver
    bind 127.0.0.1:{self._balancer_port}
    default_backend apiservers
backend apiservers
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz hdr Authorization "Bearer {self.health_token}"
    http-check expect status 200
    default-server {check}
{servers}
""")
        cfg.chmod(0o600)
        return [str(balancer_binary()), "-db", "-f", str(cfg)]

    def _default_service_account(self, namespace: str = "default") -> None:
        """The ServiceAccount every namespace has in a cluster (made there by
        kube-controller-manager, which does not run here): without it the
        API server's ServiceAccount admission refuses every Pod, as a user
        container's launcher (\"serviceaccount \"default\" not found\")."""
        status, body = self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                                    {"apiVersion": "v1", "kind": "ServiceAccount",
                                     "metadata": {"name": "default"}})
        if status not in (201, 409):
            raise ControlPlaneError(f"ServiceAccount {namespace}/default: {status} "
                                    f"{_message(body)}")

    def stop(self) -> None:
        """SIGTERM the API server, then etcd; SIGKILL what is still there
        after STOP_TIMEOUT.  Nothing is left running; the workdir stays."""
        atexit.unregister(self.stop)
        while self._procs:
            _, p = self._procs.pop()
            stop_process(p)

    # --- faults: a server stopped, held, or its history compacted --------------

    def restart(self, name: str) -> None:
        """Stop ``etcd``, an API server or the balancer (SIGTERM, then
        SIGKILL after STOP_TIMEOUT) and start it again as it was (same
        port, same data): returns once it answers again."""
        i = next(i for i, (n, _) in enumerate(self._procs) if n == name)
        _, p = self._procs.pop(i)
        stop_process(p)
        self.start_again(name)

    def kill(self, name: str) -> None:
        """Kill ``name`` for good (SIGKILL: no goodbye to its clients)
        until ``start_again``."""
        i = next(i for i, (n, _) in enumerate(self._procs) if n == name)
        _, p = self._procs.pop(i)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

    def start_again(self, name: str) -> None:
        """Start a stopped ``name`` as it was; returns once it answers."""
        if any(n == name for n, _ in self._procs):
            raise ControlPlaneError(f"{name} is running")
        t0 = time.monotonic()
        self._spawn(name, self._argv[name])
        self._wait(name, self._answers(name), t0)

    def running(self, name: str) -> bool:
        return any(n == name and p.poll() is None for n, p in self._procs)

    def _answers(self, name: str) -> Callable[[], bool]:
        if name == "etcd":
            return self._etcd_healthy
        if name in self.server_urls:
            return lambda: self._ready_at(self.server_urls[name])
        return self._ready

    def audit_log(self, name: str) -> Path:
        return self.workdir / f"audit-{name}.log"

    def audit_events(self, user: str | None = None) -> list[dict[str, Any]]:
        """Every request the API servers answered (audit=True), from their
        audit logs, oldest first; only ``user``'s when given.  A request
        is one event (a long one, such as a watch, its ResponseComplete)."""
        if not self.audit:
            raise ControlPlaneError("the control plane was started without audit=True")
        events: dict[str, dict[str, Any]] = {}
        for name in self.apiservers:
            try:
                lines = self.audit_log(name).read_text().splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if user is not None and ev.get("user", {}).get("username") != user:
                    continue
                ev["apiserver"] = name
                # ResponseComplete replaces a watch's ResponseStarted
                if ev["auditID"] not in events or ev.get("stage") == "ResponseComplete":
                    events[ev["auditID"]] = ev
        return sorted(events.values(), key=lambda e: e.get("requestReceivedTimestamp", ""))

    def pause(self, name: str) -> None:
        """Hold ``etcd`` or ``kube-apiserver`` (SIGSTOP): it accepts
        connections and answers nothing until resume."""
        os.killpg(self._proc(name).pid, signal.SIGSTOP)

    def resume(self, name: str) -> None:
        os.killpg(self._proc(name).pid, signal.SIGCONT)

    def compact(self) -> int:
        """Compact etcd's history up to its current revision (what etcd's
        periodic compaction does), so that a watch started again from an
        older resourceVersion is answered 410 Gone; the revision."""
        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            req = urllib.request.Request(self.etcd_url + path, data=json.dumps(body).encode(),
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                out: dict[str, Any] = json.loads(resp.read())
                return out
        # the key is base64 of "\0": a range that holds nothing, to read the revision
        rev = int(post("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        post("/v3/kv/compaction", {"revision": rev, "physical": True})
        return rev

    def _proc(self, name: str) -> subprocess.Popen[bytes]:
        return next(p for n, p in self._procs if n == name)

    def pids(self) -> list[int]:
        return [p.pid for _, p in self._procs]

    def pid(self, name: str) -> int:
        return self._proc(name).pid

    def log(self, name: str) -> Path:
        """The log of ``etcd``, an API server or the balancer."""
        return self.workdir / f"{name}.log"

    # --- clients ------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, user: str = "admin",
                content_type: str = "application/json", timeout: float = 30.0,
                token: str | None = None, url: str | None = None) -> tuple[int, Any]:
        """One API call as ``admin`` or ``flux`` (or with ``token``), to
        ``url`` (default: what clients talk to): (status, decoded body)."""
        if token is None:
            if user not in ("admin", FLUX_USER):
                raise ValueError(f"no token for user {user!r}")
            token = self.admin_token if user == "admin" else self.flux_token
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request((url or self.url) + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": content_type,
                                              "Accept": "application/json"})
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=timeout) as resp:
                raw = resp.read()
                status = int(resp.status)
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), int(exc.code)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def apply(self, obj: dict[str, Any], *, user: str = "admin") -> dict[str, Any]:
        """Server-side apply of one object (any kind the server serves)."""
        path = self._path(obj) + "?fieldManager=flux-dws-test&force=true"
        status, body = self.request("PATCH", path, obj, user=user,
                                    content_type="application/apply-patch+yaml")
        if status not in (200, 201):
            raise ControlPlaneError(f"apply {obj.get('kind')} "
                                    f"{obj.get('metadata', {}).get('name')}: {status} "
                                    f"{_message(body)}")
        out: dict[str, Any] = body
        return out

    def apply_files(self, paths: Iterable[Path]) -> list[dict[str, Any]]:
        out = []
        for p in paths:
            for doc in yaml.safe_load_all(Path(p).read_text()):
                if doc:
                    out.append(self.apply(doc))
        return out

    def install_crds(self, timeout: float = 60.0) -> list[str]:
        """A CRD for each kind the emulator serves that a real API server
        does not (flux_dws.apiserver.api_resources; any field kept,
        the status subresource where the kind has one); returns their
        names once the API server serves every one."""
        crds = []
        for r in api_resources.custom_resources():
            crd = api_resources.crd_object(r)
            crd.pop("status", None)
            crds.append(crd)
        return self.install_crd_objects(crds, timeout)

    def install_crd_objects(self, crds: Iterable[dict[str, Any]],
                            timeout: float = 60.0) -> list[str]:
        """Apply ``crds`` (CustomResourceDefinition objects) and return
        their names once each is Established, in discovery, and answers
        its lists in every version it serves."""
        crds = list(crds)
        for crd in crds:
            self.apply(crd)
        names = [crd["metadata"]["name"] for crd in crds]
        deadline = time.monotonic() + timeout
        for name in names:
            while True:
                status, body = self.request(
                    "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                # a CRD just made may say "conditions": null (mpi-operator's)
                conds = {c["type"]: c["status"]
                         for c in ((body or {}).get("status") or {}).get("conditions") or []} \
                    if status == 200 else {}
                if conds.get("Established") == "True":
                    break
                if time.monotonic() > deadline:
                    raise ControlPlaneError(f"CRD {name} not Established after {timeout} s")
                time.sleep(0.1)
        served: dict[tuple[str, str], set[str]] = {}
        for crd in crds:
            spec = crd["spec"]
            for v in spec["versions"]:
                if v.get("served", True):
                    served.setdefault((spec["group"], v["name"]), set()).add(
                        spec["names"]["plural"])
        # the API server serves a new CRD once its discovery has it ...
        for (group, version), plurals in served.items():
            while True:
                status, body = self.request("GET", f"/apis/{group}/{version}")
                have = {x["name"] for x in (body or {}).get("resources", [])} \
                    if status == 200 else set()
                if plurals <= have:
                    break
                if time.monotonic() > deadline:
                    raise ControlPlaneError(f"{group}/{version} does not serve "
                                            f"{sorted(plurals - have)}")
                time.sleep(0.1)
        # ... and answers its lists once its watch cache is filled (429
        # "storage is (re)initializing" until then), for every version
        for (group, version), plurals in served.items():
            for plural in sorted(plurals):
                path = f"/apis/{group}/{version}/{plural}?limit=1"
                while True:
                    status, body = self.request("GET", path)
                    if status == 200:
                        break
                    if status != 429 or time.monotonic() > deadline:
                        raise ControlPlaneError(f"GET {path}: {status} {_message(body)}")
                    time.sleep(0.1)
        return names

    def apply_rbac(self, *extra: Path) -> None:
        """The WLM roles (t/k8s/rbac/*.yaml) and the ``extra`` files
        (e.g. etc/k8s/flux-dws-extra-role.yaml), as admin."""
        files = rbac_files()
        if not files:
            raise ControlPlaneError(f"no RBAC files in {k8s_dir() / 'rbac'}")
        self.apply_files([*files, *extra])

    def seed(self, objects: Iterable[dict[str, Any]]) -> int:
        """Create ``objects`` as admin (e.g. flux_dws.dwsim.systems.seed_objects),
        their status too where the kind has a status subresource (a real
        API server ignores the status of a create there).  Returns how many."""
        n = 0
        for obj in objects:
            status = obj.get("status")
            out = self.apply({k: v for k, v in obj.items() if k != "status"})
            if status is not None and self._has_status(obj):
                body = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                        "metadata": {"name": obj["metadata"]["name"],
                                     **({"namespace": out["metadata"]["namespace"]}
                                        if "namespace" in out["metadata"] else {})},
                        "status": status}
                code, answer = self.request(
                    "PATCH", self._path(obj) + "/status?fieldManager=flux-dws-test&force=true",
                    body, content_type="application/apply-patch+yaml")
                if code != 200:
                    raise ControlPlaneError(f"status of {obj['kind']} "
                                            f"{obj['metadata']['name']}: {code} "
                                            f"{_message(answer)}")
            n += 1
        return n

    def delete(self, obj: dict[str, Any]) -> None:
        status, body = self.request("DELETE", self._path(obj))
        if status not in (200, 202, 404):
            raise ControlPlaneError(f"delete {obj['kind']}: {status} {_message(body)}")

    # --- the inside ---------------------------------------------------------

    def _resources(self, api_version: str) -> list[dict[str, Any]]:
        """What the server's discovery says of ``api_version`` (cached)."""
        if api_version not in self._discovery:
            prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            status, body = self.request("GET", prefix)
            if status != 200:
                raise ControlPlaneError(f"{api_version} is not served: {status} "
                                        f"{_message(body)}")
            self._discovery[api_version] = body.get("resources", [])
        return self._discovery[api_version]

    def _has_status(self, obj: dict[str, Any]) -> bool:
        kind = obj["kind"]
        plural = next(r["name"] for r in self._resources(obj["apiVersion"])
                      if r.get("kind") == kind and "/" not in r["name"])
        return any(r["name"] == f"{plural}/status" for r in self._resources(obj["apiVersion"]))

    def _path(self, obj: dict[str, Any]) -> str:
        api_version: str = obj["apiVersion"]
        kind: str = obj["kind"]
        meta = obj.get("metadata", {})
        prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        for r in self._resources(api_version):
            if r.get("kind") == kind and "/" not in r["name"]:
                ns = f"/namespaces/{meta.get('namespace', 'default')}" if r["namespaced"] \
                    else ""
                name = f"/{meta['name']}" if "name" in meta else ""
                return f"{prefix}{ns}/{r['name']}{name}"
        raise ControlPlaneError(f"{api_version} serves no kind {kind}")

    def _spawn(self, name: str, argv: list[str]) -> None:
        self._argv[name] = argv
        logf = self.log(name).open("ab")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                 stderr=subprocess.STDOUT, cwd=self.workdir,
                                 start_new_session=True)
        finally:
            logf.close()
        self._procs.append((name, p))

    def _wait(self, name: str, ready: Callable[[], bool], t0: float) -> None:
        proc = self._proc(name)
        while True:
            if proc.poll() is not None:
                raise ControlPlaneError(f"{name} exited with {proc.returncode}; "
                                        f"{self.log(name)} ends:\n{log_tail(self.log(name))}")
            if ready():
                return
            if time.monotonic() - t0 > START_TIMEOUT:
                raise ControlPlaneError(f"{name} not ready after {START_TIMEOUT:.0f} s; "
                                        f"{self.log(name)} ends:\n{log_tail(self.log(name))}")
            time.sleep(0.1)

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as resp:
                return bool(json.loads(resp.read()).get("health") == "true")
        except (OSError, ValueError):
            return False

    def _ready(self) -> bool:
        return self._ready_at(self.url)

    def _ready_at(self, url: str) -> bool:
        try:
            status, _ = self.request("GET", "/readyz", timeout=5, url=url)
        except OSError:
            return False
        return status == 200

    def _write_kubeconfigs(self) -> None:
        write(self.admin_kubeconfig, kubeconfig(self.url, self.ca_pem, self.admin_token,
                                                "flux-dws-realk8s-admin"))
        write(self.flux_kubeconfig, kubeconfig(self.url, self.ca_pem, self.flux_token,
                                               "flux-dws-realk8s-flux"))


def stop_process(p: subprocess.Popen[bytes]) -> None:
    """SIGTERM a server's (or a manager's) process group (SIGCONT first: a
    held one too), SIGKILL after STOP_TIMEOUT; nothing it forked is left."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGCONT)
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _message(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("message", body))
    return str(body)
