"""Guards for configuration invariants verl checks late or not at all (RLC7xx)."""
