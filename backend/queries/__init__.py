"""Continuous queries of a class, declared in the scenario format's operator vocabulary."""
