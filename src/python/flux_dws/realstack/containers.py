"""NnfContainerProfiles for the real nnf-sos in kind mode (issue 78): what
the tests' user containers run, with the project's busybox image, as a
site's profile would be written but for one thing of kind mode.

Kind mode's file systems are directories nnf-sos makes 0755 for root,
and it runs none of the storage profile's user commands, so the
profile's ``postSetup: chown $USERID:$GROUPID $MOUNT_PATH`` that gives a
user its storage on a rabbit does not run.  Each profile here begins
with an init container that does that chown (a profile's own init
containers run as the image's user, root: nnf-sos sets the job's user
on its containers only).  The job's storage on a rabbit is a directory
per allocation, each a symlink into kind mode's /mnt/nnf, which nnf-sos
mounts into a profile's containers (for one rabbit's allocations only,
when two rabbits' share names: COMMANDS) and not its init containers:
every container here mounts it itself.

``flux-dws-mpi`` is an MPI profile (an MPIJob through mpi-operator: a
launcher on the first rabbit, a worker on each, the project's MPI image
of flux_dws.realstack.images): the launcher's ``mpirun`` runs a rank on
each worker over ssh (port 2222), and each rank writes, as the job's
user, who it is into each allocation (``mpi-<worker's hostname>``), then
waits, as flux-dws-hold, for ``release``; ``flux-dws-mpi-once``'s ranks
write and end (the controllers' referee plays it).

    python -m flux_dws.realstack.containers USERID GROUPID

prints the profiles (a List) for ``kubectl apply -f -``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from flux_dws.realstack import images
from flux_dws.realstack.nnf import KIND_FILE_SYSTEMS, NNF_API, POD_NAMESPACE

#: the storage every profile here mounts: ``#DW jobdw ... name=scratch``
STORAGE = "DW_JOB_scratch"

#: the user containers' commands, by profile name.  Each loops over the
#: allocations of the rabbit it runs on (gfs2: one per compute; each a
#: directory named <rabbit>-<index>).
COMMANDS = {
    # who it is, as whom, with which port, into each allocation, in a file
    # named for the allocation (from-<rabbit>-<index>): kind mode names a
    # rabbit's file systems by their NnfNodeStorage, whose name every
    # rabbit's has, so two rabbits' allocations of one index are one
    # directory of the /mnt/nnf they share (a kind cluster's, as here)
    "flux-dws-write": ('for d in "$DW_JOB_scratch"/*/; do '
                       'echo "$NNF_NODE_NAME $(id -u) ports=$NNF_CONTAINER_PORTS" '
                       '> "$d/from-$(basename "$d")"; done; sleep 1'),
    # until ``release`` is in each allocation (300 s at most, then it
    # fails); a container's first process has no default for SIGTERM:
    # without the trap a Pod deleted under it takes its whole grace period
    "flux-dws-hold": ('trap "exit 143" TERM; for d in "$DW_JOB_scratch"/*/; do n=0; '
                      'until [ -e "$d/release" ]; do n=$((n+1)); '
                      '[ $n -le 1500 ] || exit 2; sleep 0.2; done; done'),
    "flux-dws-fail": "echo failing; exit 3",
    # with requires=user-container-auth: the files nnf-sos mounts for it
    # (the site's TLS certificate and key, the workflow's token key), as
    # the variables name them, into each allocation (auth-<allocation>)
    "flux-dws-auth": ('for f in "$TLS_CERT_PATH" "$TLS_KEY_PATH" "$TOKEN_KEY_PATH"; do '
                      'test -s "$f" || { echo "no $f"; exit 4; }; done; '
                      'for d in "$DW_JOB_scratch"/*/; do '
                      'grep -c "BEGIN" "$TLS_CERT_PATH" "$TOKEN_KEY_PATH" '
                      '> "$d/auth-$(basename "$d")"; done; sleep 1'),
}


def _volume_name(storage: str) -> str:
    # nnf-sos' name for a storage's volume: the name after DW_JOB_, "_"
    # made "-" (Kubernetes names take no "_")
    return storage.split("_", 2)[2].replace("_", "-")


#: kind mode's /mnt/nnf, where a rabbit's allocations' links lead, as
#: every container here mounts it (the module's text)
KIND_FS_VOLUME = {"name": "kind-file-systems",
                  "hostPath": {"path": KIND_FILE_SYSTEMS, "type": "Directory"}}
KIND_FS_MOUNT = {"name": "kind-file-systems", "mountPath": KIND_FILE_SYSTEMS}


def _container(name: str, image: str, command: list[str] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "Never",
                         "volumeMounts": [KIND_FS_MOUNT]}
    if command is not None:
        c["command"] = command
    return c


def _own_storage(image: str, userid: int, groupid: int) -> dict[str, Any]:
    """The init container that gives the storage to the job's user."""
    c = _container("own-storage", image,
                   ["sh", "-c", f"chown {userid}:{groupid} /storage/*/"])
    c["volumeMounts"] = [{"name": _volume_name(STORAGE), "mountPath": "/storage"},
                         KIND_FS_MOUNT]
    return c


