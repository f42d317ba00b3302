-- One row less for every delivery answered 2xx. The attempt that delivers a delivery is its
-- last (nothing attempts a delivered delivery until a retry asks), and the delivery's row is
-- written then anyway (status, attempts, last_status_code, last_error, delivered_at): it now
-- holds that attempt's start, duration and excerpt too, instead of a row in webhook_attempts
-- (a heap tuple and an index entry more per delivery, a third of what recording it wrote).
-- webhook_attempts keeps every other attempt: failures, deliveries by the single-attempt path,
-- attempts whose lease was taken over. A retry of a delivered delivery moves the delivering
-- attempt to webhook_attempts before it clears these columns. Nullable without a default: adding
-- them rewrites nothing.
ALTER TABLE webhook_deliveries
    ADD COLUMN delivered_started_at timestamptz,
    ADD COLUMN delivered_duration_ms integer,
    ADD COLUMN delivered_response_excerpt text;
