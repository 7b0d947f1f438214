"""cluster coordinator

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07 10:20:00.000000

The coordinator's state per master and its log of reallocations; a control action's
origin (the job's controller or the coordinator, numbered apart) and the coordinator's
trigger.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cluster_coordinators",
        sa.Column("master", sa.String(length=200), nullable=False),
        sa.Column("allocation", sa.JSON(), nullable=False),
        sa.Column("last_change_s", sa.Float(), nullable=True),
        sa.Column("short_since_s", sa.Float(), nullable=True),
        sa.Column("round_at_s", sa.Float(), nullable=True),
        sa.Column("problem", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("master", name=op.f("pk_cluster_coordinators")),
    )
    op.create_table(
        "cluster_reallocations",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("master", sa.String(length=200), nullable=False),
        sa.Column("at_s", sa.Float(), nullable=False),
        sa.Column("executors", sa.Integer(), nullable=False),
        sa.Column("trigger_job_id", sa.Integer(), nullable=True),
        sa.Column("usage", sa.Float(), nullable=False),
        sa.Column("held_s", sa.Float(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("after", sa.JSON(), nullable=False),
        sa.Column("reports", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["trigger_job_id"],
            ["jobs.id"],
            name=op.f("fk_cluster_reallocations_trigger_job_id_jobs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cluster_reallocations")),
    )
    op.create_index(
        "ix_cluster_reallocations_master_at_s", "cluster_reallocations", ["master", "at_s"]
    )
    with op.batch_alter_table("control_actions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("origin", sa.String(length=12), server_default="job", nullable=False)
        )
        batch_op.add_column(sa.Column("trigger", sa.String(length=200), nullable=True))
        batch_op.drop_constraint("uq_control_actions_job_id_seq", type_="unique")
        batch_op.create_unique_constraint(
            "uq_control_actions_job_id_origin_seq", ["job_id", "origin", "seq"]
        )


def downgrade() -> None:
    # one number per job again: a coordinator's action numbered as one of the job's goes
    op.execute(
        "DELETE FROM control_actions WHERE origin <> 'job' AND EXISTS (SELECT 1 FROM "
        "control_actions AS own WHERE own.job_id = control_actions.job_id "
        "AND own.seq = control_actions.seq AND own.origin = 'job')"
    )
    with op.batch_alter_table("control_actions", schema=None) as batch_op:
        batch_op.drop_constraint("uq_control_actions_job_id_origin_seq", type_="unique")
        batch_op.create_unique_constraint("uq_control_actions_job_id_seq", ["job_id", "seq"])
        batch_op.drop_column("trigger")
        batch_op.drop_column("origin")
    op.drop_index("ix_cluster_reallocations_master_at_s", table_name="cluster_reallocations")
    op.drop_table("cluster_reallocations")
    op.drop_table("cluster_coordinators")
