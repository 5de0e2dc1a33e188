"""How a write that Spark commits in a Python worker runs in the driver's own Python process.

Spark runs a Python data source's ``commit`` in a worker its JVM forks on the driver host, with no
SparkSession. The write belongs where the user's session is: in the Python process that
registered the source, with that session, its storage settings, its in-process table locks and its
logging. So that process serves writes on a Unix socket in a folder only its user can open, and
``commit`` sends it the write and waits for the answer. The writer carries only the socket's path
(it also travels to the executors): no py4j gateway secret leaves the driver.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import socket
import socketserver
import struct
import tempfile
import threading
from typing import Any, Callable

from .. import errors
from ..errors import HoodieError

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">Q")       # each message: its length, then that much JSON


class WriteServer:
    """Runs ``handle(request)`` for every request sent to :attr:`address`, each on a daemon thread
    of its own, so writes from several threads run side by side as ``api.write`` calls would."""

    def __init__(self, handle: Callable[[dict], Any]):
        folder = tempfile.mkdtemp(prefix="hudi-writes-")     # mode 0700: no other user can connect
        self.address = os.path.join(folder, "socket")
        server = _Server(self.address, _Request)
        server.work = handle
        threading.Thread(target=server.serve_forever, name="hudi-dataframe-writes", daemon=True).start()
        atexit.register(_remove, folder, os.getpid())


def check_reachable(address: str) -> None:
    """Fail now, before any row is staged, when no process serves ``address`` from here."""
    _connect(address).close()


def call(address: str, request: dict) -> Any:
    """Worker side: the result of ``request`` run by the process serving ``address``; its failure
    raised here, as the engine's error class when it was one."""
    with _connect(address) as sock:
        _send(sock, request)
        reply = _receive(sock)
    if reply is None:
        raise HoodieError("the driver's Python process ended before the write did; check the table's timeline")
    if "error" in reply:
        raise _rebuilt(reply["error"])
    return reply["result"]


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    work: Callable[[dict], Any]


class _Request(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        request = _receive(self.request)
        if request is None:
            return
        try:
            reply = {"result": self.server.work(request)}
        except Exception as e:      # the worker raises it; the traceback stays in this log
            log.debug('df.write.format("hudi") failed', exc_info=True)
            reply = {"error": {"type": type(e).__name__, "message": str(e)}}
        _send(self.request, reply)


def _connect(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except OSError as e:
        sock.close()
        raise HoodieError(
            'df.write.format("hudi") runs its write in the Python process that called '
            f"hudi_engine.spark.register(spark), and none answers at {address!r} ({e.strerror}): call "
            "register(spark) in the session that writes, from a Python driver on the Spark driver's host"
        ) from None
    return sock


def _rebuilt(error: dict) -> Exception:
    kind = getattr(errors, error["type"], None)
    if isinstance(kind, type) and issubclass(kind, HoodieError):
        return kind(error["message"])
    return HoodieError(f"{error['type']}: {error['message']}")


def _send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    sock.sendall(_HEADER.pack(len(data)) + data)


def _receive(sock: socket.socket) -> dict | None:
    """The next message; None when the peer closed the connection before sending one."""
    header = _read(sock, _HEADER.size)
    if header is None:
        return None
    body = _read(sock, _HEADER.unpack(header)[0])
    return None if body is None else json.loads(body)


def _read(sock: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:        # not in a forked child that exits
        shutil.rmtree(folder, ignore_errors=True)
