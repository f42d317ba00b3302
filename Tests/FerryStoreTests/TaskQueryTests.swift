import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Task reads: list filters and pages, bodies, files, tenant isolation")
struct TaskQueryTests {
    @Test("list filters by state and kind and pages in taskIdentifier order")
    func listFiltersAndPages() async throws {
        try await StoreFixture.with { fixture in
            // identifiers 1…9: kinds cycle data, download, upload; states set below.
            var tasks: [TaskRecord] = []
            for index in 0..<9 {
                tasks.append(try await fixture.makeTask(kind: TaskKind.allCases[index % 3], starts: index.isMultiple(of: 2)))
            }
            try await fixture.execute("UPDATE tasks SET state = 'completed' WHERE task_identifier IN (7, 8)")
            let other = try await fixture.makeSession()
            let elsewhere = try await fixture.makeTask(session: other)

            let list = { (filter: TaskStore.ListFilter, limit: Int, after: String?) in
                try await fixture.tasks.list(tenantID: fixture.tenant.id, sessionID: fixture.session.id, filter: filter, limit: limit, after: after)
            }
            let all = try await list(TaskStore.ListFilter(), 50, nil)
            #expect(all.items.map(\.taskIdentifier) == Array(1...9))
            #expect(all.nextCursor == nil)

            let downloads = try await list(TaskStore.ListFilter(kinds: [.download]), 50, nil)
            #expect(downloads.items.map(\.taskIdentifier) == [2, 5, 8])
            let live = try await list(TaskStore.ListFilter(states: [.running, .suspended]), 50, nil)
            #expect(live.items.map(\.taskIdentifier) == [1, 2, 3, 4, 5, 6, 9])
            let runningUploads = try await list(TaskStore.ListFilter(states: [.running], kinds: [.upload, .data]), 50, nil)
            #expect(runningUploads.items.map(\.taskIdentifier) == [1, 3, 9])
            #expect(try await list(TaskStore.ListFilter(states: [.canceling]), 50, nil).items.isEmpty)

            // Pages of a filtered list continue after the cursor, complete and without repeats.
            var seen: [Int64] = []
            var cursor: String?
            repeat {
                let page = try await list(TaskStore.ListFilter(states: [.running, .suspended]), 2, cursor)
                #expect(page.items.count <= 2)
                seen += page.items.map(\.taskIdentifier)
                cursor = page.nextCursor
            } while cursor != nil && seen.count < 20
            #expect(seen == [1, 2, 3, 4, 5, 6, 9])

            let afterFirst = try await list(TaskStore.ListFilter(), 50, try #require(all.items.first).id)
            #expect(afterFirst.items.map(\.taskIdentifier) == Array(2...9))
            // A cursor naming another session's task is refused, rather than restarting or
            // reading as the end of the list.
            await expectUnknownCursor { try await list(TaskStore.ListFilter(), 50, elsewhere.id) }
        }
    }

    @Test("another tenant never sees a task: find, list, body, metrics, file")
    func tenantIsolation() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let other = try await fixture.makeTenant()
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id) == task)
            await expectStoreError(.notFound(resource: "task")) { try await fixture.tasks.find(tenantID: other.id, id: task.id) }
            await expectStoreError(.notFound(resource: "session")) {
                try await fixture.tasks.list(tenantID: other.id, sessionID: fixture.session.id, filter: .init(), limit: 10, after: nil)
            }
            await expectStoreError(.notFound(resource: "task")) { try await fixture.tasks.responseBody(tenantID: other.id, taskID: task.id) }
            await expectStoreError(.notFound(resource: "task")) { try await fixture.tasks.metrics(tenantID: other.id, taskID: task.id) }
            await expectStoreError(.notFound(resource: "task")) { try await fixture.tasks.forgetDownloadedFile(tenantID: other.id, taskID: task.id) }
        }
    }

    @Test("a data task's response body and metrics are readable once it completed")
    func responseBodyAndMetrics() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask(kind: .data)
            let empty = try await fixture.tasks.responseBody(tenantID: fixture.tenant.id, taskID: task.id)
            #expect(empty.body == nil)
            #expect(try await fixture.tasks.metrics(tenantID: fixture.tenant.id, taskID: task.id) == nil)

            let ledger = fixture.ledger()
            let claim = try await fixture.claim(task.id, with: ledger)
            let body = Array("hello, \u{0}binary".utf8)
            let response = HTTPResponseSnapshot(url: task.originalRequest.url, head: ResponseHead(statusCode: 404, fields: [("Content-Type", "text/plain")]))
            let metrics: JSONValue = ["redirectCount": 0, "taskInterval": ["duration": 0.5]]
            let lost = try await ledger.finish([(
                LeaseToken(taskID: task.id, epoch: claim.leaseEpoch),
                .completed(TaskCompletion(response: response, bytesReceived: Int64(body.count), metrics: metrics, responseBody: body))
            )])
            #expect(lost.isEmpty)
            let read = try await fixture.tasks.responseBody(tenantID: fixture.tenant.id, taskID: task.id)
            #expect(read.body == body)
            #expect(read.task.state == .completed)
            #expect(read.task.response == response)
            #expect(read.task.countOfBytesReceived == Int64(body.count))
            #expect(read.task.error == nil)
            #expect(try await fixture.tasks.metrics(tenantID: fixture.tenant.id, taskID: task.id) == metrics)
            #expect(try await fixture.eventTypes(of: task.id) == ["task.didCreateTask", "task.didFinishCollectingMetrics", "task.didCompleteWithError"])
        }
    }

    @Test("forgetDownloadedFile returns the file name once, even to concurrent callers")
    func forgetDownloadedFile() async throws {
        try await StoreFixture.with(poolSize: 6) { fixture in
            let task = try await fixture.makeTask()
            #expect(try await fixture.tasks.forgetDownloadedFile(tenantID: fixture.tenant.id, taskID: task.id) == nil)
            try await fixture.execute("UPDATE tasks SET state = 'completed', download_file = $2 WHERE id = $1", [task.id, task.id])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).hasDownloadedFile)

            let tenantID = fixture.tenant.id
            let tasks = fixture.tasks
            let names = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<6 { group.addTask { try await tasks.forgetDownloadedFile(tenantID: tenantID, taskID: task.id) } }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(names.compactMap { $0 } == [task.id])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).hasDownloadedFile == false)
        }
    }
}
