"""The container images the real-stack kubelets run, made here.

No registry is reachable from the test machines, so every image a Pod of
the real stack names is written by this module as a ``docker save``
archive (``manifest.json``, a config, one layer) and imported into each
node's containerd (``ctr images import``); the Pods name them with
``imagePullPolicy: Never``.

    pause     the sandbox of every Pod: ``t/k8s/images/pause.c``, built
              static with the machine's C compiler
    busybox   ``/bin/busybox`` from Debian's busybox-static, with a link
              per applet in ``/bin``: a shell and the usual tools

``build(dest)`` writes both (once per content: the archive is named after
what went into it) and returns their archives by image reference.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BUSYBOX", "PAUSE", "Image", "ImagesUnavailable", "build", "docker_archive"]

#: the references the Pods and containerd's sandbox_image name
PAUSE = "flux-dws.local/pause:1"
BUSYBOX = "flux-dws.local/busybox:1"
BUSYBOX_BINARY = Path("/bin/busybox")


class ImagesUnavailable(RuntimeError):
    """What an image needs is not on this machine (the message says what)."""


@dataclass(frozen=True)
class Image:
    ref: str
    archive: Path


@dataclass(frozen=True)
class Entry:
    """One member of a layer: a file (``data``), a link (``target``) or a directory."""

    path: str
    data: bytes | None = None
    target: str | None = None
    mode: int = 0o755


def _layer(entries: list[Entry]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for e in entries:
            info = tarfile.TarInfo(e.path)
            info.mode = e.mode
            info.mtime = 0
            if e.target is not None:
                info.type = tarfile.SYMTYPE
                info.linkname = e.target
                tar.addfile(info)
            elif e.data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(e.data)
                tar.addfile(info, io.BytesIO(e.data))
    return buf.getvalue()


def docker_archive(dest: Path, ref: str, entries: list[Entry], cmd: list[str],
                   env: list[str] | None = None) -> Path:
    """Write a one-layer image named ``ref`` as ``docker save`` does."""
    layer = _layer(entries)
    diff_id = hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": {"Cmd": cmd, "Env": env or ["PATH=/bin:/usr/bin:/sbin:/usr/sbin"]},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref],
                            "Layers": [f"{diff_id}/layer.tar"]}]).encode()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + f".{os.getpid()}.tmp")
    with tarfile.open(tmp, mode="w") as tar:
        for name, data in ((f"{diff_id}/layer.tar", layer), (config_name, config),
                           ("manifest.json", manifest)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(dest)
    return dest


def _pause_source() -> Path:
    return Path(__file__).resolve().parents[4] / "t" / "k8s" / "images" / "pause.c"


def _pause_binary(workdir: Path) -> bytes:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise ImagesUnavailable("no C compiler (cc) to build the pause image's program")
    out = workdir / "pause"
    r = subprocess.run([cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-O2", "-static", "-s",
                        "-o", str(out), str(_pause_source())],
                       capture_output=True, text=True, timeout=120, check=False)
    if r.returncode != 0:
        raise ImagesUnavailable(f"building the pause program failed: {r.stderr.strip()}")
    return out.read_bytes()


def _busybox_entries() -> list[Entry]:
    if not os.access(BUSYBOX_BINARY, os.X_OK):
        raise ImagesUnavailable(f"no {BUSYBOX_BINARY} (Debian's busybox-static) for the "
                                "busybox image")
    applets = subprocess.run([str(BUSYBOX_BINARY), "--list"], capture_output=True,
                             text=True, timeout=30, check=True).stdout.split()
    entries = [Entry("bin"), Entry("tmp", mode=0o1777), Entry("etc"),
               Entry("etc/passwd", b"root:x:0:0:root:/:/bin/sh\n", mode=0o644),
               Entry("etc/group", b"root:x:0:\n", mode=0o644),
               Entry("bin/busybox", BUSYBOX_BINARY.read_bytes())]
    entries += [Entry(f"bin/{a}", target="busybox") for a in sorted(set(applets))
                if a != "busybox"]
    return entries


def build(dest: Path) -> dict[str, Image]:
    """The images, written into ``dest`` (reused when their content is)."""
    dest.mkdir(parents=True, exist_ok=True)
    made: dict[str, Image] = {}
    pause = _pause_binary(dest)
    for ref, entries, cmd in (
            (PAUSE, [Entry("pause", pause)], ["/pause"]),
            (BUSYBOX, _busybox_entries(), ["/bin/sh"])):
        digest = hashlib.sha256(ref.encode())
        for e in entries:
            digest.update(f"{e.path}\0{e.target}\0{e.mode}\0".encode())
            digest.update(e.data or b"")
        archive = dest / f"{ref.split('/')[-1].replace(':', '-')}-{digest.hexdigest()[:12]}.tar"
        if not archive.exists():
            docker_archive(archive, ref, entries, cmd)
        made[ref] = Image(ref, archive)
    return made
