import FerryCore
import Foundation
import Postgres

/// Task events of one transaction, written together by one statement: the sequence numbers of
/// each task are taken at once, every row is inserted at once, and each tenant is notified once
/// (with the transaction's other notifications).
/// Appending an event one by one costs three round trips (sequence, insert, notify); a small
/// download ends with four events, and many end in one transaction.
///
/// Events keep the order in which they were appended, per task (sequence) and in the log
/// (position). The tasks' rows must be locked by the transaction, as for any state change.
struct EventBatch {
    private struct Pending {
        var type: EventType
        var task: EventWriter.TaskRef
        var data: [String: JSONValue]
        var id: String
        var decidedBy: String?
    }

    private var pending: [Pending] = []
    /// Other notifications of the transaction (`ferry_task_completed`, …), sent with the events'.
    private var notifications: [(channel: String, payload: String)] = []

    var isEmpty: Bool { pending.isEmpty && notifications.isEmpty }

    /// `pg_notify(channel, payload)` at commit, sent by the next flush.
    mutating func notify(_ channel: String, _ payload: String) {
        notifications.append((channel, payload))
    }

    /// Returns the event's id. `decidedBy` is set for a decision event nobody was asked about ("default").
    @discardableResult
    mutating func append(
        _ type: EventType, for task: EventWriter.TaskRef, data: [String: JSONValue], id: String? = nil, decidedBy: String? = nil
    ) -> String {
        let id = id ?? IDs.make("evt")
        pending.append(Pending(type: type, task: task, data: data, id: id, decidedBy: decidedBy))
        return id
    }

    /// Writes the events appended so far, queues the notifications, and empties the batch.
    mutating func flush(on connection: PostgresConnection) throws {
        defer {
            pending.removeAll()
            notifications.removeAll()
        }
        var perTask: [String: Int64] = [:]
        var taskOrder: [String] = []
        var nth: [Int64] = []
        var notified: Set<String> = []
        for event in pending {
            let taskID = event.task.taskID
            let count = perTask[taskID, default: 0]
            if count == 0 { taskOrder.append(taskID) }
            // Listeners of the event log are told which tenant has new events.
            if notified.insert(event.task.tenantID).inserted { notify(NotificationChannel.events, event.task.tenantID) }
            nth.append(count)
            perTask[taskID] = count + 1
        }
        guard !pending.isEmpty else {
            guard !notifications.isEmpty else { return }
            try connection.execute(
                "SELECT count(pg_notify(n.channel, n.payload)) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)",
                [notifications.map(\.channel), notifications.map(\.payload)]
            )
            return
        }
        let payloads = pending.map { EventWriter.payload($0.data, sessionID: $0.task.sessionID, taskID: $0.task.taskID) }
        let inserted = try connection.query(
            """
            WITH taken AS MATERIALIZED (
                -- Each task's events continue from its last one. The task's row is locked by this
                -- transaction, so nobody else appends to it until commit (and a race would break
                -- events_task_sequence, not the order). A counter on the task row cost a new
                -- version of that wide row, with every one of its indexes, per batch.
                -- Materialized: inlined, the last sequence was looked up twice for every event
                -- (once per use of `first` below), not once per task.
                SELECT t.id, coalesce((SELECT max(e.sequence) FROM events e WHERE e.task_id = t.id), 0) + 1 AS first
                FROM unnest($1::text[]) AS c(task_id) JOIN tasks t ON t.id = c.task_id
            ), inserted AS (
                INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data, decided_by)
                SELECT e.id, e.tenant_id, e.session_id, e.task_id, taken.first + e.nth, e.type,
                       e.data::jsonb || jsonb_build_object('sequence', taken.first + e.nth), e.decided_by
                FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::text[], $9::text[])
                     WITH ORDINALITY AS e(id, tenant_id, session_id, task_id, nth, type, data, decided_by, ordinal)
                JOIN taken ON taken.id = e.task_id
                ORDER BY e.ordinal
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM inserted) AS inserted,
                   (SELECT count(pg_notify(n.channel, n.payload)) FROM unnest($10::text[], $11::text[]) AS n(channel, payload)) AS notified
            """,
            [
                taskOrder,
                pending.map(\.id), pending.map(\.task.tenantID), pending.map(\.task.sessionID), pending.map(\.task.taskID),
                nth, pending.map(\.type.rawValue), payloads, pending.map(\.decidedBy),
                notifications.map(\.channel), notifications.map(\.payload),
            ]
        ).firstRow().decode("inserted", as: Int.self)
        // Only a task deleted under a lock it should hold gets here.
        guard inserted == pending.count else { throw StoreError.notFound(resource: "task") }
    }
}
