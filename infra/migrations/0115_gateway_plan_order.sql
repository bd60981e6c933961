-- The gateway's plan view keeps the newest event that changed the plan and the action in progress (event ids
-- are time-ordered), so a consumer taking an NPC's events lane by lane (a posted perception's reaction after a
-- later tick's decision) ends where a fold in store order does.
ALTER TABLE gw_plans ADD COLUMN plan_by uuid, ADD COLUMN current_by uuid;
