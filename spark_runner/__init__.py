"""The PySpark streaming job and the pure QoS core it embeds (``spark_runner.core``)."""
