"""An emulated Rabbit management cluster: a Kubernetes API server for the
DWS/NNF resources (and, with a system and controllers, DWS and nnf-sos
behaviour).

    with Emulator() as emu:                 # TLS + token, a free port
        api = emu.custom_objects_api()      # the official client
        ...

``Emulator.start()`` runs the server in a thread of this process;
``start_subprocess()`` runs ``flux-dws emulator`` as a child.  Either way a
kubeconfig is written (``emu.kubeconfig``) for kubectl and clients.
See doc/guide/emulator.rst.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from flux_dws.apiserver import kubeconfig as kc
from flux_dws.apiserver import tls
from flux_dws.apiserver.apifaults import ApiFault, ApiFaults
from flux_dws.apiserver.persist import SQLiteState
from flux_dws.apiserver.server import ApiServer, Settings, make_server
from flux_dws.apiserver.store import Store
from flux_dws.emulator import admin
from flux_dws.emulator import latency as latency_model
from flux_dws.emulator.controllers import Controllers, seed_system

__all__ = ["Emulator", "start_subprocess"]


class Emulator:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, use_tls: bool = True,
                 token: str | None = "auto", kubeconfig: str | Path | None = None,
                 state: str | Path | None = None, history: int = 1000,
                 bookmark_interval: float = 60.0, system: str | None = None,
                 latency: str | dict[str, float] = latency_model.DEFAULT,
                 workers: int = 1, fanout: int = 1) -> None:
        self.host = host
        self.port = port
        self.use_tls = use_tls
        self._persist = SQLiteState(str(state)) if state else None
        # a restarted API server keeps its identity: with --state the token
        # and the TLS keys live in the state file, so clients' kubeconfigs
        # (and the CA they trust) stay valid across the restart
        if token == "auto":
            token = self._persist.get_meta("token") if self._persist else None
            if token is None:
                token = secrets.token_hex(16)
                if self._persist is not None:
                    self._persist.set_meta("token", token)
        self.token = token
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if kubeconfig is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="flux-dws-emu-")
            kubeconfig = Path(self._tmp.name) / "kubeconfig"
        self.kubeconfig = Path(kubeconfig)
        self.store = Store(history=history, persist=self._persist)
        self.settings = Settings(self.token, bookmark_interval=bookmark_interval)
        self.server: ApiServer | None = None
        self._thread: threading.Thread | None = None
        self.certs: tls.Certs | None = None
        self.system = system
        latency = latency_model.load(latency)
        self.controllers: Controllers | None = None
        if system is not None:
            seed_system(self.store, system)
            self.controllers = Controllers(self.store, latency, workers=workers, fanout=fanout)
        # the controllers' endpoints (a 404 naming why when there are none)
        self.settings.admin_paths = admin.PATHS
        self.settings.admin = lambda method, path, body: admin.request(self.controllers, method,
                                                                       path, body)

    @property
    def url(self) -> str:
        scheme = "https" if self.use_tls else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def start(self) -> Emulator:
        ctx = None
        if self.use_tls:
            self.certs = self._certs()
            ctx = tls.server_context(self.certs)
        self.server = make_server(self.store, self.host, self.port, self.settings, ctx)
        self.port = self.server.server_address[1]
        kc.write(self.kubeconfig, kc.kubeconfig(
            self.url, self.certs.ca_pem if self.certs else None, self.token))
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.02},
                                        name="emulator-http", daemon=True)
        self._thread.start()
        if self.controllers is not None:
            self.controllers.start()
        return self

    def _certs(self) -> tls.Certs:
        """The server's TLS keys: kept in the state file, if there is one,
        for the host they were made for."""
        if self._persist is None:
            return tls.generate([self.host])
        saved = self._persist.get_meta("tls")
        if saved is not None:
            d = json.loads(saved)
            if d.get("host") == self.host:
                return tls.Certs(d["ca"].encode(), d["cert"].encode(), d["key"].encode())
        certs = tls.generate([self.host])
        self._persist.set_meta("tls", json.dumps({
            "host": self.host, "ca": certs.ca_pem.decode(), "cert": certs.cert_pem.decode(),
            "key": certs.key_pem.decode()}))
        return certs

    def stop(self) -> None:
        self.settings.stopping.set()
        self.settings.close_idle()
        if self.controllers is not None:
            self.controllers.stop()
        if self.server is not None:
            if self._thread is not None:  # shutdown() waits for serve_forever to end
                self.server.shutdown()
                self._thread = None
            self.server.server_close()
            self.server = None
        if self._persist is not None:
            self._persist.close()
            self._persist = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Emulator:
        return self.start() if self.server is None else self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- HTTP-level faults (emulator.apifaults) ---------------------------

    @property
    def api_faults(self) -> ApiFaults:
        """The API server's fault rules and open watches (``wait`` on them)."""
        return self.settings.api_faults

    def api_fault(self, status: int = 503, *, method: str = "*", path: str = "",
                  count: int = 1, retry_after: float | None = None,
                  drop: bool = False, message: str = "", hold: float = 0.0,
                  skip: int = 0) -> ApiFault:
        """The next ``count`` requests of ``method`` whose target matches the
        regex ``path`` get ``status`` (``Retry-After: retry_after`` if given),
        or with ``drop`` lose their connection unanswered, or with ``hold``
        are carried out and their answer held ``hold`` seconds (or until
        the fault's ``release()``); the first ``skip`` of them pass untouched."""
        return self.settings.api_faults.add(ApiFault(status, method, path, count,
                                                     retry_after, drop, message, hold, skip))

    def drop_watches(self) -> int:
        """Cut every open watch stream (clients must reconnect); how many."""
        return self.settings.api_faults.drop_watches()

    def expire_watches(self, count: int = 1) -> None:
        """The next ``count`` watches from a resourceVersion get 410 Gone."""
        self.settings.api_faults.expire_watches(count)

    def mute_watches(self, on: bool = True) -> None:
        """Every watch stream sends nothing (its events lost) until
        ``mute_watches(False)`` or ``clear_api_faults()``."""
        self.settings.api_faults.mute_watches(on)

    def clear_api_faults(self) -> None:
        self.settings.api_faults.clear()

    def api_client(self) -> Any:
        from kubernetes import config

        return config.new_client_from_config(str(self.kubeconfig))  # type: ignore[no-untyped-call]

    def custom_objects_api(self) -> Any:
        from kubernetes import client

        return client.CustomObjectsApi(self.api_client())

    def core_v1_api(self) -> Any:
        from kubernetes import client

        return client.CoreV1Api(self.api_client())


def start_subprocess(kubeconfig: str | Path, *args: str, timeout: float = 20.0,
                     listen: str = "127.0.0.1:0", **popen: Any) -> subprocess.Popen[bytes]:
    """Run ``flux-dws emulator --kubeconfig KUBECONFIG ARGS`` until it serves
    (``listen``: a fixed address keeps the kubeconfig valid across a restart;
    ``popen``: more subprocess.Popen arguments, e.g. where its output goes)."""
    path = Path(kubeconfig)
    path.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "flux_dws", "emulator", "--listen",
                             listen, "--kubeconfig", str(path), *args], **popen)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"emulator exited with status {proc.returncode}")
        if path.exists():
            try:
                import yaml

                server = yaml.safe_load(path.read_text())["clusters"][0]["cluster"]["server"]
                import ssl

                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                urllib.request.urlopen(f"{server}/readyz", timeout=1, context=ctx)
                return proc
            except (OSError, KeyError, TypeError):
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("emulator did not start")
