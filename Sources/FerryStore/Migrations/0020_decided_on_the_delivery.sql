-- Who decided a decision event that was sent ("receiver", or "default" when the reply could not
-- be used or never came) is kept on the event's delivery, whose row recording the attempt
-- writes anyway, instead of on the event. Events are wide (about 900 bytes with a decision's
-- response headers) and their pages full, so setting events.decided_by was a new version of
-- the row with an entry in each of its five indexes: in decisions.sh's data run, 1,982 updates
-- of which 453 fitted on their page, and the costliest part of recording a decision (316 kB of
-- WAL for 16 of them against 42 kB for their deliveries, in EXPLAIN ANALYZE).
-- events.decided_by keeps what is known when the event is written or never sent ("default":
-- nobody subscribed, or nobody was there to ask); it comes first when both are set, as the
-- first decision recorded did before. EventRecord.decidedBySQL reads the two together.
ALTER TABLE webhook_deliveries ADD COLUMN decided_by text;
-- The values events.decided_by allows. NOT VALID: the rows there are all NULL, and validating
-- would read the whole table under this migration's lock; new and updated rows are checked.
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_decided_by_check
    CHECK (decided_by IN ('receiver', 'default')) NOT VALID;
