"""The pod network of the real-stack nodes: pods of one node reach pods of
another, and find each other by the names a cluster's DNS gives them.

    net = PodNetwork(plane, ["kind-worker2", "kind-worker3"], run_id)
    net.start()                  # the bridges, then the DNS server
    net.cni_config(0, ipam_dir)  # what node 0's containerd gives its pods
    net.dns_address(0)           # node 0's kubelet's clusterDNS
    net.stop()

A node's pods are on a bridge of its own, made here before its kubelet
starts, with the address ``10.244.<i>.1/24`` and IPv4 forwarding on that
bridge alone (``net.ipv4.conf.<bridge>.forwarding``: a packet a pod sends
to another node's subnet comes in on its bridge and leaves on the other's;
the host's ``ip_forward`` is left as it is).  The CNI bridge plugin puts
the pods on it (``isGateway: false``: it then touches neither the bridge's
address nor the host's ``ip_forward``) with two routes through their
bridge's address, to the pods' ``10.244.0.0/16`` and to the Services'
``10.96.0.0/16``, and no default route: a pod reaches the pods of every
node and this host's addresses on those bridges, and nothing off the
machine.  The bridges go with the host guard's links.

The API server listens on the host's loopback.  A Pod reaches it as in a
cluster, at its Service's address (``kubernetes`` in ``default``,
10.96.0.1:443, which the kubelet gives every container as
KUBERNETES_SERVICE_HOST and _PORT, and which its certificate names): the
first bridge has that address too, and a relay (flux_dws.realstack.relay)
takes its port 443 to the API server.  A controller run in a Pod with a
ServiceAccount (nnf-dm's, issue 78) then finds the API server as it does
on a site; no kube-proxy is needed for this one Service.

MPI needs both: mpi-operator's launcher ssh's to its workers by name and
their daemons call back to it (issue 78).  The names are answered by
``ClusterDNS``, a DNS server (UDP) on each bridge's address, port 53, the
nodes' ``clusterDNS``.  It answers what a cluster's CoreDNS answers for a
Pod, looked up on the API server at each question:

    <hostname>.<subdomain>.<namespace>.svc.cluster.local
        a Pod with that ``spec.hostname`` and ``spec.subdomain`` (the
        workers of an MPIJob: ``<job>-worker-0.<job>.<ns>.svc``)
    <a-b-c-d>.<service>.<namespace>.svc.cluster.local
        a.b.c.d, a Pod's address as a name (nnf-dm's workers)

A name it does not know is NXDOMAIN, one it knows has no AAAA (NOERROR,
no answer): nothing is forwarded anywhere.  Unlike CoreDNS it does not
check that the subdomain's headless Service exists (mpi-operator makes it
with the workers).  ``dns_answer`` is the protocol alone, tested without a
socket.
"""

from __future__ import annotations

import ipaddress
import re
import select
import socket
import struct
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flux_dws.realstack.controlplane import KUBERNETES_SERVICE_IP, SERVICE_CIDR
from flux_dws.realstack.relay import Relay

__all__ = ["CLUSTER_DOMAIN", "POD_CIDR", "ClusterDNS", "PodNetwork", "dns_answer"]

POD_CIDR = "10.244.0.0/16"
KUBERNETES_SERVICE_PORT = 443
CLUSTER_DOMAIN = "cluster.local"
DNS_PORT = 53
TTL = 5
#: a DNS answer's codes (RFC 1035 4.1.1)
NOERROR, FORMERR, NXDOMAIN, NOTIMP = 0, 1, 3, 4
TYPE_A, TYPE_AAAA, CLASS_IN = 1, 28, 1
DASHED_IP = re.compile(r"^(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$")


class PodNetworkError(RuntimeError):
    """A bridge could not be made (the message says which and why)."""


# --- the protocol ----------------------------------------------------------

def _question(query: bytes) -> tuple[str, int, int, int] | None:
    """(name, type, class, end of the question) of a one-question query."""
    if len(query) < 12 or struct.unpack("!H", query[4:6])[0] != 1:
        return None
    labels: list[str] = []
    at = 12
    while at < len(query):
        n = query[at]
        if n == 0:
            break
        if n & 0xC0 or at + 1 + n > len(query):   # no compression in a question
            return None
        labels.append(query[at + 1:at + 1 + n].decode("ascii", errors="replace"))
        at += 1 + n
    else:
        return None
    at += 1
    if at + 4 > len(query):
        return None
    qtype, qclass = struct.unpack("!HH", query[at:at + 4])
    return ".".join(labels).lower(), qtype, qclass, at + 4


def dns_answer(query: bytes, resolve: Callable[[str], str | None]) -> bytes | None:
    """The answer to ``query`` (None for what is not a query at all):
    ``resolve(name)`` is the IPv4 address of ``name`` (no trailing dot,
    lower case) or None when the name does not exist."""
    if len(query) < 12:
        return None
    ident, flags = struct.unpack("!HH", query[:4])
    if flags & 0x8000:            # an answer, not a question
        return None
    rd = flags & 0x0100
    q = _question(query)
    opcode = (flags >> 11) & 0xF

    def reply(rcode: int, qd: bytes, answers: list[bytes]) -> bytes:
        head = struct.pack("!HHHHHH", ident, 0x8000 | 0x0400 | rd | (opcode << 11) | rcode,
                           1 if qd else 0, len(answers), 0, 0)
        return head + qd + b"".join(answers)

    if q is None:
        return reply(FORMERR, b"", [])
    name, qtype, qclass, end = q
    qd = query[12:end]
    if opcode != 0:
        return reply(NOTIMP, qd, [])
    address = resolve(name) if qclass == CLASS_IN else None
    if address is None:
        return reply(NXDOMAIN, qd, [])
    if qtype != TYPE_A:
        return reply(NOERROR, qd, [])
    rr = struct.pack("!HHHIH", 0xC00C, TYPE_A, CLASS_IN, TTL, 4) + socket.inet_aton(address)
    return reply(NOERROR, qd, [rr])


