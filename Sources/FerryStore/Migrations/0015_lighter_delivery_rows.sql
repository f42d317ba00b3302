-- Less to write for every delivery and every attempt.
--
-- The foreign keys of the two tables go. Each was checked by a
-- trigger per inserted row that looked the referenced row up and locked it (FOR KEY SHARE):
-- three per delivery (its tenant, endpoint and event) and one per attempt (its delivery). In
-- a batch of 5,000 deliveries the checks took 70 ms of the insert's 174 ms, and the 5,000
-- attempts' 25 ms of 42. The locks also wrote to the rows they locked: every event as its
-- delivery was made, the one endpoint row that every delivery of a busy endpoint shares.
-- What they guarded still holds: deliveries are made only by the fan-out and by a decision's
-- claim, each from events and active endpoints it has just read in the same statement;
-- attempts only for deliveries the recorder holds or held a lease on; and Ferry deletes none of
-- these rows, nor tenants, endpoints or events.
ALTER TABLE webhook_deliveries
    DROP CONSTRAINT webhook_deliveries_tenant_id_fkey,
    DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey,
    DROP CONSTRAINT webhook_deliveries_event_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;

-- An attempt is only ever read by its delivery (the newest first), so its own id needs no
-- index of its own: the primary key becomes the delivery's index, one index per attempt
-- instead of two.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey;
DROP INDEX webhook_attempts_delivery;
ALTER TABLE webhook_attempts ADD PRIMARY KEY (delivery_id, id);
