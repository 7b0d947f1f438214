"""The log the sources read and the headroom source that reads it with admission and
shedding."""
