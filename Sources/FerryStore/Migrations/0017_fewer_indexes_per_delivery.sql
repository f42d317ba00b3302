-- One index entry less for each delivery made and each recorded. Marking a delivery delivered
-- changes its status, so the row gets a new version (not a heap-only update), and every index
-- whose condition the new version meets gets an entry: five, four without this one. Only the
-- deliveries list filtered by task read it, and a task's events lead to its deliveries as well
-- (events_task_sequence, then the deliveries' (event_id, endpoint_id)).
DROP INDEX webhook_deliveries_task;
