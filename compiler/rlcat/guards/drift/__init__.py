"""Guards for keys that differ between verl releases (RLC8xx)."""
