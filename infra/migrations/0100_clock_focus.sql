-- Level of detail: the places where NPCs run in full detail (ClockChanged.focus); NULL: every NPC in full
-- detail. Each WorldTicked names the NPCs in these places (WorldTicked.detail).
ALTER TABLE ws_clocks ADD COLUMN focus text[];
