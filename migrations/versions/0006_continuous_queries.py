"""continuous queries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21 07:53:40.946292
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "continuous_queries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("class_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("source", sa.String(length=110), nullable=False),
        sa.Column("operators", sa.JSON(), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["class_id"],
            ["query_classes.id"],
            name=op.f("fk_continuous_queries_class_id_query_classes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_continuous_queries")),
        sa.UniqueConstraint("class_id", "name", name=op.f("uq_continuous_queries_class_id_name")),
    )
    with op.batch_alter_table("continuous_queries", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_continuous_queries_class_id"), ["class_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("continuous_queries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_continuous_queries_class_id"))

    op.drop_table("continuous_queries")
