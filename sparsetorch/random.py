"""torch.random: seeding and the state of the default generator (see sparsetorch/_generator.py)."""

from ._generator import fork_rng, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]
