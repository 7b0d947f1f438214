"""catch up in query classes

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 10:50:00.000000

Whether a class serves the backlog the log holds at its start instead of shedding first
what is already past its target. Classes stored before it keep their behaviour: false.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("catch_up", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.drop_column("catch_up")
