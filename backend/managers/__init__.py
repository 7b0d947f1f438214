"""The selectable load managers and their parameters (read-only, from the QoS core)."""
