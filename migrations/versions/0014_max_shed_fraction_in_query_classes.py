"""max shed fraction in query classes

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 22:40:00.000000

The largest share of its arrivals a class sheds in a control period, whatever its manager
decides. Classes stored before it keep their behaviour: 1, no cap.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("max_shed_fraction", sa.Float(), server_default="1.0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.drop_column("max_shed_fraction")
