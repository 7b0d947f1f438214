"""Bootstrap commands that work on the database directly (before any user exists)."""

from __future__ import annotations

import secrets
import sys

import typer
from pydantic import ValidationError

from backend.db import make_engine, make_session_factory, session_scope
from backend.files import touch_private
from backend.settings import Settings, get_settings
from backend.users import service

INITIAL_PASSWORD_FILE = "initial_admin_password"

users_app = typer.Typer(help="User accounts.", no_args_is_help=True)


@users_app.command("create-admin")
def create_admin(
    username: str = typer.Argument(..., help="Name of the admin account."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from standard input."
    ),
) -> None:
    """Create an admin account (the first one, or another). Prompts for the password."""
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    settings = get_settings()
    factory = make_session_factory(make_engine(settings.sqlalchemy_url))
    try:
        with session_scope(factory) as session:
            _user, created = service.ensure_admin(session, username, password)
    except ValidationError as error:
        # Name the field and the rule, never the value: it may be the password.
        rules = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        typer.echo(f"error: {rules}", err=True)
        raise typer.Exit(2) from error
    if not created:
        typer.echo(f"error: username={username!r} exists already", err=True)
        raise typer.Exit(1)
    typer.echo(f"admin {username!r} created")


def bootstrap_first_admin(settings: Settings) -> str | None:
    """On a database with no user at all, create ``admin`` with a random password written
    to ``<data_dir>/initial_admin_password`` (owner-only). Returns that path, else None."""
    factory = make_session_factory(make_engine(settings.sqlalchemy_url))
    with session_scope(factory) as session:
        if service.has_users(session):
            return None
        password = secrets.token_urlsafe(12)
        service.ensure_admin(session, "admin", password)
    path = touch_private(settings.data_dir / INITIAL_PASSWORD_FILE)
    path.write_text(password + "\n")
    return str(path)
