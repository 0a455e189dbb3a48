"""What a kubelet and containerd change on the host, put back.

A kubelet is made for a host of its own: it sets sysctls, makes iptables
chains, directories under /var/lib and /run, network namespaces, cgroups
and mounts, and containerd's shims outlive containerd.  A test leaves the
host as it found it, even when it is killed, so the putting back is done
by a process of its own, the guard:

    guard = HostGuard.start(workdir, bridge="fdws-1a2b")   # records the host
    ...                                                    # kubelets run
    guard.note_pid(pid)                                    # what it will stop
    guard.stop()                                           # puts it back

``start`` runs ``python -m flux_dws.realstack.hostguard WORKDIR`` in a
session of its own: it reads the host (``HostState.read``), writes it to
``WORKDIR/host-before.json`` and says ``ready``, then waits for its stdin
to close: when ``stop`` closes it, or when the test process dies however
it dies.  Then it puts the host back (``restore``): the processes noted
(and containerd's shims of this workdir) killed, the cgroups under each
kubelet's cgroup root emptied and removed, every mount under the workdir
unmounted, the network namespaces and links made since removed, each
iptables chain made since deleted with the rules that jump to it (and the
nftables tables iptables-nft made, when they were not there and are now
empty), each sysctl set back, each directory made since removed.  What it
could not put back it writes to ``WORKDIR/host-left.txt``; ``stop``
raises HostLeftChanged with it.

``HostState.read()`` alone is what a test compares before and after.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["DIRECTORIES", "SYSCTLS", "HostGuard", "HostLeftChanged", "HostState", "restore"]

#: the sysctls a kubelet sets when protectKernelDefaults is off, and the
#: host's forwarding, which the pod network leaves as it is (it forwards
#: on its own bridges only: flux_dws.realstack.podnet)
SYSCTLS = ("vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops",
           "net.ipv4.ip_forward")
#: the host directories a kubelet, containerd or CNI write whatever their
#: configuration says (their own roots are in the workdir)
DIRECTORIES = ("/var/lib/kubelet", "/run/containerd", "/run/netns", "/var/lib/cni",
               "/var/log/pods", "/var/log/containers", "/etc/cni", "/opt/cni")
CGROUP_ROOT = Path("/sys/fs/cgroup")
NETNS_DIR = Path("/run/netns")
#: how long the guard waits for what it stops, and stop for the guard
STOP_TIMEOUT = 30.0
BEFORE = "host-before.json"
LEFT = "host-left.txt"
PIDS = "host-pids"
CGROUPS = "host-cgroups"


class HostLeftChanged(RuntimeError):
    """The guard could not put everything back (the message lists what)."""


def _run(argv: list[str]) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout if r.returncode == 0 else ""


def _chains(save: str) -> list[str]:
    """``table/chain`` for each chain of an ``iptables-save`` output."""
    out, table = [], ""
    for line in save.splitlines():
        if line.startswith("*"):
            table = line[1:].strip()
        elif line.startswith(":"):
            out.append(f"{table}/{line[1:].split()[0]}")
    return out


def _rules(save: str) -> list[str]:
    """``table -A ...`` for each rule of an ``iptables-save`` output."""
    out, table = [], ""
    for line in save.splitlines():
        if line.startswith("*"):
            table = line[1:].strip()
        elif line.startswith("-A "):
            out.append(f"{table} {line}")
    return out


@dataclass
class HostState:
    """What of the host a kubelet changes: compared before and after."""

    sysctls: dict[str, str] = field(default_factory=dict)
    iptables: dict[str, list[str]] = field(default_factory=dict)      # tool -> table/chain
    ipt_rules: dict[str, list[str]] = field(default_factory=dict)     # tool -> rules
    nft_tables: list[str] = field(default_factory=list)
    directories: dict[str, list[str] | None] = field(default_factory=dict)  # None: absent
    links: list[str] = field(default_factory=list)

    @classmethod
    def read(cls) -> HostState:
        st = cls()
        for s in SYSCTLS:
            p = Path("/proc/sys") / s.replace(".", "/")
            try:
                st.sysctls[s] = p.read_text().strip()
            except OSError:
                pass
        for tool in ("iptables", "ip6tables"):
            if shutil.which(f"{tool}-save"):
                save = _run([f"{tool}-save"])
                st.iptables[tool] = sorted(_chains(save))
                st.ipt_rules[tool] = sorted(_rules(save))
        if shutil.which("nft"):
            st.nft_tables = sorted(line.strip() for line in _run(["nft", "list", "tables"])
                                   .splitlines() if line.strip())
        for d in DIRECTORIES:
            try:
                st.directories[d] = sorted(os.listdir(d))
            except FileNotFoundError:
                st.directories[d] = None
            except OSError:
                st.directories[d] = []
        st.links = sorted(n for n in os.listdir("/sys/class/net"))
        return st

    def differences(self, other: HostState) -> list[str]:
        """What differs from ``other``, a line each (nothing: the same)."""
        out = []
        for k in sorted(set(self.sysctls) | set(other.sysctls)):
            if self.sysctls.get(k) != other.sysctls.get(k):
                out.append(f"sysctl {k}: {self.sysctls.get(k)} -> {other.sysctls.get(k)}")
        for what, a, b in (("iptables chain", self.iptables, other.iptables),
                           ("iptables rule", self.ipt_rules, other.ipt_rules)):
            for tool in sorted(set(a) | set(b)):
                for c in sorted(set(b.get(tool, [])) - set(a.get(tool, []))):
                    out.append(f"{what} made ({tool}): {c}")
                for c in sorted(set(a.get(tool, [])) - set(b.get(tool, []))):
                    out.append(f"{what} gone ({tool}): {c}")
        for t in sorted(set(other.nft_tables) - set(self.nft_tables)):
            out.append(f"nftables {t} made")
        for d in sorted(set(self.directories) | set(other.directories)):
            x, y = self.directories.get(d), other.directories.get(d)
            if x is None and y is not None:
                out.append(f"directory {d} made")
            elif x is not None and y is not None:
                out += [f"{d}/{e} made" for e in sorted(set(y) - set(x))]
        out += [f"network link {n} made" for n in sorted(set(other.links) - set(self.links))]
        return out


def _mounts_under(root: Path) -> list[str]:
    out: list[str] = []
    prefix = str(root.resolve()).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        mp = line.split()[4].replace("\\040", " ")
        if mp.startswith(prefix) or mp == prefix.rstrip("/"):
            out.append(mp)
    return out


def _kill_and_wait(pids: set[int], timeout: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout / 2
        while pids and time.monotonic() < deadline:
            pids = {p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)}
            time.sleep(0.05)
        if not pids:
            return


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _shims(workdir: Path) -> set[int]:
    """containerd's shims whose containerd listened under workdir."""
    out = set()
    prefix = str(workdir.resolve())
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"containerd-shim-runc-v2") and any(
                a.decode(errors="replace").startswith(prefix) for a in argv):
            out.add(int(p.name))
    return out


