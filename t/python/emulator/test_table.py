"""Server-side printing (the Table kubectl asks for)."""

from __future__ import annotations

import json
import ssl
import urllib.request

import pytest
from t.python.emulator.conftest import G, V, workflow

from flux_dws.apiserver.table import human_duration

ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
          "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")


def get_table(emu, path):
    ctx = ssl.create_default_context(cadata=emu.certs.ca_pem.decode())
    req = urllib.request.Request(emu.url + path, headers={
        "Authorization": f"Bearer {emu.token}", "Accept": ACCEPT})
    with urllib.request.urlopen(req, context=ctx) as r:
        return json.loads(r.read())


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (0, "0s"), (119, "119s"), (125, "2m5s"), (600, "10m"),
    (3 * 3600 + 60, "3h1m"), (30 * 3600, "30h"), (3 * 86400 + 3600, "3d1h"),
    (100 * 86400, "100d"), (3 * 365 * 86400, "3y"),
])
def test_human_duration(seconds, text):
    assert human_duration(seconds) == text


def test_workflow_table(emu, api):
    api.create_namespaced_custom_object(G, V, "default", "workflows", workflow())
    t = get_table(emu, f"/apis/{G}/{V}/namespaces/default/workflows")
    assert t["kind"] == "Table" and t["metadata"]["resourceVersion"].isdigit()
    names = [c["name"] for c in t["columnDefinitions"]]
    assert names[:6] == ["Name", "STATE", "READY", "STATUS", "JOBID", "AGE"]
    row = t["rows"][0]
    assert row["cells"][0] == "w1" and row["cells"][4] == "f1"
    assert row["object"]["kind"] == "PartialObjectMetadata"
    one = get_table(emu, f"/apis/{G}/{V}/namespaces/default/workflows/w1?includeObject=Object")
    assert one["rows"][0]["object"]["spec"]["wlmID"] == "flux"
