"""`python -m rlcat ...` runs the same console script as `rlcat ...`."""

from rlcat.cli import run

run()
