"""Declared input streams: their columns and event-time column, read by class queries."""
