-- The index of pending deliveries by due time goes. PostgreSQL estimates the size of a partial
-- index from statistics taken at some earlier moment, and the share of deliveries that are
-- pending swings from none to all within seconds (a backlog builds up, then drains). Believed
-- nearly empty, a whole pass over this index looked cheaper than the look-ups it was never
-- meant for: in webhooks.sh's drain, a slot's "the next deliveries of this stream" and "this
-- candidate by its id" both read every due pending delivery through it (250-660 rows each,
-- 300-440 buffers a statement; a drain of 2,500 deliveries spent most of PostgreSQL's time
-- there). Every query that used it reads all pending deliveries anyway (the claim's heads, the
-- next due time), which the stream index serves as well, in the order the claim wants.
DROP INDEX webhook_deliveries_due;
