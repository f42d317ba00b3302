extension FerryDatabase {
    /// Endpoints and deliveries, as tenants see them.
    public var webhooks: WebhookStore { WebhookStore(pool: pool) }
    /// The event log, as tenants read it.
    public var events: EventLogStore { EventLogStore(pool: pool) }

    /// The webhook dispatcher's side: fan-out, claims and results, decisions.
    public func webhookLedger(instanceID: String) -> WebhookLedger {
        WebhookLedger(pool: pool, instanceID: instanceID)
    }
}
