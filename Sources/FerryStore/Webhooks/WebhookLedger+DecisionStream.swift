import FerryCore
import Foundation
import Postgres

/// A decision's delivery taken by this instance, with what must be sent before it.
public struct DecisionClaim: Sendable {
    public var decision: ClaimedDelivery
    public var earlier: EarlierDeliveries
}

/// The unfinished deliveries of a decision's stream that come before it (per-task order).
public enum EarlierDeliveries: Sendable {
    /// None: the decision may be sent now.
    case none
    /// Taken by this instance under a lease, in stream order: send them, then the decision.
    case taken([ClaimedDelivery])
    /// At least one is being attempted (by a queue, here or on another instance): wait for it.
    case inFlight
    /// At least one failed and waits for its retry (its backoff, or the receiver's
    /// `Retry-After`): it is not sent early, which would spend its retries in a burst and
    /// ignore what the receiver asked; the decision takes its default.
    case backingOff
}

extension WebhookLedger {
    /// Takes the decision's earlier unfinished deliveries, unless one of them is being attempted
    /// elsewhere. `answered` (as in `claimDue`): this instance's deliveries answered 2xx and not
    /// yet recorded, which are through: a decision does not wait for their record.
    public func takeEarlier(than decision: ClaimedDelivery, lease: Duration, answered: [String]) async throws -> EarlierDeliveries {
        let instanceID = self.instanceID
        return try await pool.withTransaction(commit: .asynchronous) { connection in
            try Self.takeEarlier(than: [decision], instanceID: instanceID, lease: lease, answered: answered, on: connection)[decision.deliveryID] ?? .none
        }
    }

    /// `takeEarlier` for many decisions at once, answered by the decisions' delivery ids. Every
    /// earlier delivery is locked first (not skipped), so a queue claiming one at this moment is
    /// either seen holding it or finds it taken. The lock is NO KEY UPDATE: a full one would
    /// wait for (and deadlock with) an attempt being recorded, whose row references the delivery.
    static func takeEarlier(
        than decisions: [ClaimedDelivery], instanceID: String, lease: Duration, answered: [String], on connection: PostgresConnection
    ) throws -> [String: EarlierDeliveries] {
        guard !decisions.isEmpty else { return [:] }
        let earlier = try connection.query(
            """
            SELECT c.decision, d.id, d.leased, d.backing_off
            FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[]) WITH ORDINALITY AS c(decision, endpoint_id, stream_id, sequence, ordinal)
            -- Each stream by its index: joined, the planner read every pending delivery.
            CROSS JOIN LATERAL (
                SELECT p.id, p.sequence, coalesce(p.lease_expires_at >= now(), false) AS leased,
                       p.attempts > 0 AND p.next_attempt_at > now() AS backing_off
                FROM webhook_deliveries p
                WHERE p.endpoint_id = c.endpoint_id AND p.stream_id = c.stream_id AND p.status = 'pending'
                  AND p.sequence < c.sequence AND p.id <> ALL($5::text[])
                ORDER BY p.sequence
                FOR NO KEY UPDATE
            ) d
            ORDER BY c.ordinal, d.sequence
            """,
            [decisions.map(\.deliveryID), decisions.map(\.endpointID), decisions.map(\.streamID), decisions.map(\.event.sequence), answered]
        )
        var found: [String: (ids: [String], inFlight: Bool, backingOff: Bool)] = [:]
        for row in earlier {
            let decision = try row.decode("decision", as: String.self)
            found[decision, default: ([], false, false)].ids.append(try row.decode("id"))
            if try row.decode("leased", as: Bool.self) { found[decision]?.inFlight = true }
            if try row.decode("backing_off", as: Bool.self) { found[decision]?.backingOff = true }
        }
        var answers: [String: EarlierDeliveries] = [:]
        var owner: [String: String] = [:]
        for (decision, entry) in found {
            if entry.inFlight {
                answers[decision] = .inFlight
            } else if entry.backingOff {
                answers[decision] = .backingOff
            } else {
                for id in entry.ids { owner[id] = decision }
            }
        }
        guard !owner.isEmpty else { return answers }
        // Leased and loaded in one statement, in stream order.
        let taken = try connection.query(
            """
            WITH taken AS (
                UPDATE webhook_deliveries SET lease_owner = $2, lease_token = \(Self.nextLeaseToken(after: "lease_token")),
                    lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
                WHERE id = ANY($1)
                RETURNING *
            )
            SELECT \(ClaimedDelivery.columns)
            FROM taken d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
            ORDER BY e.position
            """,
            [Array(owner.keys), instanceID, lease.secondsValue]
        ).map(ClaimedDelivery.decode)
        var takenBy: [String: [ClaimedDelivery]] = [:]
        for delivery in taken {
            if let decision = owner[delivery.deliveryID] { takenBy[decision, default: []].append(delivery) }
        }
        for (decision, deliveries) in takenBy { answers[decision] = .taken(deliveries) }
        return answers
    }
}
