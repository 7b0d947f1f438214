"""The embedded broker: kombu's file-system transport with atomic message files.

kombu writes a message file in place, and a consumer on another process may move and
read it before the producer has written its bytes (seen here under load: an empty read,
a JSONDecodeError, and the worker died). This channel writes each message to a hidden
staging folder and renames it into the queue folder, so a consumer only ever sees
complete files.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

STAGING = ".staging"  # kombu skips names whose part after the first "." is not <queue>.msg


class AtomicChannel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        staging = os.path.join(self.data_folder_out, STAGING)
        os.makedirs(staging, exist_ok=True)
        staged = os.path.join(staging, name)
        try:
            with open(staged, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(staged, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc


class AtomicFilesystemTransport(filesystem.Transport):
    Channel = AtomicChannel
