"""Elastic capacity: what a job's ``control.elastic`` accepts, described by the core."""