def _cgroup_dirs(name: str) -> list[Path]:
    """Every directory of cgroup ``name`` (a kubelet's cgroupRoot) in each
    hierarchy, deepest first."""
    out: list[Path] = []
    if not CGROUP_ROOT.is_dir():
        return out
    for h in CGROUP_ROOT.iterdir():
        top = h / name.strip("/")
        if h.is_symlink() or not top.is_dir():
            continue
        out += [Path(d) for d, _, _ in os.walk(top)]
    return sorted(out, key=lambda p: len(p.parts), reverse=True)


def _empty_cgroups(names: list[str], left: list[str]) -> None:
    procs: set[int] = set()
    for name in names:
        for d in _cgroup_dirs(name):
            try:
                procs |= {int(x) for x in (d / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                pass
    _kill_and_wait(procs, STOP_TIMEOUT)
    for name in names:
        for d in _cgroup_dirs(name):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                left.append(f"cgroup {d} not removed")


def _restore_iptables(before: HostState, now: HostState, left: list[str]) -> None:
    for tool, chains in now.iptables.items():
        made = set(chains) - set(before.iptables.get(tool, []))
        new_rules = set(now.ipt_rules.get(tool, [])) - set(before.ipt_rules.get(tool, []))
        for rule in sorted(new_rules):
            table, spec = rule.split(" ", 1)
            argv = [tool, "-w", "5", "-t", table, "-D", *shlex.split(spec[3:])]
            if subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode:
                left.append(f"{tool} rule not deleted: {rule}")
        for tc in sorted(made):
            table, chain = tc.split("/", 1)
            for op in ("-F", "-X"):
                subprocess.run([tool, "-w", "5", "-t", table, op, chain],
                               capture_output=True, timeout=30, check=False)
    if shutil.which("nft"):
        for t in sorted(set(now.nft_tables) - set(before.nft_tables)):
            family_name = t.split()[1:]
            listing = _run(["nft", "list", *t.split()])
            # only a table holding nothing but empty chains (what
            # iptables-nft leaves once the kubelet's chains are gone)
            if not re.search(r"^\s+(?!chain |type |policy |\}).+$", listing, re.M):
                subprocess.run(["nft", "delete", "table", *family_name],
                               capture_output=True, timeout=30, check=False)


def restore(workdir: Path) -> list[str]:
    """Put the host back as ``WORKDIR/host-before.json`` says it was; what
    could not be put back, a line each (also written to host-left.txt)."""
    before = HostState(**json.loads((workdir / BEFORE).read_text()))
    left: list[str] = []
    pids: set[int] = set()
    try:
        pids = {int(x) for x in (workdir / PIDS).read_text().split()}
    except (OSError, ValueError):
        pass
    # the kubelets first (they would start again what is killed), then
    # the rest, then the shims and what runs in the pods' cgroups
    _kill_and_wait({p for p in pids if Path(f"/proc/{p}").exists()}, STOP_TIMEOUT)
    _kill_and_wait(_shims(workdir), STOP_TIMEOUT)
    try:
        cgroups = (workdir / CGROUPS).read_text().split()
    except OSError:
        cgroups = []
    _empty_cgroups(cgroups, left)
    now = HostState.read()
    # network namespaces made since (containerd's, for the pods), then
    # the links (the bridges; a veth goes with its namespace)
    made_ns = set(now.directories.get(str(NETNS_DIR)) or []) - set(
        before.directories.get(str(NETNS_DIR)) or [])
    for ns in sorted(made_ns):
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=30,
                       check=False)
    for link in sorted(set(now.links) - set(before.links)):
        subprocess.run(["ip", "link", "delete", link], capture_output=True, timeout=30,
                       check=False)
    for mp in sorted(_mounts_under(workdir), key=len, reverse=True):
        if subprocess.run(["umount", "-l", mp], capture_output=True, timeout=30,
                          check=False).returncode:
            left.append(f"mount {mp} not unmounted")
    for d in DIRECTORIES:
        for mp in sorted(_mounts_under(Path(d)), key=len, reverse=True):
            subprocess.run(["umount", "-l", mp], capture_output=True, timeout=30, check=False)
    _restore_iptables(before, now, left)
    for k, v in before.sysctls.items():
        p = Path("/proc/sys") / k.replace(".", "/")
        try:
            if p.read_text().strip() != v:
                p.write_text(v)
        except OSError as exc:
            left.append(f"sysctl {k} not set back to {v}: {exc}")
    for d, entries in before.directories.items():
        if not os.path.lexists(d):
            continue
        if entries is None:
            shutil.rmtree(d, ignore_errors=True)
            continue
        for e in set(os.listdir(d)) - set(entries):
            p = Path(d) / e
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
    left += before.differences(HostState.read())
    (workdir / LEFT).write_text("".join(f"{line}\n" for line in left))
    return left


class HostGuard:
    """The guard process of one workdir (see the module's text)."""

    def __init__(self, workdir: Path, proc: subprocess.Popen[bytes]) -> None:
        self.workdir = workdir
        self.proc = proc

    @classmethod
    def start(cls, workdir: Path, timeout: float = 60.0) -> HostGuard:
        workdir.mkdir(parents=True, exist_ok=True)
        for name in (PIDS, CGROUPS, LEFT):
            (workdir / name).unlink(missing_ok=True)
        env = dict(os.environ)
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        with open(workdir / "hostguard.log", "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "flux_dws.realstack.hostguard",
                                     str(workdir)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=log,
                                    start_new_session=True, env=env)
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else b""
        if line.strip() != b"ready":
            proc.kill()
            proc.wait(5)
            raise HostLeftChanged(f"the host guard did not start within {timeout:g} s: "
                                  f"{(workdir / 'hostguard.log').read_text()[-2000:]}")
        return cls(workdir, proc)

    def note_pid(self, pid: int) -> None:
        """A process the guard stops when it puts the host back."""
        with open(self.workdir / PIDS, "a") as f:
            f.write(f"{pid}\n")

    def note_cgroup(self, name: str) -> None:
        """A cgroup root (a kubelet's) the guard empties and removes."""
        with open(self.workdir / CGROUPS, "a") as f:
            f.write(f"{name}\n")

    def stop(self, timeout: float = 4 * STOP_TIMEOUT) -> None:
        """Put the host back; HostLeftChanged if it is not all back."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                raise HostLeftChanged(f"the host guard did not end within {timeout:g} s "
                                      f"(see {self.workdir / 'hostguard.log'})") from None
        left = (self.workdir / LEFT).read_text().strip() if (self.workdir / LEFT).exists() \
            else "the guard ended without saying what it put back"
        if left:
            raise HostLeftChanged(f"the host is not as it was: {left}")


def _main(argv: list[str]) -> int:
    workdir = Path(argv[1])
    (workdir / BEFORE).write_text(json.dumps(asdict(HostState.read())))
    # killed with the test's session (its terminal gone): still restore
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()   # until the test closes it, or dies
    left = restore(workdir)
    for line in left:
        print(f"hostguard: left: {line}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
