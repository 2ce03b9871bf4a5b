"""Recipe → settings, one module per axis (mode, algorithm, backend, engine) plus the shared parts
(common.py), run in order by steps.lower; and a platform profile's environment and tweaks applied on
top (platform.py).

Nothing is imported here: the guards import `platform.allows`, and a cold `rlcat lint` loads no
recipe model."""
