"""The verl key index: generation, lookup, checking and Hydra composition."""
