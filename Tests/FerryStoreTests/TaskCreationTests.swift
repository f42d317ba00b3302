import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Task creation: identifiers, idempotency, invalidated sessions, resume-data adoption")
struct TaskCreationTests {
    @Test("a task is stored as created, with its body, and announces didCreateTask")
    func createsTask() async throws {
        try await StoreFixture.with { fixture in
            let begin = Date(timeIntervalSince1970: 1_900_000_000)
            let suspended = try await fixture.makeTask(kind: .data, starts: false, method: "POST", priority: 0.75, requestBody: [1, 2, 3])
            #expect(suspended.state == .suspended)
            #expect(suspended.kind == .data)
            #expect(suspended.priority == 0.75)
            #expect(suspended.originalRequest.httpMethod == "POST")
            #expect(suspended.startedAt == nil)
            #expect(suspended.countOfBytesExpectedToSend == 3)
            #expect(try await fixture.value("SELECT request_body FROM task_bodies WHERE task_id = $1", [suspended.id], as: [UInt8].self) == [1, 2, 3])
            #expect(try await fixture.eventTypes(of: suspended.id) == ["task.didCreateTask"])

            let delayed = try await fixture.makeTask(earliestBeginDate: begin)
            #expect(delayed.state == .running)
            #expect(delayed.startedAt != nil)
            #expect(delayed.earliestBeginDate == begin)
            #expect(try await fixture.column("not_before", of: delayed.id, as: Date.self) == begin)
        }
    }

    @Test("taskIdentifier counts 1, 2, 3… per session")
    func identifiersPerSession() async throws {
        try await StoreFixture.with { fixture in
            let second = try await fixture.makeSession()
            var identifiers: [Int64] = []
            for _ in 0..<3 { identifiers.append(try await fixture.makeTask().taskIdentifier) }
            #expect(identifiers == [1, 2, 3])
            #expect(try await fixture.makeTask(session: second).taskIdentifier == 1)
            #expect(try await fixture.makeTask().taskIdentifier == 4)
        }
    }

    @Test("20 concurrent creations in one session get identifiers 1…20, each once")
    func identifiersUnderConcurrency() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let identifiers = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<20 { group.addTask { try await fixture.makeTask(starts: false).taskIdentifier } }
                return try await group.reduce(into: [Int64]()) { $0.append($1) }
            }
            #expect(identifiers.sorted() == Array(1...20))
        }
    }

    @Test("the same Idempotency-Key and body returns the same task; another body is refused")
    func idempotency() async throws {
        try await StoreFixture.with { fixture in
            let origin = TaskStore.Origin(idempotencyKey: "retry-1", fingerprint: RequestFingerprint.of(Array("body".utf8)))
            let request = TransferRequest(url: "https://origin.example/a")
            let creation = TaskCreation(kind: .download, request: request)
            let first = try await fixture.tasks.create(tenantID: fixture.tenant.id, sessionID: fixture.session.id, creation, request: request, host: "origin.example", origin: origin)
            let retry = try await fixture.tasks.create(tenantID: fixture.tenant.id, sessionID: fixture.session.id, creation, request: request, host: "origin.example", origin: origin)
            #expect(first.created)
            #expect(retry.created == false)
            #expect(retry.task == first.task)

            var changed = origin
            changed.fingerprint = RequestFingerprint.of(Array("another body".utf8))
            await expectStoreError(.idempotencyKeyReused) {
                try await fixture.tasks.create(tenantID: fixture.tenant.id, sessionID: fixture.session.id, creation, request: request, host: "origin.example", origin: changed)
            }
            // Keys are per tenant: another tenant may use the same one.
            let other = try await fixture.makeTenant()
            let theirSession = try await fixture.makeSession(tenantID: other.id)
            let theirs = try await fixture.tasks.create(tenantID: other.id, sessionID: theirSession.id, creation, request: request, host: "origin.example", origin: origin)
            #expect(theirs.created)
            #expect(try await fixture.value("SELECT count(*) FROM tasks", as: Int.self) == 2)
        }
    }

    @Test("an Idempotency-Key reused for another session is not answered with the first session's task")
    func idempotencyAcrossSessions() async throws {
        try await StoreFixture.with { fixture in
            let origin = TaskStore.Origin(idempotencyKey: "retry-2", fingerprint: RequestFingerprint.of(Array("same body".utf8)))
            let first = try await fixture.makeTask(origin: origin)
            let second = try await fixture.makeSession()
            await expectStoreError(.idempotencyKeyReused) {
                let task = try await fixture.makeTask(session: second, origin: origin)
                #expect(task.sessionID == second.id, "got \(task.id) of session \(task.sessionID), first was \(first.id)")
                return task
            }
        }
    }

    @Test("concurrent creations with one Idempotency-Key make one task, and all of them return it")
    func idempotencyUnderConcurrency() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let origin = TaskStore.Origin(idempotencyKey: "raced", fingerprint: [9, 9, 9])
            let results = try await withThrowingTaskGroup(of: TaskRecord.self) { group in
                for _ in 0..<10 { group.addTask { try await fixture.makeTask(origin: origin) } }
                return try await group.reduce(into: [TaskRecord]()) { $0.append($1) }
            }
            #expect(Set(results.map(\.id)).count == 1)
            #expect(try await fixture.value("SELECT count(*) FROM tasks", as: Int.self) == 1)
            #expect(try await fixture.value("SELECT count(*) FROM events", as: Int.self) == 1)
            #expect(try await fixture.value("SELECT next_task_identifier FROM sessions WHERE id = $1", [fixture.session.id], as: Int.self) == 2)
        }
    }

    @Test("a session that is not valid accepts no task; an unknown or foreign session is not found")
    func invalidSession() async throws {
        try await StoreFixture.with { fixture in
            for state in ["invalidated", "finishing", "canceling"] {
                try await fixture.execute("UPDATE sessions SET state = $2 WHERE id = $1", [fixture.session.id, state])
                await expectConflict { try await fixture.makeTask() }
            }
            #expect(try await fixture.value("SELECT count(*) FROM tasks", as: Int.self) == 0)
            let other = try await fixture.makeTenant()
            let foreign = try await fixture.makeSession(tenantID: other.id)
            await expectStoreError(.notFound(resource: "session")) { try await fixture.makeTask(session: foreign) }
        }
    }

    @Test("text containing U+0000 (which PostgreSQL cannot store) is refused by validation, naming the field")
    func nulInText() throws {
        let body = try JSONValue.parse(Array(#"{"kind": "data", "request": {"url": "https://origin.example/"}, "taskDescription": "before\u0000after"}"#.utf8))
        struct AnyURL: URLSyntaxChecker {
            func check(_ text: String, field: String) throws -> CheckedURL { CheckedURL(url: text, scheme: "https", host: "origin.example") }
        }
        #expect(throws: ValidationError(field: "taskDescription", message: "must not contain NUL characters.")) {
            try TaskCreation(validating: body, urlChecker: AnyURL())
        }
    }
}
