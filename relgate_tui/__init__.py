"""relgate: how far can this language model be trusted on this task?"""

__version__ = "0.1.0"
