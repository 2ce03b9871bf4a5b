"""verl's own start-up checks, asked in a subprocess: `--verl-native` of validate, lint and compile
(`checks`, `plans`, `scripts`, the stand-in model `models`) and the verl oracle of `rlcat dev`
(`rlcat.dev.verl_oracle`), through one runner (`runner.py`, run by path; `process.py` drives it)."""
