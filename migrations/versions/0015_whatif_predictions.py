"""what-if predictions

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 02:10:00.000000

The tuning review's predictions, kept to be checked against what the change then did.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "whatif_predictions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "job_id", sa.Integer(), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=200), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("window_s", sa.Float(), nullable=False),
        sa.Column("predicted", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("errors", sa.JSON(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_whatif_predictions_job_id", "whatif_predictions", ["job_id"])
    op.create_index("ix_whatif_predictions_kind", "whatif_predictions", ["kind"])


def downgrade() -> None:
    op.drop_index("ix_whatif_predictions_kind", table_name="whatif_predictions")
    op.drop_index("ix_whatif_predictions_job_id", table_name="whatif_predictions")
    op.drop_table("whatif_predictions")
