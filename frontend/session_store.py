"""Server-side records of the dashboard's signed-in sessions.

The browser's cookie holds only a random session id (256 bits, signed by Flask); the
API token, username and role stay on the server, in one JSON file per session under
``<data_dir>/dashboard_sessions`` (directory 0700, files 0600). A file is named by the
SHA-256 of the session id, so the directory listing gives away no usable id. Every
dashboard process on the data directory (and every restart) sees the same sessions;
a logout deletes the file, so a copied cookie is worthless afterwards. A record older
than ``max_age_s`` (the API token's lifetime: its token is dead by then) counts as gone,
and each new sign-in deletes such records, so sessions never signed out do not pile up.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

STORE_DIR = "dashboard_sessions"
DIR_MODE = 0o700
FILE_MODE = 0o600
ID_BYTES = 32


def new_session_id() -> str:
    return secrets.token_urlsafe(ID_BYTES)


class SessionStore:
    """``save``/``load``/``delete`` a session's record by its id (an opaque string)."""

    def __init__(self, directory: Path, max_age_s: float) -> None:
        self.directory = directory
        self.max_age_s = max_age_s

    @classmethod
    def under(cls, data_dir: Path, max_age_s: float) -> SessionStore:
        return cls(data_dir / STORE_DIR, max_age_s)

    def _path(self, session_id: str) -> Path:
        return self.directory / hashlib.sha256(session_id.encode()).hexdigest()

    def save(self, session_id: str, record: dict[str, Any]) -> None:
        """Write the record whole (a reader sees the old one or the new one)."""
        self.directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        os.chmod(self.directory, DIR_MODE)  # whatever the umask or an older directory
        path = self._path(session_id)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w") as file:
            os.fchmod(file.fileno(), FILE_MODE)
            json.dump(record, file)
        os.replace(temporary, path)

    def load(self, session_id: str) -> dict[str, Any] | None:
        path = self._path(session_id)
        try:
            if self._expired(path.stat().st_mtime):
                return None
            data = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def prune(self) -> None:
        """Delete the records older than ``max_age_s``."""
        try:
            paths = list(self.directory.iterdir())
        except FileNotFoundError:
            return
        for path in paths:
            try:
                if self._expired(path.stat().st_mtime):
                    path.unlink(missing_ok=True)
            except FileNotFoundError:
                continue  # another process pruned it meanwhile

    def _expired(self, mtime: float) -> bool:
        return time.time() - mtime > self.max_age_s

    def delete(self, session_id: str) -> None:
        self._path(session_id).unlink(missing_ok=True)
