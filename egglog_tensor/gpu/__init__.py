"""GPU targets: names and devices (targets.py), artifacts written ahead of time (artifacts.py)."""
