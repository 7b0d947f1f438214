"""HTTP wiring shared by the domain routers."""
