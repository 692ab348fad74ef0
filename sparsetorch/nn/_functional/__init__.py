"""Private pieces of nn.functional (re-exported by nn/functional.py)."""
