-- Room on each page for heap-only (HOT) updates. A delivery is leased, re-leased and
-- recorded in place several times, and a decision event gets `decided_by` after it is
-- written; on full pages each such update wrote a new entry in every index of the table
-- (eight for deliveries, six for events) although none of those columns is indexed.
-- Applies to pages filled from now on.
ALTER TABLE webhook_deliveries SET (fillfactor = 70);
ALTER TABLE events SET (fillfactor = 90);
