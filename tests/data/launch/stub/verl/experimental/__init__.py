"""Stand-in subpackage (see verl/__init__.py)."""
