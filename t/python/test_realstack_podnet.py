"""The pod network's DNS (flux_dws.realstack.podnet), without a socket but
one on the loopback: the protocol and the names a cluster gives Pods."""

from __future__ import annotations

import socket
import struct
from typing import Any

import pytest

from flux_dws.realstack import podnet

WORKER = {"spec": {"hostname": "wf-worker-1", "subdomain": "wf"},
          "status": {"podIP": "10.244.1.7"}}
LAUNCHER = {"spec": {"hostname": "wf-launcher", "subdomain": "wf"}, "status": {}}


def query(name: str, qtype: int = podnet.TYPE_A, ident: int = 0x1234,
          flags: int = 0x0100) -> bytes:
    qname = b"".join(bytes([len(x)]) + x.encode() for x in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", ident, flags, 1, 0, 0, 0) + qname + struct.pack(
        "!HH", qtype, podnet.CLASS_IN)


def parse(answer: bytes) -> tuple[int, int, list[str]]:
    """(id, rcode, the A records' addresses) of an answer."""
    ident, flags, qd, an = struct.unpack("!HHHH", answer[:8])
    assert flags & 0x8000 and flags & 0x0400          # an answer, authoritative
    at = 12
    for _ in range(qd):
        while answer[at]:
            at += 1 + answer[at]
        at += 5
    out = []
    for _ in range(an):
        _, rtype, _, _, n = struct.unpack("!HHHIH", answer[at:at + 12])
        assert rtype == podnet.TYPE_A and n == 4
        out.append(socket.inet_ntoa(answer[at + 12:at + 16]))
        at += 12 + n
    return ident, flags & 0xF, out


def pods_of(namespace: str) -> list[dict[str, Any]]:
    return [WORKER, LAUNCHER] if namespace == "default" else []


@pytest.mark.parametrize(("name", "address"), [
    ("wf-worker-1.wf.default.svc.cluster.local", "10.244.1.7"),
    ("WF-Worker-1.wf.default.svc.cluster.local", "10.244.1.7"),
    ("10-244-0-3.dm.nnf-dm-system.svc.cluster.local", "10.244.0.3"),
    # no address yet, another namespace, a name of more or fewer labels,
    # the search list's tries, not an address, not the cluster's
    ("wf-launcher.wf.default.svc.cluster.local", None),
    ("wf-worker-1.wf.other.svc.cluster.local", None),
    ("wf-worker-1.wf.default.svc.default.svc.cluster.local", None),
    ("wf.default.svc.cluster.local", None),
    ("10-244-0-300.dm.nnf-dm-system.svc.cluster.local", None),
    ("wf-worker-1.wf.default.svc", None),
    ("example.com", None),
])
def test_the_names_of_pods(name: str, address: str | None) -> None:
    assert podnet.resolve_pod(name.lower(), pods_of) == address


def test_an_a_question_is_answered_with_the_address() -> None:
    ident, rcode, addrs = parse(podnet.dns_answer(
        query("wf-worker-1.wf.default.svc.cluster.local"),
        lambda n: podnet.resolve_pod(n, pods_of)) or b"")
    assert (ident, rcode, addrs) == (0x1234, podnet.NOERROR, ["10.244.1.7"])


def test_a_known_name_has_no_aaaa_and_an_unknown_one_is_nxdomain() -> None:
    def resolve(n: str) -> str | None:
        return podnet.resolve_pod(n, pods_of)

    assert parse(podnet.dns_answer(query("wf-worker-1.wf.default.svc.cluster.local",
                                         podnet.TYPE_AAAA), resolve) or b"")[1:] == (
        podnet.NOERROR, [])
    assert parse(podnet.dns_answer(query("example.com"), resolve) or b"")[1:] == (
        podnet.NXDOMAIN, [])


@pytest.mark.parametrize("bad", [
    b"", b"\x12\x34", query("x.y")[:14],
    # a label running past the end, a compression pointer in a question
    struct.pack("!HHHHHH", 1, 0, 1, 0, 0, 0) + b"\x3fab",
    struct.pack("!HHHHHH", 1, 0, 1, 0, 0, 0) + b"\xc0\x0c\0\x01\0\x01",
    # two questions
    struct.pack("!HHHHHH", 1, 0, 2, 0, 0, 0) + b"\0\0\x01\0\x01" * 2,
])
def test_bad_queries_get_formerr_or_nothing(bad: bytes) -> None:
    answer = podnet.dns_answer(bad, lambda n: "10.0.0.1")
    if len(bad) < 12:
        assert answer is None
    else:
        assert answer is not None and parse(answer)[1] == podnet.FORMERR


def test_answers_are_never_answered() -> None:
    assert podnet.dns_answer(query("x.y", flags=0x8100), lambda n: "10.0.0.1") is None


def test_another_opcode_is_not_implemented() -> None:
    answer = podnet.dns_answer(query("x.y", flags=0x2100), lambda n: "10.0.0.1")
    assert answer is not None and parse(answer)[1] == podnet.NOTIMP


def test_the_server_answers_on_its_address_and_survives_a_lookup_failure() -> None:
    def pods(namespace: str) -> list[dict[str, Any]]:
        if namespace == "broken":
            raise OSError("the API server is down")
        return pods_of(namespace)

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    dns = podnet.ClusterDNS(["127.0.0.1"], pods, port=port)
    dns.start()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
            c.settimeout(10)
            for name, want in (("x.wf.broken.svc.cluster.local", (podnet.NXDOMAIN, [])),
                               ("wf-worker-1.wf.default.svc.cluster.local",
                                (podnet.NOERROR, ["10.244.1.7"]))):
                c.sendto(query(name), ("127.0.0.1", port))
                assert parse(c.recv(512))[1:] == want
    finally:
        dns.stop()
    assert dns.questions == 2
