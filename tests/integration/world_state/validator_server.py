"""A real local HTTP validator for tests: answers by the decided action's first word, records each call."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Call:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)  # type: ignore[no-any-return]


@dataclass
class ValidatorServer:
    """``dig…``: veto; ``burn…``: replace with sweeping ``home``; ``teleport…``: replace at a place no
    world has; ``wait…``: no answer until ``stop``; ``garble…``: 200 with no JSON; ``crash…``: 500; else
    accept."""

    home: str = ""
    calls: list[Call] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/check"

    def answer(self, description: str) -> tuple[int, bytes]:
        verb = description.split()[0].lower()
        replies: dict[str, Any] = {
            "dig": {"verdict": "veto", "reason": "the mine collapsed in 1891"},
            "burn": {"verdict": "replace", "reason": "no arson",
                     "action": {"description": "sweep the floor", "location_path": self.home}},
            "teleport": {"verdict": "replace", "action": {"description": "fly", "location_path": "x:Moon:c"}},
        }
        if verb == "wait":
            self.release.wait(30)
        if verb == "garble":
            return 200, b"sure, why not"
        if verb == "crash":
            return 500, b""
        return 200, json.dumps(replies.get(verb, {"verdict": "accept"})).encode()

    def start(self) -> ValidatorServer:
        validator = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                validator.calls.append(Call(dict(self.headers.items()), body))
                status, answer = validator.answer(json.loads(body)["action"]["description"])
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:  # the caller gave up waiting (its deadline) and closed the connection
                    pass

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
