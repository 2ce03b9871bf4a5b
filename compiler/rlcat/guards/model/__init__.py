"""Guards for model known issues (RLC6xx)."""
