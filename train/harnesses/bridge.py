"""The one way out of a sandbox's network namespace: a TCP bridge to the model endpoint.

The local sandbox has an empty network namespace (loopback only). :class:`NetnsBridge` opens a
listening socket *inside* that namespace — a short-lived thread ``setns``-es into it, binds
127.0.0.1:0 and exits, so the socket stays in the sandbox's namespace while the rest of the
process stays on the host — and forwards every connection to one host TCP address (the guard
proxy). Sandboxed code sees ``127.0.0.1:PORT`` and nothing else: no other host port, no DNS, no
route. The listening socket belongs to the host process, so nothing in the sandbox can kill
or replace it. Needs root (``CAP_SYS_ADMIN`` for ``setns``); Linux only.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import selectors
import socket
import threading

from trajforge.closing import Closing

log = logging.getLogger(__name__)

CLONE_NEWNET = 0x40000000
CHUNK = 65536
CONNECT_TIMEOUT_S = 10.0


def _listen_in_netns(netns_path: str) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (free port) inside the namespace at ``netns_path``."""
    result: list[socket.socket | BaseException] = []

    def enter_and_listen() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        try:
            fd = os.open(netns_path, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns {netns_path}: {os.strerror(errno)}")
            finally:
                os.close(fd)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sock.listen(64)
            result.append(sock)
        except OSError as exc:
            result.append(exc)

    # The thread ends right after; only it ever lived in the sandbox's namespace.
    thread = threading.Thread(target=enter_and_listen, name="netns-listen")
    thread.start()
    thread.join()
    found = result[0]
    if isinstance(found, BaseException):
        raise found
    return found


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides are done; half-closes are passed on."""
    sel = selectors.DefaultSelector()
    peers = {a: b, b: a}
    for sock in peers:
        sel.register(sock, selectors.EVENT_READ)
    open_reads = 2
    try:
        while open_reads:
            for key, _ in sel.select():
                src: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = src.recv(CHUNK)
                except OSError:
                    data = b""
                if data:
                    peers[src].sendall(data)
                    continue
                sel.unregister(src)
                open_reads -= 1
                with contextlib.suppress(OSError):
                    peers[src].shutdown(socket.SHUT_WR)
    except OSError as exc:
        log.debug("bridge connection ended: %s", exc)
    finally:
        sel.close()
        a.close()
        b.close()


class NetnsBridge(Closing):
    """Listen on 127.0.0.1 inside the network namespace of ``pid``; forward to ``target``."""

    def __init__(self, pid: int, target: tuple[str, int]) -> None:
        self.target = target
        self._sock = _listen_in_netns(f"/proc/{pid}/ns/net")
        self.port: int = self._sock.getsockname()[1]
        """Port to connect to from inside the sandbox (on 127.0.0.1)."""
        self.connections = 0
        """Connections accepted so far."""
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="netns-bridge", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                inside, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                outside = socket.create_connection(self.target, timeout=CONNECT_TIMEOUT_S)
            except OSError as exc:
                log.warning("bridge: cannot reach %s:%d: %s", *self.target, exc)
                inside.close()
                continue
            outside.settimeout(None)
            threading.Thread(target=_pump, args=(inside, outside), daemon=True).start()

    def close(self) -> None:
        """Stop listening (open connections end with their peers)."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(timeout=5)
