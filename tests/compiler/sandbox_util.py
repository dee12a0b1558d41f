"""Helpers for the real-bwrap security tests: a host-side box, a CLI runner, spies.

Everything lives under /var/tmp (not /tmp: the sandbox's /tmp is private, so a
"secret" under the host's /tmp would be hidden for the wrong reason), in a
directory owned by the user running the tests (root or the unprivileged user).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

SECRET_FILE = "RF-FILE-SECRET-7f3a9c"
SECRET_ENV = "RF-ENV-SECRET-51b2e8"
SECRET_DOTENV = "RF-DOTENV-SECRET-c04d11"
CLI = [sys.executable, "-m", "ringfence"]
# The interpreter for commands *inside* a sandbox: the real binary, not the venv's
# entry point. A checkout (and its .venv) under /tmp is invisible in there, since
# every sandbox gets a private /tmp.
INNER_PY = os.path.realpath(sys.executable)


@dataclass
class Box:
    root: Path
    ws: Path
    home: Path
    outside: Path
    state: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(self.home),
            "RINGFENCE_HOME": str(self.state),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "LANG": "C.UTF-8",
            # planted credentials in the parent environment
            "AWS_SECRET_ACCESS_KEY": SECRET_ENV,
            "GITHUB_TOKEN": SECRET_ENV,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env.update(extra)
        return env

    def run(self, profile: str, *args: str, env: dict | None = None, timeout: float = 60,
            workspace: Path | None = None) -> subprocess.CompletedProcess:
        cmd = [*CLI, "run", "-p", profile, "-w", str(workspace or self.ws), *args]
        return subprocess.run(cmd, cwd=self.ws, env=env or self.env(), capture_output=True,
                              text=True, timeout=timeout)

    def stages(self) -> list[str]:
        """Stage dirs left in ringfence's state (kept only while changes are held)."""
        sdir = self.state / "stage"
        return sorted(os.listdir(sdir)) if sdir.is_dir() else []


def make_box(base: str = "/var/tmp") -> Box:
    root = Path(tempfile.mkdtemp(prefix=f"rf-sec-{os.getuid()}-", dir=base))
    os.chmod(root, 0o755)
    ws, home, outside, state = (root / n for n in ("ws", "home", "outside", "state"))
    for d in (ws, home, outside, state):
        d.mkdir()
    (outside / "file.txt").write_text("original outside\n")
    (home / ".bashrc").write_text("# original bashrc\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SECRET_FILE + "\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\nkey={SECRET_FILE}\n")
    (home / ".netrc").write_text(f"machine x password {SECRET_FILE}\n")
    git = shutil.which("git")
    if git:
        subprocess.run([git, "init", "-q", str(ws)], check=True,
                       env={"PATH": os.environ.get("PATH", ""), "HOME": str(home)})
    else:  # pragma: no cover - git is installed in CI
        (ws / ".git" / "hooks").mkdir(parents=True)
        (ws / ".git" / "config").write_text("[core]\n")
    (ws / "README").write_text("hello\n")
    (ws / ".env").write_text(f"TOKEN={SECRET_DOTENV}\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".env.local").write_text(f"TOKEN={SECRET_DOTENV}\n")
    (ws / "server.pem").write_text(SECRET_DOTENV + "\n")
    (ws / "link-out").symlink_to(outside / "file.txt")
    return box_from(root)


def box_from(root: Path) -> Box:
    return Box(root, root / "ws", root / "home", root / "outside", root / "state")


class TcpSpy:
    """A loopback listener on the host that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted: list = []
        self._stop = False
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self) -> None:
        while not self._stop:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                return
            self.accepted.append(addr)
            conn.close()

    def close(self) -> None:
        self._stop = True
        try:
            # wake accept() with one last local connection that we do not count
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class UnixSpy(TcpSpy):
    def __init__(self, path: str) -> None:  # noqa: D401 - same loop, Unix socket
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        if not path.startswith("\0"):      # abstract names have no file mode
            os.chmod(path, 0o777)
        self.sock.listen(16)
        self.path = path
        self.accepted = []
        self._stop = False
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()


def host_pids_with(token: str) -> list[int]:
    """Host pids whose command line contains ``token``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if token.encode() in fh.read():
                    out.append(int(name))
        except OSError:
            continue
    return out
