"""RLC9xx: what a pull request could make a launch run that it should not (environment, remote code)."""
