"""The Dash dashboard: pages over the control-plane API (it never opens the database)."""
