"""The key that signs the dashboard's session cookies.

``Settings.secret_key`` when it is set; otherwise a random key generated once and kept
in ``<data_dir>/secret_key`` (owner read/write only, mode 0600), so every dashboard
process on that data directory, and every restart, signs cookies with the same key and
sessions survive a restart. The key is never logged.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from backend.settings import Settings

SECRET_KEY_FILE = "secret_key"
KEY_BYTES = 32
FILE_MODE = 0o600


def secret_key_path(settings: Settings) -> Path:
    return settings.data_dir / SECRET_KEY_FILE


def load_or_create_secret_key(settings: Settings) -> str:
    """``settings.secret_key``, else the kept key, else a new key written to the file.

    Two processes starting at once agree on one key: the new key is written to a
    private temporary file that is then hard-linked into place, so the file appears
    with its content or not at all, and the loser of the race reads the winner's key.
    An existing empty file (left by something else) is replaced; a file readable by
    others is narrowed to 0600 rather than trusted as is.
    """
    if settings.secret_key:
        return settings.secret_key
    path = secret_key_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = _read(path)
    if existing:
        return existing
    key = secrets.token_hex(KEY_BYTES)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    _write_private(temporary, key)
    try:
        os.link(temporary, path)
    except FileExistsError:
        existing = _read(path)
        if existing:
            return existing
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return key


def _read(path: Path) -> str:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return ""
    if mode & 0o077:
        path.chmod(FILE_MODE)
    return path.read_text().strip()


def _write_private(path: Path, key: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w") as file:
        os.fchmod(file.fileno(), FILE_MODE)  # whatever the umask
        file.write(key + "\n")
