"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21 06:38:32.017251
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("spark_master", sa.String(length=200), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("log_path", sa.String(length=500), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_status"), ["status"], unique=False)

    op.create_table(
        "query_classes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("priority", sa.Float(), nullable=False),
        sa.Column("delay_target_s", sa.Float(), nullable=False),
        sa.Column("tau0", sa.Float(), nullable=False),
        sa.Column("tau1", sa.Float(), nullable=False),
        sa.Column("tau2", sa.Float(), nullable=False),
        sa.Column("tau3", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_query_classes")),
        sa.UniqueConstraint("name", name=op.f("uq_query_classes_name")),
    )
    op.create_table(
        "metric_samples",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("class_name", sa.String(length=100), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t", sa.Float(), nullable=False),
        sa.Column("period_s", sa.Float(), nullable=False),
        sa.Column("arrived_count", sa.Integer(), nullable=False),
        sa.Column("output_count", sa.Integer(), nullable=False),
        sa.Column("arrival_rate", sa.Float(), nullable=False),
        sa.Column("response_time_mean_s", sa.Float(), nullable=True),
        sa.Column("response_time_max_s", sa.Float(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_metric_samples_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_samples")),
        sa.UniqueConstraint(
            "job_id", "class_name", "seq", name=op.f("uq_metric_samples_job_id_class_name_seq")
        ),
    )
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.create_index(
            "ix_metric_samples_job_class_t", ["job_id", "class_name", "t"], unique=False
        )
        batch_op.create_index("ix_metric_samples_job_t", ["job_id", "t"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.drop_index("ix_metric_samples_job_t")
        batch_op.drop_index("ix_metric_samples_job_class_t")

    op.drop_table("metric_samples")
    op.drop_table("query_classes")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_status"))

    op.drop_table("jobs")
