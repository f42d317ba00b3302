import FerryCore
import Foundation
import Postgres

/// An attempt the receiver answered 2xx, to be recorded with others in one statement.
public struct DeliveredAttempt: Sendable {
    public var deliveryID: String
    /// The session of its event (`session.didFinishEvents` is checked once it is written).
    public var sessionID: String
    /// Fences the result, as in `WebhookLedger.record`.
    public var leaseToken: Int64
    public var startedAt: Date
    public var duration: Duration
    public var statusCode: Int
    /// A decision's reply Ferry could not use (the default applied), though it was answered 2xx.
    public var error: String?
    public var responseExcerpt: String?
    /// For decisions: who decided ("receiver", or "default" when the reply was not usable).
    public var decidedBy: String?

    public init(
        deliveryID: String, sessionID: String, leaseToken: Int64, startedAt: Date, duration: Duration, statusCode: Int,
        error: String?, responseExcerpt: String?, decidedBy: String? = nil
    ) {
        self.deliveryID = deliveryID
        self.sessionID = sessionID
        self.leaseToken = leaseToken
        self.startedAt = startedAt
        self.duration = duration
        self.statusCode = statusCode
        self.error = error
        self.responseExcerpt = responseExcerpt
        self.decidedBy = decidedBy
    }
}

extension WebhookLedger {
    /// Records attempts answered 2xx, any number in one statement: each delivery delivered, the
    /// attempt kept on the delivery's row (only while this instance still holds the lease it
    /// claimed with), its endpoint no longer failing, and who decided a decision. What `record` does for
    /// one attempt, without the endpoint's failure history, which a 2xx does not need. Returns the
    /// deliveries whose lease was still held; the others were taken over, and their attempt gets
    /// a row in webhook_attempts, as a failure's does (migration 0019).
    public func recordDelivered(_ attempts: [DeliveredAttempt]) async throws -> Set<String> {
        guard !attempts.isEmpty else { return [] }
        let parameters: [any PostgresBindable] = [
            attempts.map(\.deliveryID), attempts.map(\.leaseToken),
            attempts.map { Int64(($0.startedAt.timeIntervalSince1970 * 1_000_000).rounded()) },
            attempts.map(\.duration.wholeMilliseconds),
            attempts.map { Int64($0.statusCode) }, attempts.map(\.error), attempts.map(\.responseExcerpt),
            attempts.map(\.decidedBy), instanceID,
        ]
        // One statement, so atomic by itself: autocommit saves a transaction's BEGIN and COMMIT,
        // two of its three round trips. By key: with statistics of a small table, the planner
        // read all of it to join the deliveries to the input (half the statement's time in
        // bench/webhooks.sh's drain).
        return try await pool.withConnection(commit: .asynchronous, plans: .byKeyPlannedOnce) { connection in
            Set(try connection.query(
                """
                WITH input AS (
                    SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::text[], $7::text[],
                                         $8::text[])
                        AS i(delivery_id, lease_token, started_us, duration_ms, status_code, error, excerpt, decided_by)
                ), delivered AS (
                    UPDATE webhook_deliveries d SET
                        status = 'delivered', attempts = d.attempts + 1, last_status_code = i.status_code::int,
                        decided_by = coalesce(d.decided_by, i.decided_by),
                        last_error = i.error, delivered_at = now(), lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
                        delivered_started_at = to_timestamp(i.started_us / 1e6),
                        delivered_duration_ms = least(i.duration_ms, 2147483647)::int, delivered_response_excerpt = i.excerpt
                    FROM input i WHERE d.id = i.delivery_id AND d.lease_owner = $9 AND d.lease_token = i.lease_token
                    RETURNING d.id, d.endpoint_id, d.lease_token
                ), taken_over AS (
                    INSERT INTO webhook_attempts (delivery_id, started_at, duration_ms, status_code, error, response_excerpt)
                    SELECT delivery_id, to_timestamp(started_us / 1e6), least(duration_ms, 2147483647)::int, status_code::int,
                           error, excerpt
                    FROM input i WHERE NOT EXISTS (SELECT FROM delivered WHERE delivered.id = i.delivery_id AND delivered.lease_token = i.lease_token)
                ), decided_while_taken_over AS (
                    -- The transfer went on with this reply, lease or not: who decided is recorded.
                    UPDATE webhook_deliveries d SET decided_by = i.decided_by
                    FROM input i
                    WHERE i.decided_by IS NOT NULL AND d.id = i.delivery_id AND d.decided_by IS NULL
                      AND NOT EXISTS (SELECT FROM delivered WHERE delivered.id = i.delivery_id)
                ), answering AS (
                    UPDATE webhook_endpoints w SET failing_since = NULL, updated_at = now()
                    WHERE w.id IN (SELECT endpoint_id FROM delivered) AND w.failing_since IS NOT NULL
                )
                SELECT id FROM delivered
                """,
                parameters
            ).map { try $0.decode(0, as: String.self) })
        }
    }
}
