"""The ``headroom`` command: one entry point over the product's parts."""
