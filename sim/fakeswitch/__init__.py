"""Fake switch SSH server for tests and the pod-in-a-box (see server.py, cli.py and __main__.py)."""
