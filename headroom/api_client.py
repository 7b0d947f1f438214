"""The CLI's connection to the API: base URL from settings, token from `headroom auth login`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import typer

from backend.settings import Settings, get_settings

CREDENTIALS = Path.home() / ".config" / "headroom" / "credentials.json"
LOGIN_COMMAND = "headroom auth login"
"""The command that gets a token (``auth_app``'s ``login`` in headroom/api_cli.py)."""


def save_credentials(api_url: str, token: str) -> Path:
    CREDENTIALS.parent.mkdir(parents=True, exist_ok=True)
    CREDENTIALS.touch(mode=0o600)
    CREDENTIALS.write_text(json.dumps({"api_url": api_url, "token": token}))
    return CREDENTIALS


def forget_credentials() -> None:
    CREDENTIALS.unlink(missing_ok=True)


def _stored_token(settings: Settings) -> str:
    if settings.api_token:
        return settings.api_token
    try:
        stored = json.loads(CREDENTIALS.read_text())
    except (OSError, ValueError):
        return ""
    return str(stored.get("token", "")) if stored.get("api_url") == settings.public_api_url else ""


class Api:
    """A logged-in API client; every failure becomes a one-line error and exit code 1."""

    def __init__(self, settings: Settings | None = None, token: str | None = None) -> None:
        self.settings = settings or get_settings()
        token = _stored_token(self.settings) if token is None else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(
            base_url=f"{self.settings.public_api_url}/api/v1", headers=headers, timeout=30
        )

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            typer.echo(
                f"error: cannot reach the API at {self.settings.public_api_url} ({error}); "
                "is it running (`headroom up`), and is HEADROOM_API_URL right?",
                err=True,
            )
            raise typer.Exit(1) from None
        if response.status_code >= 400:
            typer.echo(f"error: HTTP {response.status_code}: {_detail(response)}", err=True)
            if response.status_code == 401:
                typer.echo(f"hint: run `{LOGIN_COMMAND}`", err=True)
            raise typer.Exit(1)
        if response.status_code == 204 or not response.content:
            return None
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        return response.text[:500]
    if isinstance(detail, list):
        return "; ".join(str(item.get("msg", item)) for item in detail)
    return str(detail)
