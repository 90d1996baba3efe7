"""reviewer: a read-only AI code-review bot."""

__version__ = "0.1.0"
