"""Live tuning: versioned configuration changes delivered to running jobs, audited."""
