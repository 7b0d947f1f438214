"""Run history: per-class QoS and QoD summaries of a run, and two runs side by side."""
