"""A stand-in for the verl package, for the launch tests only (tests/e2e/test_launch_ray.py puts
this folder on the Ray cluster's PYTHONPATH). It is not verl: it records what a launch delivered
and behaves like verl's run_ppo towards Ray, nothing more."""
