"""perception service: what each NPC perceives every step, and its spatial memory."""
