"""`python -m rlcat ...` runs the same console script as `rlcat ...`."""

from .entry import run

run()