def _profile(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": NNF_API, "kind": "NnfContainerProfile",
            "metadata": {"name": name, "namespace": POD_NAMESPACE},
            "data": {"createContainer": True, "retryLimit": 0, "numPorts": 1,
                     "postRunTimeoutSeconds": 300,
                     "storages": [{"name": STORAGE, "optional": False}], **spec}}


def profile(name: str, command: str, userid: int, groupid: int) -> dict[str, Any]:
    """A non-MPI NnfContainerProfile ``name`` running ``command`` (sh -c)
    on each rabbit, its storage STORAGE given to ``userid``:``groupid``
    first (the module's text)."""
    return _profile(name, spec={
        "initContainers": [_own_storage(images.BUSYBOX, userid, groupid)],
        "volumes": [KIND_FS_VOLUME],
        "containers": [_container("app", images.BUSYBOX, ["sh", "-c", command])]})


#: what each rank of flux-dws-mpi runs (sh -c), on its worker, over ssh:
#: the ssh session has none of the Pod's variables, so the storage's path
#: is the launcher's, put into the command by Kubernetes ($(VAR)); every
#: rabbit's is the same in kind mode
MPI_RANK = ('for d in $(DW_JOB_scratch)/*/; do '
            'echo "$(hostname) $(id -u) rank=$OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE" '
            '> "$d/mpi-$(hostname)"; done; '
            # then, as flux-dws-hold, until ``release`` is in each (300 s)
            'for d in $(DW_JOB_scratch)/*/; do n=0; until [ -e "$d/release" ]; do '
            'n=$((n+1)); [ $n -le 1500 ] || exit 2; sleep 0.2; done; done')


#: MPI_RANK's first part alone: a rank that writes and ends
MPI_RANK_ONCE = MPI_RANK.split("; for d in")[0]


def mpi_profile(name: str, userid: int, groupid: int, rank: str = MPI_RANK
                ) -> dict[str, Any]:
    """The MPI NnfContainerProfile ``name`` (the module's text), each rank
    running ``rank``: the storage given to the user by the launcher's
    init container, as in ``profile``."""
    return _profile(name, mpiSpec={
        "launcher": {"initContainers": [_own_storage(images.MPI, userid, groupid)],
                     "volumes": [KIND_FS_VOLUME],
                     "containers": [_container("mpi", images.MPI,
                                               ["mpirun", "sh", "-c", rank])]},
        "worker": {"volumes": [KIND_FS_VOLUME], "containers": [_container("mpi", images.MPI)]}})


def profiles(userid: int, groupid: int) -> list[dict[str, Any]]:
    """Every profile of COMMANDS, flux-dws-mpi and flux-dws-mpi-once."""
    return [*(profile(name, command, userid, groupid) for name, command in COMMANDS.items()),
            mpi_profile("flux-dws-mpi", userid, groupid),
            mpi_profile("flux-dws-mpi-once", userid, groupid, MPI_RANK_ONCE)]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not all(a.isdigit() for a in argv):
        print("usage: python -m flux_dws.realstack.containers USERID GROUPID", file=sys.stderr)
        return 2
    print(json.dumps({"apiVersion": "v1", "kind": "List",
                      "items": profiles(int(argv[0]), int(argv[1]))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
