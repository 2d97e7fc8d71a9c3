"""Namespace holder of one local sandbox session.

Runs as ``python -I -S _holder.py ROOT UID DISK_MB [EXPOSE...]``: standard library only,
few imports (no json, socket or platform), ready in about 15 ms. As root it creates a private
mount namespace and an empty network namespace (loopback only), builds a new root on a
tmpfs (host directories bound read-only; /root, /home, /tmp, /run hidden; a size-capped
tmpfs for /workspace, HOME and /tmp), pivots into it, prints ``ready`` and then sleeps until
its stdin closes. Commands enter its namespaces with ``nsenter``; when the holder exits the
namespaces and every mount in them disappear, so a crashed host process leaks nothing.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT = 1, 2, 4, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 1, 2, 4
SYS_MOUNT_SETATTR = 442
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine, 155)
AF_INET, SOCK_DGRAM = 2, 2
SIOCSIFFLAGS = 0x8914
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40

HIDDEN = {"proc", "sys", "dev", "tmp", "root", "home", "run", "mnt", "media", "lost+found"}
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")

libc = ctypes.CDLL(None, use_errno=True)


class MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def check(ret: int, what: str) -> None:
    if ret != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str = "") -> None:
    ret = libc.mount(
        src.encode() if src else None,
        dst.encode(),
        fstype.encode() if fstype else None,
        ctypes.c_ulong(flags),
        data.encode() if data else None,
    )
    check(ret, f"mount {src} on {dst}")


def make_readonly(path: str) -> None:
    """Recursively read-only, nosuid, nodev (mount_setattr); plain remount on old kernels."""
    attr = MountAttr(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, 0, 0)
    ret = libc.syscall(
        SYS_MOUNT_SETATTR,
        AT_FDCWD,
        path.encode(),
        AT_RECURSIVE,
        ctypes.byref(attr),
        ctypes.sizeof(attr),
    )
    if ret != 0:
        mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def bind(src: str, dst: str, readonly: bool = True) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    elif not os.path.exists(dst):
        open(dst, "w").close()
    mount(src, dst, None, MS_BIND | MS_REC)
    if readonly:
        make_readonly(dst)


def loopback_up() -> None:
    fd = libc.socket(AF_INET, SOCK_DGRAM, 0)
    if fd < 0:
        check(-1, "socket")
    try:
        flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        fcntl.ioctl(fd, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags))
    finally:
        os.close(fd)


def build_disk(root: str, size_mb: int, uid: int) -> str:
    disk = root + "/.disk"
    os.mkdir(disk)
    mount("tmpfs", disk, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=755")
    for name in ("workspace", "home", "tmp", "shm"):
        os.mkdir(f"{disk}/{name}", 0o700)
        os.chown(f"{disk}/{name}", uid, uid)
    return disk


def build_tree(root: str, disk: str) -> None:
    for name in sorted(os.listdir("/")):
        host = "/" + name
        if name in HIDDEN or name.startswith("."):
            continue
        if os.path.islink(host):
            os.symlink(os.readlink(host), f"{root}/{name}")
        elif os.path.isdir(host):
            bind(host, f"{root}/{name}")
    if os.path.isdir("/sys"):
        bind("/sys", root + "/sys")
    for name in ("proc", "mnt", "media", "run"):
        os.makedirs(f"{root}/{name}", exist_ok=True)
    for name in ("root", "home"):
        os.mkdir(f"{root}/{name}", 0o755)
        mount("tmpfs", f"{root}/{name}", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    bind(disk + "/workspace", root + "/workspace", readonly=False)
    bind(disk + "/home", root + "/home/sandbox", readonly=False)
    bind(disk + "/tmp", root + "/tmp", readonly=False)
    if os.path.isdir(root + "/var/tmp"):
        mount(disk + "/tmp", root + "/var/tmp", None, MS_BIND)


def build_dev(root: str, disk: str) -> None:
    dev = root + "/dev"
    os.mkdir(dev, 0o755)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID, "size=64k,mode=755")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            bind("/dev/" + name, f"{dev}/{name}", readonly=False)
    for index, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{index}", f"{dev}/{name}")
    os.symlink("/proc/self/fd", dev + "/fd")
    bind(disk + "/shm", dev + "/shm", readonly=False)


def expose(root: str, paths: list[str]) -> None:
    """Bind host paths that live under a hidden directory (the interpreter) back, read-only.

    A path under /tmp (a virtual environment made there, say) is bound over an empty folder
    of the sandbox's own /tmp, which stays writable around it; /tmp itself, and anything
    under /proc, /sys and /dev, is never exposed.
    """
    for path in paths:
        top, _, rest = path.strip("/").partition("/")
        if top == "tmp" and not rest:
            continue
        if top in HIDDEN - {"proc", "sys", "dev"} and os.path.isdir(path):
            bind(path, root + path)


def write_identity(root: str, uid: int) -> None:
    """/etc/passwd and /etc/group with a ``sandbox`` entry for the sandbox uid."""
    for name, line in (
        ("passwd", f"sandbox:x:{uid}:{uid}:sandbox:/home/sandbox:/bin/sh\n"),
        ("group", f"sandbox:x:{uid}:\n"),
    ):
        try:
            with open("/etc/" + name) as fh:
                text = fh.read()
        except OSError:
            text = ""
        copy = f"{root}/.{name}"
        with open(copy, "w") as fh:
            fh.write(text + ("" if text.endswith("\n") or not text else "\n") + line)
        os.chmod(copy, 0o644)
        if os.path.exists(f"{root}/etc/{name}"):
            mount(copy, f"{root}/etc/{name}", None, MS_BIND)
            make_readonly(f"{root}/etc/{name}")


def pivot(root: str) -> None:
    os.mkdir(root + "/.oldroot")
    check(libc.syscall(SYS_PIVOT_ROOT, root.encode(), (root + "/.oldroot").encode()), "pivot_root")
    os.chdir("/")
    check(libc.umount2(b"/.oldroot", MNT_DETACH), "umount old root")
    os.rmdir("/.oldroot")
    check(libc.umount2(b"/.disk", MNT_DETACH), "umount staging disk")
    os.rmdir("/.disk")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)


def setup(root: str, uid: int, disk_mb: int, paths: list[str]) -> None:
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET), "unshare")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    loopback_up()
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
    disk = build_disk(root, disk_mb, uid)
    build_tree(root, disk)
    build_dev(root, disk)
    expose(root, paths)
    write_identity(root, uid)
    pivot(root)
    os.chdir("/workspace")


def main() -> int:
    try:
        root, uid, disk_mb, *paths = sys.argv[1:]
        setup(root, int(uid), int(disk_mb), paths)
    except (OSError, ValueError, KeyError, IndexError) as exc:
        sys.stdout.write(f"error: {exc}\n")
        sys.stdout.flush()
        return 1
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