# --- the names -------------------------------------------------------------

def pod_name_parts(name: str, domain: str = CLUSTER_DOMAIN) -> tuple[str, str, str] | None:
    """(first label, second label, namespace) of
    ``<first>.<second>.<namespace>.svc.<domain>``, else None."""
    suffix = f".svc.{domain}"
    if not name.endswith(suffix):
        return None
    labels = name[:-len(suffix)].split(".")
    if len(labels) != 3 or not all(labels):
        return None
    return labels[0], labels[1], labels[2]


def resolve_pod(name: str, pods: Callable[[str], list[dict[str, Any]]]) -> str | None:
    """The address ``name`` has in a cluster (see the module's text);
    ``pods(namespace)`` lists a namespace's Pods."""
    parts = pod_name_parts(name)
    if parts is None:
        return None
    first, second, namespace = parts
    m = DASHED_IP.match(first)
    if m and all(int(o) < 256 for o in m.groups()):
        return ".".join(m.groups())
    for pod in pods(namespace):
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if (spec.get("hostname") == first and spec.get("subdomain") == second
                and status.get("podIP")):
            return str(status["podIP"])
    return None


class ClusterDNS:
    """The DNS server of the pod network (see the module's text): one
    thread answering on every address given."""

    def __init__(self, addresses: list[str], pods: Callable[[str], list[dict[str, Any]]],
                 port: int = DNS_PORT) -> None:
        self.addresses = list(addresses)
        self.port = port
        self.pods = pods
        self.questions = 0
        self._socks: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        for a in self.addresses:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((a, self.port))
            self._socks.append(s)
        self._thread = threading.Thread(target=self._serve, name="flux-dws-cluster-dns",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for s in self._socks:
            s.close()
        self._socks.clear()

    def resolve(self, name: str) -> str | None:
        try:
            return resolve_pod(name, self.pods)
        except Exception:   # the API server down: the name is not known now
            return None

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select(self._socks, [], [], 0.5)
            for s in ready:
                try:
                    query, peer = s.recvfrom(4096)
                except OSError:
                    continue
                self.questions += 1
                answer = dns_answer(query, self.resolve)
                if answer is not None:
                    try:
                        s.sendto(answer, peer)
                    except OSError:
                        pass


# --- the bridges -----------------------------------------------------------

def _ip(*argv: str) -> None:
    r = subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=30, check=False)
    if r.returncode:
        raise PodNetworkError(f"ip {' '.join(argv)}: {r.stderr.strip()}")


class PodNetwork:
    """The bridges of ``names`` (a node each, in order) and their DNS."""

    def __init__(self, names: list[str], run_id: str,
                 pods: Callable[[str], list[dict[str, Any]]],
                 api: tuple[str, int] | None = None) -> None:
        self.names = list(names)
        self.run_id = run_id
        self.api = api
        self.dns = ClusterDNS([self.dns_address(i) for i in range(len(names))], pods)
        self.api_relay: Relay | None = None
        self.made: list[str] = []

    def bridge(self, index: int) -> str:
        return f"fdws{self.run_id[:6]}{index}"[:15]

    def subnet(self, index: int) -> str:
        return f"10.244.{index}.0/24"

    def dns_address(self, index: int) -> str:
        """The bridge's own address: the pods' gateway to the other nodes
        and their DNS server."""
        return str(next(ipaddress.ip_network(self.subnet(index)).hosts()))

    def start(self) -> None:
        for i in range(len(self.names)):
            br = self.bridge(i)
            _ip("link", "add", "name", br, "type", "bridge")
            self.made.append(br)
            _ip("addr", "add", f"{self.dns_address(i)}/24", "dev", br)
            _ip("link", "set", br, "up")
            Path(f"/proc/sys/net/ipv4/conf/{br}/forwarding").write_text("1\n")
        self.dns.start()
        if self.api is not None:
            _ip("addr", "add", f"{KUBERNETES_SERVICE_IP}/32", "dev", self.bridge(0))
            listener = socket.create_server((KUBERNETES_SERVICE_IP, KUBERNETES_SERVICE_PORT))
            self.api_relay = Relay([listener], self.api)
            self.api_relay.start()

    def stop(self) -> None:
        if self.api_relay is not None:
            self.api_relay.stop()
            self.api_relay = None
        self.dns.stop()
        while self.made:
            subprocess.run(["ip", "link", "delete", self.made.pop()], capture_output=True,
                           timeout=30, check=False)

    def cni_config(self, index: int, ipam_dir: Path) -> dict[str, Any]:
        gw = self.dns_address(index)
        return {"cniVersion": "1.0.0", "name": f"flux-dws-{self.names[index]}",
                "plugins": [{"type": "bridge", "bridge": self.bridge(index),
                             "isGateway": False, "ipMasq": False,
                             "ipam": {"type": "host-local",
                                      "ranges": [[{"subnet": self.subnet(index),
                                                   "gateway": gw}]],
                                      "routes": [{"dst": POD_CIDR, "gw": gw},
                                                 {"dst": SERVICE_CIDR, "gw": gw}],
                                      "dataDir": str(ipam_dir)}}]}
