"""The control plane: FastAPI service, persistence and Celery orchestration."""
