import FerryCore
import Foundation
import Postgres

/// A task row about to be inserted, with its first event (`task.didCreateTask`).
struct NewTask: Sendable {
    var id = IDs.make("tsk")
    var creation: TaskCreation
    var request: TransferRequest
    /// The bytes to send: an inline upload body or a data task's `httpBody`.
    var requestBody: [UInt8]?
    var uploadSource: PostgresJSON?
    var bytesToSend: Int64
    var checkpoint: PostgresJSON?
    var idempotencyKey: String?
    /// The request URL's host, which `httpMaximumConnectionsPerHost` counts against.
    var host: String

    /// Suspended, as URLSession creates tasks, unless the creation asks to start at once.
    var state: TaskState { creation.startsImmediately ? .running : .suspended }

    /// Inserts tasks of one session in order (consecutive taskIdentifiers), each with its
    /// request body and its first event (sequence 1; `EventBatch` numbers the next ones), and
    /// queues the notifications, with one statement however many there are. nil when the session
    /// is not a valid session of the tenant. `fingerprint` is the creating request's, for tasks
    /// with an idempotency key.
    ///
    /// Taking the taskIdentifiers locks the session's row until the commit, so creations in a
    /// session take turns (and cannot slip past an invalidation, which updates the same row).
    /// Everything is therefore one statement, the last before the commit but for a delegate, so
    /// the turn is short. The lock is NO KEY UPDATE: rows of other transactions that refer to the
    /// session (events, finished tasks, cache entries) do not wait for it.
    static func insert(
        _ tasks: [NewTask], tenantID: String, sessionID: String, fingerprint: [UInt8]?, on connection: PostgresConnection
    ) throws -> [TaskRecord]? {
        guard !tasks.isEmpty else { return [] }
        // The first event's taskIdentifier is only known in the statement.
        let firstEvents = tasks.map { task in
            let summary = TaskEventData.summary(
                id: task.id, taskIdentifier: 0, kind: task.creation.kind, state: task.state, originalRequest: task.request,
                taskDescription: task.creation.taskDescription
            )
            return EventWriter.payload(["task": summary], sessionID: sessionID, taskID: task.id, sequence: 1)
        }
        // Arrays of text: the Postgres module binds text, bigint and int arrays.
        let rows = try connection.query(
            """
            WITH session AS (
                UPDATE sessions SET next_task_identifier = next_task_identifier + $4
                WHERE tenant_id = $2 AND id = $3 AND state = 'valid'
                RETURNING next_task_identifier - $4 AS first_identifier
            ), new AS (
                SELECT * FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int8[], $10::text[], $11::text[],
                                     $12::int8[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[],
                                     $23::int8[], $24::int8[])
                    WITH ORDINALITY AS n(id, kind, state, priority, task_description, begin_micros, original_request, upload_source,
                                         bytes_expected_to_send, checkpoint, idempotency_key, host, event_id, event_data, body,
                                         client_send, client_receive, ordinal)
            ), task AS (
                INSERT INTO tasks (id, tenant_id, session_id, task_identifier, kind, state, priority, task_description,
                                   earliest_begin_at, not_before, original_request, upload_source, bytes_expected_to_send,
                                   checkpoint, idempotency_key, idempotency_fingerprint, host,
                                   bytes_client_expects_to_send, bytes_client_expects_to_receive, started_at)
                SELECT n.id, $2, $3, session.first_identifier + n.ordinal - 1, n.kind, n.state, n.priority::float8, n.task_description,
                       to_timestamp(0) + n.begin_micros * interval '1 microsecond', to_timestamp(0) + n.begin_micros * interval '1 microsecond',
                       n.original_request::jsonb, n.upload_source::jsonb, n.bytes_expected_to_send,
                       n.checkpoint::jsonb, n.idempotency_key, CASE WHEN n.idempotency_key IS NOT NULL THEN $22::bytea END, n.host,
                       n.client_send, n.client_receive,
                       CASE WHEN n.state = 'running' THEN now() END
                FROM new n CROSS JOIN session
                ORDER BY n.ordinal
                RETURNING \(TaskRow.columns)
            ), event AS (
                INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data)
                SELECT n.event_id, $2, $3, task.id, 1, $19, jsonb_set(n.event_data::jsonb, '{task,taskIdentifier}', to_jsonb(task.task_identifier))
                FROM task JOIN new n ON n.id = task.id
                ORDER BY task.task_identifier
            ), body AS (
                INSERT INTO task_bodies (task_id, request_body)
                SELECT task.id, decode(n.body, 'base64') FROM task JOIN new n ON n.id = task.id WHERE n.body IS NOT NULL
            )
            SELECT task.*, pg_notify($20, $2) AS notified_events,
                   CASE WHEN task.state = 'running' THEN pg_notify($21, task.id) END AS notified_work
            FROM task
            ORDER BY task.task_identifier
            """,
            [
                tasks.map(\.id), tenantID, sessionID, tasks.count,
                tasks.map(\.creation.kind.rawValue), tasks.map(\.state.rawValue), tasks.map { String($0.creation.priority) },
                tasks.map(\.creation.taskDescription),
                tasks.map { $0.creation.earliestBeginDate.map { Int64(($0.timeIntervalSince1970 * 1_000_000).rounded()) } },
                try tasks.map { try JSONColumn.encode($0.request).text }, tasks.map(\.uploadSource?.text), tasks.map(\.bytesToSend),
                tasks.map(\.checkpoint?.text), tasks.map(\.idempotencyKey), tasks.map { $0.host.lowercased() },
                tasks.map { _ in IDs.make("evt") }, firstEvents, tasks.map { $0.requestBody.map { Data($0).base64EncodedString() } },
                EventType.taskDidCreateTask.rawValue, NotificationChannel.events, NotificationChannel.work, fingerprint.map { Data($0) },
                tasks.map(\.creation.countOfBytesClientExpectsToSend), tasks.map(\.creation.countOfBytesClientExpectsToReceive),
            ]
        )
        guard rows.count == tasks.count else { return nil }
        return try rows.map(TaskRow.decode)
    }
}
