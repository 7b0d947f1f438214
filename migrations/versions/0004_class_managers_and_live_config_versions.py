"""class managers and live config versions

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21 07:01:01.394137
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "job_config_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
            name=op.f("fk_job_config_versions_job_id_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_config_versions")),
        sa.UniqueConstraint(
            "job_id", "version", name=op.f("uq_job_config_versions_job_id_version")
        ),
    )
    with op.batch_alter_table("job_config_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_job_config_versions_job_id"), ["job_id"], unique=False)

    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("manager", sa.String(length=20), server_default="aloma", nullable=False)
        )
        batch_op.add_column(
            sa.Column("manager_params", sa.JSON(), server_default="{}", nullable=False)
        )
        batch_op.add_column(
            sa.Column("reserve_fraction", sa.Float(), server_default="0.05", nullable=False)
        )
        batch_op.add_column(
            sa.Column("max_lend_fraction", sa.Float(), server_default="1.0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.drop_column("max_lend_fraction")
        batch_op.drop_column("reserve_fraction")
        batch_op.drop_column("manager_params")
        batch_op.drop_column("manager")

    with op.batch_alter_table("job_config_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_config_versions_job_id"))

    op.drop_table("job_config_versions")
