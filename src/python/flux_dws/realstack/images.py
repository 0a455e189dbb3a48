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
    mpi       an MPI image as mpi-operator's base images are: Debian
              bookworm (minbase) with Open MPI and OpenSSH, made by
              ``mmdebstrap`` from Debian's archive (``MPI_RECIPE``): a
              user ``mpiuser``, sshd and ssh on port 2222 without host key
              checks, its command the worker's ``sshd -De``

    nnf-dm    nnf-dm's image as its Dockerfile makes it, on the MPI image
              (upstream's base, nnf-mfu, is Open MPI, OpenSSH and
              mpifileutils): its manager, t/nnf/build.sh's, as /manager,
              and a stand-in for mpifileutils' ``dcp``, which no registry
              here serves (Debian packages no mpifileutils; its source is
              on GitHub): DCP_STANDIN, what the data movement profile
              runs under mpirun, copies as ``cp -r`` and gives the copy to
              the job's user, rank 0 alone

``build(dest)`` writes the first two (once per content: the archive is
named after what went into it) and returns their archives by image
reference; ``build_mpi(dest)`` the third (once per recipe: its packages
are Debian's of the day it was made; 30-50 s and 200 MB),
``build_nnf_dm(dest, manager)`` the fourth (once per manager binary).
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

__all__ = ["BUSYBOX", "MPI", "PAUSE", "Image", "ImagesUnavailable", "build", "build_mpi",
           "build_nnf_dm", "docker_archive"]

#: the references the Pods and containerd's sandbox_image name
PAUSE = "flux-dws.local/pause:1"
BUSYBOX = "flux-dws.local/busybox:1"
BUSYBOX_BINARY = Path("/bin/busybox")
MPI = "flux-dws.local/mpi:1"
MPI_SSH_PORT = 2222
#: what makes the MPI image: mmdebstrap's arguments before the output
#: (and MPI_DIRECTORIES, added to its tar after: mmdebstrap empties /run).
#: sshd runs as root in a worker (nnf-sos gives it SETUID, SETGID and
#: SYS_CHROOT): no PAM (pam_loginuid fails in a container), so mpiuser's
#: password is "*", not locked ("!"), which sshd then refuses outright;
#: nnf-sos' init container renames mpiuser in /etc/shadow to the job's user
MPI_RECIPE = (
    "--variant=minbase", "--include=openssh-server,openssh-client,openmpi-bin",
    "--skip=output/dev", "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--customize-hook=chroot \"$1\" useradd -m -s /bin/bash mpiuser",
    "--customize-hook=chroot \"$1\" usermod -p '*' mpiuser",
    # the port in sshd_config itself, which a Pod may replace (nnf-dm's
    # workers mount their own, with its Port): sshd listens on each Port
    f"--customize-hook=sed -i 's/^#Port 22$/Port {MPI_SSH_PORT}/' \"$1/etc/ssh/sshd_config\"",
    "--customize-hook=printf 'StrictModes no\\nUsePAM no\\nPidFile none\\n' "
    "> \"$1/etc/ssh/sshd_config.d/flux-dws.conf\"",
    "--customize-hook=printf 'Host *\\n    Port %s\\n    StrictHostKeyChecking no\\n"
    "    UserKnownHostsFile /dev/null\\n    LogLevel ERROR\\n' "
    f"{MPI_SSH_PORT} > \"$1/etc/ssh/ssh_config.d/flux-dws.conf\"",
    "--customize-hook=rm -rf \"$1/var/cache/apt\" \"$1/var/lib/apt/lists\"",
    "bookworm",
)
#: sshd's privilege separation directory: mpi-operator runs a worker's
#: ``/usr/sbin/sshd -De`` itself, so no command of the image can make it
MPI_DIRECTORIES = ("run/sshd",)
MPI_MIRROR = "http://deb.debian.org/debian"
#: the options of dcp that NNF's data movement profiles give it; what a
#: real dcp does with more ranks (split the copy) rank 0 does alone here
DCP_STANDIN = """#!/bin/sh
# flux-dws' stand-in for mpifileutils' dcp (flux_dws.realstack.images)
uid= gid=
while [ $# -gt 2 ]; do
    case $1 in
    --uid) uid=$2; shift 2 ;;
    --gid) gid=$2; shift 2 ;;
    --progress|-p|--bufsize|--chunksize) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "dcp (flux-dws stand-in): usage: dcp [--uid U --gid G] SRC DEST" >&2
    exit 2
fi
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
cp -r -- "$1" "$2" || exit 1
[ -z "$uid" ] || chown -R "$uid${gid:+:$gid}" -- "$2"
"""
MPI_BUILD_TIMEOUT = 1200.0


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
    dest.parent.mkdir(parents=True, exist_ok=True)
    layer = dest.with_name(dest.name + f".{os.getpid()}.layer")
    try:
        layer.write_bytes(_layer(entries))
        return archive_from_layer(dest, ref, layer, cmd, env)
    finally:
        layer.unlink(missing_ok=True)


def archive_from_layer(dest: Path, ref: str, layer: Path, cmd: list[str],
                       env: list[str] | None = None) -> Path:
    """Write an image of one layer, the tar file ``layer``, as ``docker
    save`` does."""
    return archive_from_layers(dest, ref, [layer], cmd, env)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def archive_from_layers(dest: Path, ref: str, layers: list[Path], cmd: list[str],
                        env: list[str] | None = None) -> Path:
    """Write an image of ``layers`` (tar files, the lowest first) as
    ``docker save`` does."""
    diff_ids = [_sha256(layer) for layer in layers]
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": {"Cmd": cmd, "Env": env or ["PATH=/bin:/usr/bin:/sbin:/usr/sbin"]},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{d}" for d in diff_ids]},
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref],
                            "Layers": [f"{d}/layer.tar" for d in diff_ids]}]).encode()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + f".{os.getpid()}.tmp")
    with tarfile.open(tmp, mode="w") as tar:
        for layer, diff_id in zip(layers, diff_ids, strict=True):
            info = tarfile.TarInfo(f"{diff_id}/layer.tar")
            info.size = layer.stat().st_size
            info.mode = 0o644
            with layer.open("rb") as f:
                tar.addfile(info, f)
        for name, data in ((config_name, config), ("manifest.json", manifest)):
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


