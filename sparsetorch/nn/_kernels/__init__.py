"""Compiled (numba) kernels of the nn layers; each module builds its kernels lazily."""
