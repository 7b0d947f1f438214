"""Prometheus exposition: per-class QoS gauges and API request metrics."""
