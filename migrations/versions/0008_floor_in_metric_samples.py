"""floor in metric samples

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 02:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.add_column(sa.Column("floor_s", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.drop_column("floor_s")
