-- Deliveries in flight at once to an endpoint, across every instance: the delegate's
-- `maximumInFlight` (16 unless it says otherwise, at most 64).
ALTER TABLE webhook_endpoints
    ADD COLUMN maximum_in_flight integer NOT NULL DEFAULT 16 CHECK (maximum_in_flight BETWEEN 1 AND 64);
