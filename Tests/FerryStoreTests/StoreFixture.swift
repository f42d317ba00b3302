import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

/// A migrated database of its own with one tenant and one session, for one test.
///
/// The store's API cannot reach every state a test needs (an expired lease, an invalidated
/// session), so the fixture also runs plain SQL on the same pool.
struct StoreFixture {
    let test: TestDatabase
    let tenant: TenantRecord
    let apiKey: String
    let session: SessionRecord
    let resumeData: ResumeDataIssuer

    var database: FerryDatabase { test.database }
    var pool: PostgresPool { test.database.pool }
    var tasks: TaskStore { test.database.tasks }

    /// Runs `body` with a fresh fixture and closes its pool afterwards, whatever happens.
    static func with<T>(
        poolSize: Int = 4, sessionKind: SessionKind = .default, _ body: (StoreFixture) async throws -> T
    ) async throws -> T {
        let test = try await TestDatabase.make(poolSize: poolSize)
        do {
            let (tenant, apiKey) = try await test.database.tenants.create(name: "fixture", quotas: TenantQuotas())
            let configuration = SessionConfiguration(kind: sessionKind, identifier: sessionKind == .background ? "fixture" : nil)
            let session = try await test.database.sessions.create(tenantID: tenant.id, SessionCreation(configuration: configuration)).session
            let resumeData = ResumeDataIssuer(signingKey: try await test.database.settings.resumeDataSigningKey())
            let fixture = StoreFixture(test: test, tenant: tenant, apiKey: apiKey, session: session, resumeData: resumeData)
            let result = try await body(fixture)
            await test.close()
            return result
        } catch {
            await test.close()
            throw error
        }
    }

    // MARK: Arranging

    /// Creates a task through the store (suspended unless `starts`). Without a `url`, every task
    /// gets a host of its own, so that `httpMaximumConnectionsPerHost` holds nothing back.
    func makeTask(
        kind: TaskKind = .download, starts: Bool = true, session: SessionRecord? = nil, tenantID: String? = nil,
        url: String? = nil, method: String = "GET", priority: Double = TaskPriority.default,
        earliestBeginDate: Date? = nil, requestBody: [UInt8]? = nil, origin: TaskStore.Origin = TaskStore.Origin()
    ) async throws -> TaskRecord {
        let url = url ?? "https://origin-\(UInt32.random(in: 0...UInt32.max)).example/file.bin"
        let host = try #require(URL(string: url)?.host)
        let request = TransferRequest(url: url, httpMethod: method, httpBodyLength: requestBody.map { Int64($0.count) })
        var creation = TaskCreation(kind: kind, request: request)
        creation.startsImmediately = starts
        creation.priority = priority
        creation.earliestBeginDate = earliestBeginDate
        if kind == .upload { creation.uploadBody = .inline(requestBody ?? []) } else { creation.requestBody = requestBody }
        return try await tasks.create(
            tenantID: tenantID ?? tenant.id, sessionID: (session ?? self.session).id, creation, request: request, host: host, origin: origin
        ).task
    }

    func makeSession(_ kind: SessionKind = .default, tenantID: String? = nil) async throws -> SessionRecord {
        let configuration = SessionConfiguration(kind: kind, identifier: kind == .background ? "bg-\(UInt32.random(in: 0...UInt32.max))" : nil)
        return try await database.sessions.create(tenantID: tenantID ?? tenant.id, SessionCreation(configuration: configuration)).session
    }

    func makeTenant(_ name: String = "other") async throws -> TenantRecord {
        try await database.tenants.create(name: name, quotas: TenantQuotas()).tenant
    }

    func ledger(_ instanceID: String = "instance-a", lease: Duration = .seconds(15)) -> TransferLedger {
        database.transfers(instanceID: instanceID, leaseDuration: lease)
    }

    /// Claims everything runnable with `ledger` and returns the claim of `taskID`.
    func claim(_ taskID: String, with ledger: TransferLedger) async throws -> ClaimedTask {
        let claimed = try await ledger.claim(limit: 1000)
        return try #require(claimed.first { $0.taskID == taskID }, "task \(taskID) was not claimable")
    }

    /// Makes the task's lease lapse, as if its owner had stopped renewing it.
    func expireLease(of taskID: String) async throws {
        try await execute("UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [taskID])
    }

    static func checkpoint(
        taskID: String, bytes: Int64 = 4096, validator: ResumeValidator? = .strongETag("\"v1\""), total: Int64? = 10_000
    ) -> TransferCheckpoint {
        TransferCheckpoint(
            partialFile: TenantFiles.partialName(taskID: taskID), bytesOnDisk: bytes, validator: validator,
            url: "https://origin.example/file.bin", expectedTotalBytes: total
        )
    }

    // MARK: Plain SQL

    @discardableResult
    func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> Int {
        try await pool.withConnection { try $0.execute(sql, parameters) }
    }

    func rows(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws -> PostgresRows {
        try await pool.withConnection { try $0.query(sql, parameters) }
    }

    func value<T: PostgresDecodable & Sendable>(_ sql: String, _ parameters: [any PostgresBindable] = [], as type: T.Type = T.self) async throws -> T {
        let rows = try await rows(sql, parameters)
        return try #require(try rows.first?.decode(0, as: T.self), "no row for: \(sql)")
    }

    /// The task's event sequence numbers in order.
    func eventSequences(of taskID: String) async throws -> [Int64] {
        try await rows("SELECT sequence FROM events WHERE task_id = $1 ORDER BY sequence, position", [taskID]).map { try $0.decode(0) }
    }

    /// The task's event types in sequence order.
    func eventTypes(of taskID: String) async throws -> [String] {
        try await rows("SELECT type FROM events WHERE task_id = $1 ORDER BY sequence, position", [taskID]).map { try $0.decode(0) }
    }

    func column<T: PostgresDecodable & Sendable>(_ name: String, of taskID: String, as type: T.Type = T.self) async throws -> T {
        // `name` is always a literal column name written in a test, never input.
        let rows = try await rows("SELECT \(name) FROM tasks WHERE id = $1", [taskID])
        return try #require(try rows.first?.decode(0, as: T.self))
    }
}

/// Expects `body` to throw exactly `expected`.
func expectStoreError<T>(
    _ expected: StoreError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(expected), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(error == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects `body` to throw a `StoreError.conflict`, whatever its message.
func expectConflict<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        _ = try await body()
        Issue.record("expected a conflict, but nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        #expect(isConflict(error), "expected a conflict, got \(error)", sourceLocation: sourceLocation)
    }
}

/// Whether `error` is a `StoreError.conflict`.
func isConflict(_ error: any Error) -> Bool {
    if case .conflict? = error as? StoreError { return true }
    return false
}

/// Expects `body` to refuse its `after` cursor: a `StoreError.invalidReference` of query.after.
func expectUnknownCursor<T>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        _ = try await body()
        Issue.record("expected the cursor to be refused, but nothing was thrown", sourceLocation: sourceLocation)
    } catch {
        guard case .invalidReference(let field, _)? = error as? StoreError else {
            Issue.record("expected the cursor to be refused, got \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(field == "query.after", sourceLocation: sourceLocation)
    }
}
