"""control fields in metric samples

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 06:53:48.230920
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.add_column(sa.Column("response_time_p50_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("response_time_p95_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("response_time_p99_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("violation_mean_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("violation_max_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("admitted_count", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("shed_count", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("waiting_count", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("load", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("capacity_share", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("headroom", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("capacity_usage", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("shed_fraction", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("oracle_shed_fraction", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("manager", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("manager_state", sa.String(length=20), nullable=True))
        batch_op.add_column(
            sa.Column("redistributed", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("config_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("metric_samples", schema=None) as batch_op:
        batch_op.drop_column("config_version")
        batch_op.drop_column("redistributed")
        batch_op.drop_column("manager_state")
        batch_op.drop_column("manager")
        batch_op.drop_column("oracle_shed_fraction")
        batch_op.drop_column("shed_fraction")
        batch_op.drop_column("capacity_usage")
        batch_op.drop_column("headroom")
        batch_op.drop_column("capacity_share")
        batch_op.drop_column("load")
        batch_op.drop_column("waiting_count")
        batch_op.drop_column("shed_count")
        batch_op.drop_column("admitted_count")
        batch_op.drop_column("violation_max_s")
        batch_op.drop_column("violation_mean_s")
        batch_op.drop_column("response_time_p99_s")
        batch_op.drop_column("response_time_p95_s")
        batch_op.drop_column("response_time_p50_s")
