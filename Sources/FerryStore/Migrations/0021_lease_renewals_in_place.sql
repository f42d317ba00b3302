-- Every heartbeat renews the lease of every running transfer, each second. lease_expires_at was
-- indexed (tasks_leased, for the reaper), so no renewal could update its row in place
-- (heap-only): each wrote a new version of the row with an entry in every index of the table
-- (up to nine), for every transfer, every second. The reaper and the claims read the leased tasks
-- through tasks_leased_hosts (every task with a lease, as many as the transfers running) and
-- compare the expiry there.
-- Half of each page is left free (on pages filled from now on): a task's row is about 2 kB and
-- each renewal needs room for a new version beside the old one until the old one is pruned. In
-- bench/slow-downloads.sh (1,000 transfers), 70 % of updates were then in place, against 53 %
-- with 30 % left free and 38 % with 20 %, and the table came out smaller (2.3 MB against 3.4 MB
-- with 30 %): the versions that do not fit move to new pages and leave the old ones to bloat.
DROP INDEX tasks_leased;
ALTER TABLE tasks SET (fillfactor = 50);
