import FerryCore
import Foundation
import Postgres

/// One event of the outbox, as the event log and the webhooks show it.
public struct EventRecord: Sendable, Equatable {
    public var id: String
    /// The event's place in the log of all events: the cursor of `?after=` and of SSE ids.
    public var position: Int64
    public var tenantID: String
    public var sessionID: String
    public var taskID: String?
    /// Gapless per task (per session for session events).
    public var sequence: Int64
    /// The event type's raw value (`task.didCompleteWithError`).
    public var type: String
    /// The `data` object exactly as stored (PostgreSQL's jsonb text), spliced into webhook
    /// bodies as is so that no number passes through a `Double`.
    public var dataJSON: String
    public var createdAt: Date
    /// For decision events: "receiver" or "default" once decided.
    public var decidedBy: String?

    public init(
        id: String, position: Int64, tenantID: String, sessionID: String, taskID: String?, sequence: Int64,
        type: String, dataJSON: String, createdAt: Date, decidedBy: String?
    ) {
        self.id = id
        self.position = position
        self.tenantID = tenantID
        self.sessionID = sessionID
        self.taskID = taskID
        self.sequence = sequence
        self.type = type
        self.dataJSON = dataJSON
        self.createdAt = createdAt
        self.decidedBy = decidedBy
    }

    public var eventType: EventType? { EventType(rawValue: type) }

    /// The columns `decode` reads; `e` is the alias of `events`.
    static let columns = columns(decidedBy: decidedBySQL)

    /// The same, for a statement that joins the event to its delivery `d`, which is the
    /// decision's if any delivery is.
    static let columnsWithDelivery = columns(decidedBy: "coalesce(e.decided_by, d.decided_by)")

    private static func columns(decidedBy: String) -> String {
        "e.id, e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, e.data, e.created_at, \(decidedBy) AS decided_by"
    }

    /// Who decided the decision event `e`: as written with the event, else as recorded on the
    /// delivery that asked (migration 0020). Looked up only for the types that ask.
    public static let decidedBySQL = """
        CASE WHEN e.decided_by IS NOT NULL THEN e.decided_by \
        WHEN e.type IN (\(decisionTypeList)) THEN \
        (SELECT asked.decided_by FROM webhook_deliveries asked WHERE asked.event_id = e.id AND asked.decided_by IS NOT NULL LIMIT 1) \
        END
        """

    private static let decisionTypeList = EventType.allCases.filter(\.isDecision).map { "'\($0.rawValue)'" }.joined(separator: ", ")

    static func decode(_ row: PostgresRow) throws -> EventRecord {
        EventRecord(
            id: try row.decode("id"),
            position: try row.decode("position"),
            tenantID: try row.decode("tenant_id"),
            sessionID: try row.decode("session_id"),
            taskID: try row.decode("task_id"),
            sequence: try row.decode("sequence"),
            type: try row.decode("type"),
            dataJSON: try row.decode("data", as: PostgresJSON.self).text,
            createdAt: try row.decode("created_at"),
            decidedBy: try row.decode("decided_by")
        )
    }
}
