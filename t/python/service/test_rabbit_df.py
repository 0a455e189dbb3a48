"""dws.rabbits {"df": true} (flux dws df) end to end: the real service
against the emulator.  What it says agrees with the Storage objects (size
is the drives', free is status.capacity) and with the Servers objects
(what jobs and persistent storage hold).  Every wait is on a condition."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from flux_dws.cli import df as dfcli
from flux_dws.harness import Harness

G, V = "dataworkflowservices.github.io", "v1alpha7"
XFS = "#DW jobdw type=xfs capacity=10GiB name=scratch"
R2, R3 = "kind-worker2", "kind-worker3"
GiB = 1 << 30


@pytest.fixture
def h() -> Iterator[Harness]:
    with Harness(system="kind") as harness:
        harness.wait_for(lambda: harness.fluxion.rabbit_up(R2) and harness.fluxion.rabbit_up(R3),
                         what="rabbits up")
        yield harness


def df(h: Harness, userid: int | None = None) -> dict[str, Any]:
    return h.ask("dws.rabbits", userid=userid, payload={"df": True})


def storage_status(h: Harness, name: str) -> dict[str, Any]:
    return dict(h.emulator.custom_objects_api().get_namespaced_custom_object(
        G, V, "default", "storages", name)["status"])


def by_name(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in dfcli.rabbits_of(answer)}


def assert_total_sums(answer: dict[str, Any]) -> None:
    """The total row is each column summed over the rabbits."""
    rabbits = dfcli.rabbits_of(answer)
    for key in ("size", "free", "used", "jobs", "persistent", "other"):
        assert answer["total"][key] == sum(r[key] for r in rabbits), key
    for key in ("total", "up", "down", "held"):
        assert answer["total"]["ssds"][key] == sum(r["ssds"][key] for r in rabbits), key


def test_an_idle_system(h: Harness) -> None:
    got = df(h)
    assert got["success"] and got["ready"]
    rabbits = by_name(got)
    for name in (R2, R3):
        st = storage_status(h, name)
        r = rabbits[name]
        assert r["size"] == sum(d["capacity"] for d in st["devices"])
        assert r["free"] == st["capacity"] == r["size"]
        assert (r["used"], r["jobs"], r["persistent"], r["other"]) == (0, 0, 0, 0)
        # the harness' graph: two ssd vertices a rabbit, all up
        assert r["ssds"] == {"total": 2, "up": 2, "down": 0, "held": 0}
        assert r["up"] is True
    assert got["total"]["size"] == rabbits[R2]["size"] + rabbits[R3]["size"]
    assert got["total"]["ssds"] == {"total": 4, "up": 4, "down": 0, "held": 0}
    assert_total_sums(got)


def test_jobs_and_persistent_storage_and_a_drain(h: Harness) -> None:
    create = h.submit("#DW create_persistent type=xfs capacity=10GiB name=p1", nodes=1)
    made = h.wait(create)
    assert made.exceptions == []
    prabbit = R3 if made.hosts == ["compute-04"] else R2
    running = h.submit(XFS, nodes=1, runtime=600.0)
    job = h.wait_event(running, "start")  # its tasks run: h.finish ends them
    jrabbit = R3 if job.hosts == ["compute-04"] else R2
    # nnf-sos fills the Servers' status.allocationSets as the storage it
    # made becomes ready: ask until both show (each ask is a round trip
    # through the service and the API server; no sleep)
    # and the service's view of each Storage (a watch) catches up with it
    def settled(rabbits: dict[str, dict[str, Any]]) -> bool:
        return bool(rabbits[jrabbit]["jobs"] and rabbits[prabbit]["persistent"]) and all(
            rabbits[n]["free"] == storage_status(h, n)["capacity"] for n in (R2, R3))

    answer = df(h)
    rabbits = by_name(answer)
    asks = 1
    while not settled(rabbits) and asks < 500:
        answer = df(h)
        rabbits, asks = by_name(answer), asks + 1
    assert_total_sums(answer)
    assert answer["total"]["used"] >= 20 * GiB  # the job's and the persistent storage
    assert rabbits[jrabbit]["jobs"] >= 10 * GiB
    assert rabbits[prabbit]["persistent"] >= 10 * GiB
    for name in (R2, R3):
        r, st = rabbits[name], storage_status(h, name)
        assert r["free"] == st["capacity"]
        assert r["used"] == r["size"] - r["free"]
        assert r["jobs"] + r["persistent"] + r["other"] == r["used"], r
    # a drain shows in the ssds, the space stays
    assert h.ask("dws.drain", payload={"rabbits": jrabbit, "reason": "x"})["success"]
    h.wait_for(lambda: not h.fluxion.rabbit_up(jrabbit), what="drained rabbit down")
    r = by_name(df(h))[jrabbit]
    assert r["up"] is False and r["why"].startswith("drained ")
    assert r["ssds"]["down"] == 2 and r["ssds"]["up"] == 0
    assert r["jobs"] >= 10 * GiB
    text = dfcli.format_df(list(by_name(df(h)).values()))
    default = re.findall(r"\{(\w+)", dfcli.PRESETS["default"].format)
    assert text.splitlines()[0].split() == [dfcli.FIELDS[f].heading for f in default]
    assert text.splitlines()[-1].startswith("total")
    h.finish(running)
    assert not h.wait(running).fatal
    h.ask("dws.undrain", payload={"rabbits": jrabbit})


def test_a_guest_may_ask(h: Harness) -> None:
    got = df(h, userid=h.owner + 1)
    assert got["success"] and len(got["rabbits"]) == 2


def test_an_answer_with_a_token_that_is_none_is_logged_and_dropped(h: Harness) -> None:
    """The engine refuses an answer whose token is no token of its one
    namespace, naming it; the service logs that and goes on serving."""
    svc = h.service
    assert svc is not None
    bad = ("df:1x", f"drain:1:bogus:{R2}", "health:abc", "persistent-share:")
    for tok in bad:
        h.reactor.call(lambda t=tok: svc.feed({"type": "k8s-result", "token": t, "ok": True,
                                                "code": 200, "object": {}}))
    errors = [m for lvl, m in h.link.logs if lvl == "err"]
    for tok in bad:
        assert f"dropped a malformed k8s-result event: unknown token '{tok}'" in errors
    # an answer to a request never made (or answered already): dropped unlogged
    h.reactor.call(lambda: svc.feed({"type": "k8s-result", "token": "df:999", "ok": True,
                                     "code": 200, "object": {"items": []}}))
    assert [m for lvl, m in h.link.logs if lvl == "err"] == errors
    assert df(h)["success"]
