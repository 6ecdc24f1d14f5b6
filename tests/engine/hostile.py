"""A hostile HTTP/1.1 server on loopback for the transport regression tests (issue 10 §2, §4): raw sockets, one thread
per connection, each request answered by the next *behaviour* of a script (or a default one):

* ``bytes``: sent as they are (a whole raw response, however malformed);
* ``RST``: the request is read, then the connection is closed with a TCP RST (``SO_LINGER`` 0) and no response;
* ``ENDLESS_CHUNKED``: a 200 with a chunked body that never ends (until the client goes away);
* ``ECHO_AUTH``: a 401 whose JSON body echoes the request's ``Authorization`` header;
* ``HANG``: the request is read and never answered (until the server stops);
* ``TRICKLE``: a response that never completes, one byte every :attr:`HostileServer.trickle_s` seconds (a status
  line, then an endless header): every socket read gets data long before any per-read timeout (until the client
  goes away or the server stops);
* a callable ``(request_head: bytes) -> bytes | str``: a response built from the request, or one of the behaviours
  above chosen by it (say, ``HANG`` for a ``POST`` only).

Every request's head is recorded (``heads``; :meth:`HostileServer.wait_for` waits on them), and ``sent_bytes``
counts what the server managed to write.
"""

from __future__ import annotations

import gzip
import json
import socket
import struct
import threading
from collections.abc import Callable, Sequence

RST = "rst"
ENDLESS_CHUNKED = "endless-chunked"
ECHO_AUTH = "echo-auth"
HANG = "hang"
TRICKLE = "trickle"

Behaviour = bytes | str | Callable[[bytes], bytes | str]


def response(status: int, body: bytes | str, headers: Sequence[str] = (), reason: str = "X") -> bytes:
    """A raw response with a ``Content-Length`` body (unless ``headers`` frame it otherwise)."""
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    head = [f"HTTP/1.1 {status} {reason}", *headers]
    if not any(h.lower().startswith(("content-length:", "transfer-encoding:")) for h in headers):
        head.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data


def chat(content: str = "42", usage: str = '{"prompt_tokens": 3, "completion_tokens": 2}') -> bytes:
    """A 200 chat completion whose ``content`` is put in the JSON as given (so it can hold ``\\ud800``)."""
    body = ('{"choices": [{"message": {"role": "assistant", "content": "' + content + '"}, "finish_reason": "stop"}],'
            ' "usage": ' + usage + "}")
    return response(200, body, ["Content-Type: application/json"])


OK = chat("42")


def gzip_bomb(inflated_mb: int) -> bytes:
    """A 200 whose gzip body inflates to ``inflated_mb`` MB of zeros (about 1,000:1)."""
    return response(200, gzip.compress(b"0" * (inflated_mb * 1024 * 1024), 9),
                    ["Content-Type: application/json", "Content-Encoding: gzip"])


class HostileServer:
    def __init__(self, script: Sequence[Behaviour] = (), default: Behaviour = OK,
                 cycle: Sequence[Behaviour] = ()) -> None:
        self.script = list(script)
        self.default = default
        self.cycle = list(cycle)  # after the script, requests are answered by these in turn (else by ``default``)
        self.heads: list[bytes] = []
        self.sent_bytes = 0
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified on each request's head
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.port = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self.trickle_s = 0.02
        self.trickling = threading.Event()  # set once a TRICKLE response has started

    def __enter__(self) -> HostileServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._listener.close()

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.heads)

    def wait_for(self, predicate: Callable[[list[bytes]], bool], timeout_s: float) -> bool:
        """Wait until ``predicate(heads)`` holds (checked on each arrival), at most ``timeout_s``: whether it held."""
        with self._arrived:
            return self._arrived.wait_for(lambda: predicate(self.heads), timeout_s)

    def _next(self, head: bytes) -> Behaviour:
        with self._lock:
            self.heads.append(head)
            self._arrived.notify_all()
            if self.script:
                return self.script.pop(0)
            return self.cycle[len(self.heads) % len(self.cycle)] if self.cycle else self.default

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        try:
            while not self._stopped.is_set():
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                buffer = buffer[length:]
                behaviour = self._next(head)
                if callable(behaviour):
                    behaviour = behaviour(head)
                if behaviour == RST:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                if behaviour == HANG:
                    self._stopped.wait()
                    return
                if behaviour == TRICKLE:
                    self._trickle(conn)
                    return
                if behaviour == ENDLESS_CHUNKED:
                    self._endless(conn)
                    return
                if behaviour == ECHO_AUTH:
                    auth = next((line.split(b":", 1)[1].strip().decode("latin-1") for line in head.split(b"\r\n")
                                 if line.lower().startswith(b"authorization:")), "")
                    body = json.dumps({"error": {"message": f"invalid key in header Authorization: {auth}",
                                                 "headers": {"Authorization": auth}}})
                    behaviour = response(401, body, ["Content-Type: application/json"])
                assert isinstance(behaviour, bytes)
                conn.sendall(behaviour)
                with self._lock:
                    self.sent_bytes += len(behaviour)
        except OSError:
            return
        finally:
            conn.close()

    def _trickle(self, conn: socket.socket) -> None:
        data = b"HTTP/1.1 200 OK\r\nX-Trickle: "
        i = 0
        while not self._stopped.is_set():
            conn.sendall(data[i:i + 1] if i < len(data) else b"a")
            i += 1
            with self._lock:
                self.sent_bytes += 1
            self.trickling.set()
            self._stopped.wait(self.trickle_s)

    def _endless(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        while not self._stopped.is_set():
            conn.sendall(chunk)
            with self._lock:
                self.sent_bytes += len(chunk)
