"""rlcat: typed verl RL recipes compiled into validated launch plans."""

__version__ = "0.1.0"
