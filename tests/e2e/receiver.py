"""A real local HTTP server that receives webhook deliveries: fails each event's first N tries, then acks."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)  # type: ignore[no-any-return]


@dataclass
class Receiver:
    """``/ok`` fails the first ``fail_first`` tries of each event id, then answers 200; ``/down`` is 503."""

    fail_first: int = 2
    received: list[Received] = field(default_factory=list)
    tries: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                event_id = self.headers.get("Npcworld-Event-Id", "")
                with receiver.lock:
                    receiver.tries[event_id] += 1
                    ok = self.path == "/ok" and receiver.tries[event_id] > receiver.fail_first
                    status = 200 if ok else (503 if self.path == "/down" else 500)
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body, status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def acked(self, path: str = "/ok") -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path and r.answered == 200]