def build_mpi(dest: Path) -> Image:
    """The MPI image (see the module's text), written into ``dest`` once
    per recipe; ImagesUnavailable saying why it cannot be made here."""
    digest = hashlib.sha256("\0".join((MPI, MPI_MIRROR, *MPI_RECIPE, *MPI_DIRECTORIES))
                            .encode()).hexdigest()
    archive = dest / f"mpi-{digest[:12]}.tar"
    if archive.exists():
        return Image(MPI, archive)
    if os.geteuid() != 0:
        raise ImagesUnavailable("making the MPI image needs root (mmdebstrap's root mode)")
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise ImagesUnavailable("no mmdebstrap (Debian's mmdebstrap: scripts/setup.sh "
                                "installs it) to make the MPI image")
    dest.mkdir(parents=True, exist_ok=True)
    rootfs = dest / f"mpi-{digest[:12]}.{os.getpid()}.rootfs.tar"
    try:
        r = subprocess.run([mmdebstrap, "--mode=root", "--quiet", *MPI_RECIPE, str(rootfs),
                            MPI_MIRROR], capture_output=True, text=True,
                           timeout=MPI_BUILD_TIMEOUT, check=False)
        if r.returncode != 0:
            raise ImagesUnavailable(f"mmdebstrap could not make the MPI image: "
                                    f"{r.stderr.strip()[-2000:]}")
        with tarfile.open(rootfs, mode="a", format=tarfile.PAX_FORMAT) as tar:
            for d in MPI_DIRECTORIES:
                info = tarfile.TarInfo(f"./{d}")
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
        archive_from_layer(archive, MPI, rootfs, ["/usr/sbin/sshd", "-De"],
                           ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    finally:
        rootfs.unlink(missing_ok=True)
    return Image(MPI, archive)


def build_nnf_dm(dest: Path, manager: Path) -> Image:
    """The nnf-dm image of ``manager`` (the module's text) on the MPI
    image, written into ``dest`` once per manager and MPI image."""
    mpi = build_mpi(dest)
    digest = hashlib.sha256()
    digest.update(mpi.archive.name.encode())
    digest.update(DCP_STANDIN.encode())
    digest.update(manager.read_bytes())
    ref = f"flux-dws.local/nnf-dm:{digest.hexdigest()[:12]}"
    archive = dest / f"nnf-dm-{digest.hexdigest()[:12]}.tar"
    if archive.exists():
        return Image(ref, archive)
    base = dest / f"nnf-dm-{digest.hexdigest()[:12]}.{os.getpid()}.base.tar"
    top = dest / f"nnf-dm-{digest.hexdigest()[:12]}.{os.getpid()}.top.tar"
    try:
        with tarfile.open(mpi.archive) as tar:
            [member] = [m for m in tar.getmembers() if m.name.endswith("/layer.tar")]
            src = tar.extractfile(member)
            assert src is not None
            with base.open("wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        top.write_bytes(_layer([Entry("manager", manager.read_bytes()),
                                Entry("usr/local/bin/dcp", DCP_STANDIN.encode())]))
        archive_from_layers(archive, ref, [base, top], ["/manager"],
                            ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"])
    finally:
        base.unlink(missing_ok=True)
        top.unlink(missing_ok=True)
    return Image(ref, archive)
