"""`rlcat launch`: one compiled plan taken to a running job, through one target per way verl users
launch (a local script, a Ray job, a Slurm batch script, a SkyPilot task, a KubeRay RayJob).

Every target starts the same argv and the same env (`command.py`); the checks a target runs before
anything starts are in `checks.py`; `targets.py` is the registry the command line offers.
"""
