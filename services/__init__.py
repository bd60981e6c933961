"""npcworld services: each a consumer loop, handlers, a repository and a pure domain package."""
