"""Streaming jobs: launch, watch and stop PySpark processes through Celery."""
