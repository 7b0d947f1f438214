"""The password rules an account's new password must pass (login never applies them).

At least ``MIN_LENGTH`` characters, and not one of the common passwords in
``common_passwords.txt`` (package data; where it comes from is said at its top), compared
case-insensitively: "Password1" is as guessable as "password1".
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

MIN_LENGTH = 8
COMMON_PASSWORDS_FILE = "common_passwords.txt"


@cache
def common_passwords() -> frozenset[str]:
    """The list, casefolded; read once per process."""
    text = files(__package__ or "backend.users").joinpath(COMMON_PASSWORDS_FILE).read_text()
    lines = (line.strip() for line in text.splitlines())
    return frozenset(line.casefold() for line in lines if line and not line.startswith("#"))


def check_not_common(password: str) -> str:
    """``password`` unchanged, or ``ValueError`` naming the rule (never the value)."""
    if password.casefold() in common_passwords():
        raise ValueError(
            "the password is on the list of the most common passwords, which attackers "
            "try first: choose a less common one"
        )
    return password
