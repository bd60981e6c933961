"""world_state service: the world tree, NPC positions and the world clock."""
