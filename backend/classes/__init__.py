"""Query classes: name, priority, delay target and utilisation thresholds."""
