"""class hand-offs

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07 17:00:00.000000

A class's hand-offs between running jobs (``backend.handoffs``): the switch instant, the
configuration versions that carry each job's range, the state and the ranges to give
back.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "class_handoffs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_name", sa.String(length=100), nullable=False),
        sa.Column("origin_job_id", sa.Integer(), nullable=False),
        sa.Column("target_job_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("requested_s", sa.Float(), nullable=False),
        sa.Column("switch_s", sa.Float(), nullable=False),
        sa.Column("deadline_s", sa.Float(), nullable=False),
        sa.Column("done_after_s", sa.Float(), nullable=False),
        sa.Column("origin_version", sa.Integer(), nullable=False),
        sa.Column("target_version", sa.Integer(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at_s", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["origin_job_id"],
            ["jobs.id"],
            name=op.f("fk_class_handoffs_origin_job_id_jobs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_job_id"],
            ["jobs.id"],
            name=op.f("fk_class_handoffs_target_job_id_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_class_handoffs")),
    )
    op.create_index("ix_class_handoffs_class_name_state", "class_handoffs", ["class_name", "state"])


def downgrade() -> None:
    op.drop_index("ix_class_handoffs_class_name_state", table_name="class_handoffs")
    op.drop_table("class_handoffs")
