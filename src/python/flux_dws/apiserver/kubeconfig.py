"""kubeconfig files naming the emulator (what clients and kubectl read)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml


def kubeconfig(server: str, ca_pem: bytes | None, token: str | None,
               name: str = "flux-dws-emulator") -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, Any] = {"token": token} if token else {}
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name,
                                                 "namespace": "default"}}],
        "current-context": name,
    }


def write(path: str | Path, config: dict[str, Any]) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    tmp.chmod(0o600)
    tmp.replace(p)
