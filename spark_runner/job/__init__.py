"""The Spark adapter: the streaming job process the control plane launches."""
