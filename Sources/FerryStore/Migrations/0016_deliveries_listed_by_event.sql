-- The tenant's deliveries are listed in event order (GET /v1/webhooks/deliveries: event
-- position, then id), which their tenant index did not hold: it was by creation time, which no
-- statement asks for. Every page read and sorted all the tenant's deliveries (150–220 ms a page
-- with 300,000 of them); in this order a page reads what it shows and its cursor is a range of
-- the index. Still one index, so a delivery costs no more to write.
DROP INDEX webhook_deliveries_tenant;
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id, event_position, id);
