"""Stand-in for `python3 -m verl.experimental.fully_async_policy.fully_async_main`: the same
recording driver as the main_ppo stand-in (verl's fully_async_main also ends in run_ppo)."""

from verl.trainer.stub import main

if __name__ == "__main__":
    main()
