"""warm-up in metric samples

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 09:00:00.000000

Whether a sample's period is a warm-up one (its tuples waited through the job's first
Spark batch). Samples stored before it were not marked: they read as ordinary periods.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("warmup", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.drop_column("warmup")
