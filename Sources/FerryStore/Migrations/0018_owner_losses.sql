-- How many times a task was released because its owner stopped while running it (a crash, a
-- kill, a hang, a lost database connection: its lease lapsed). A background session's task is
-- then taken up again, by another instance or the next start; a transfer that crashes the
-- process each time it runs was taken up, and crashed its instance, for ever. The reaper ends it
-- instead the third time its owner stops (TransferLedger.ownerLossesTolerated).
ALTER TABLE tasks ADD COLUMN owner_losses integer NOT NULL DEFAULT 0;
