"""The Textual application. Builds on ``relgate_tui.engine`` and ``relgate_tui.core``."""
