"""npcworld: shared library of the NPC world backend (contracts, event store, messaging, telemetry)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
