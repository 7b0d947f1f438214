"""usernames unique regardless of case

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 09:00:00.000000

A unique index on ``lower(username)``. Accounts whose names differ only in case (``ADMIN``
and ``admin``) are not merged, renamed or dropped here: which one is the person's is the
operator's call, and a merge would hand one person's tokens and role to the other. The
upgrade stops instead, listing every such group, and changes nothing.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "uq_users_lower_username"


class UsernameClash(RuntimeError):
    """Existing usernames that differ only in case; the index cannot be created."""


def clashes(connection: sa.Connection) -> list[list[str]]:
    """Groups of existing usernames that are equal regardless of case, each sorted."""
    rows = connection.execute(
        sa.text(
            "SELECT lower(username), username FROM users WHERE lower(username) IN ("
            "SELECT lower(username) FROM users GROUP BY lower(username) HAVING count(*) > 1"
            ") ORDER BY lower(username), username"
        )
    )
    groups: dict[str, list[str]] = {}
    for folded, name in rows:
        groups.setdefault(folded, []).append(name)
    return list(groups.values())


def upgrade() -> None:
    groups = clashes(op.get_bind())
    if groups:
        listed = "; ".join(", ".join(repr(name) for name in group) for group in groups)
        raise UsernameClash(
            "usernames must now be unique regardless of case, and these accounts differ "
            f"only in case: {listed}. Nothing was changed: rename or delete all but one "
            "account of each group (e.g. UPDATE users SET username = 'admin-2' WHERE "
            "username = 'ADMIN'), then upgrade again."
        )
    op.create_index(INDEX, "users", [sa.text("lower(username)")], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, table_name="users")
