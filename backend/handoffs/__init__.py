"""A class's hand-off between two running jobs (UniMiCo's migration without state moved)."""
