# One image for the API, the Celery worker (which launches Spark drivers), the dashboard
# and the Spark standalone master/worker, so every Spark process has the same pyspark
# and the same headroom package (the Python data source runs inside executors).
FROM python:3.11-slim-bookworm

RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps curl \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY backend ./backend
COPY frontend ./frontend
COPY spark_runner ./spark_runner
COPY headroom ./headroom
COPY migrations ./migrations
COPY scenarios ./scenarios
RUN pip install --no-cache-dir -e .

ENV HEADROOM_DATA_DIR=/data PYTHONUNBUFFERED=1
VOLUME /data
EXPOSE 8000 8050
CMD ["headroom", "up"]
