"""control actions, and the pool in metric samples

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 16:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "control_actions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at_s", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("class_name", sa.String(length=100), nullable=True),
        sa.Column("usage", sa.Float(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("held_s", sa.Float(), nullable=True),
        sa.Column("manager_state", sa.String(length=20), nullable=True),
        sa.Column("executors_before", sa.Integer(), nullable=True),
        sa.Column("executors_after", sa.Integer(), nullable=True),
        sa.Column("shed_before", sa.Float(), nullable=False),
        sa.Column("shed_after", sa.Float(), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_control_actions_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_control_actions")),
        sa.UniqueConstraint("job_id", "seq", name=op.f("uq_control_actions_job_id_seq")),
    )
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.add_column(sa.Column("executors", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("executors_requested", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("job_usage", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.drop_column("job_usage")
        batch_op.drop_column("executors_requested")
        batch_op.drop_column("executors")
    op.drop_table("control_actions")
