"""Per-class metric samples pushed by jobs: ingest, storage and queries."""
