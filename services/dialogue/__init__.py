"""The dialogue service: NPC-to-NPC conversations, player chat, interviews, inner voice and relationships."""
