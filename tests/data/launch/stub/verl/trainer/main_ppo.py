"""Stand-in for `python3 -m verl.trainer.main_ppo` (see stub.py)."""

from verl.trainer.stub import main

if __name__ == "__main__":
    main()
