"""IO: endpoints, sampling, cache, run store, tasks, demo endpoint. Builds on ``relgate_tui.core``."""
