"""Stored workloads in the scenario YAML format: validate, store, import, export."""
