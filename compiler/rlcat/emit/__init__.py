"""Output formats and Hydra value rendering."""
