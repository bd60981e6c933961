-- A clock may run until a world time and then stop by itself (headless simulation runs use it).
ALTER TABLE ws_clocks ADD COLUMN until timestamptz;
