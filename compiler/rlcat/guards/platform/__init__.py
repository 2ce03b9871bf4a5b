"""Guards for platform known issues (RLC5xx)."""
