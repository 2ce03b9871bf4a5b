"""Maintainer tools: fetch verl release trees, compose them with Hydra, build the key index, export
the JSON Schemas, fetch the wheelhouse for the offline pre-commit test. Not on any user command path
but `rlcat dev`."""
