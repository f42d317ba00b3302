import FerryCore
import FerryStore
import Foundation
import HTTPTypes
import Testing
import TestOrigin

@Suite("Resume data: cancelByProducingResumeData yields a token that resumes the download once; forged tokens are refused", .sharedHarnesses)
struct ResumeDataTests {
    /// An origin serving `body` at /big: slowly without `Range` (a first attempt is surely
    /// cancelled mid-way), at once to a resumption.
    private static func trickling(_ body: [UInt8], etag: String) throws -> TestOrigin {
        try TestOrigin { request, responder in
            let rate = request.header("Range") == nil ? 100_000 : nil
            try responder.serveResource(body, for: request, etag: etag, bytesPerSecond: rate)
        }
    }

    /// Starts a download of the origin's /big, lets 100 KB arrive, and cancels it producing resume data.
    private static func cancelledDownload(of origin: TestOrigin, by tenant: FerryClient, in sessionID: String) async throws -> (id: String, token: String) {
        let task = try await tenant.createTask(in: sessionID, ["kind": "download", "request": ["url": .string(origin.url("/big"))], "resume": true])
        try await waitUntil(timeout: .seconds(10)) { try await tenant.task(task.id).countOfBytesReceived > 100_000 }
        return (task.id, try #require(try await tenant.cancelByProducingResumeData(task.id)))
    }

    @Test("a slow download cancelled with resume data resumes with Range and If-Range, once")
    func resumesOnce() async throws {
        let body = TestOrigin.pattern(count: 600_000, seed: 3)
        let origin = try Self.trickling(body, etag: "\"strong-1\"")
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let (first, token) = try await Self.cancelledDownload(of: origin, by: tenant, in: session.id)

            #expect(token.hasPrefix("frd1."))
            let cancelled = try await tenant.task(first)
            #expect(cancelled.state == "completed")
            #expect(cancelled.error?.code == -999)
            #expect(cancelled.error?.resumeData == token)

            let resumed = try await tenant.createTask(in: session.id, ["kind": "download", "resumeData": .string(token), "resume": true])
            let done = try await tenant.task(resumed.id, wait: 20)
            #expect(done.state == "completed")
            #expect(done.error == nil)
            #expect(try await tenant.file(resumed.id).body == body, "the resumed file is whole and byte-exact")
            let resumption = try #require(origin.requests(path: "/big").last)
            #expect(resumption.header("Range")?.hasPrefix("bytes=") == true)
            #expect(resumption.header("Range") != "bytes=0-")
            #expect(resumption.header("If-Range") == "\"strong-1\"")

            let before = try await api.rowCounts()
            let again = try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks", json: ["kind": "download", "resumeData": .string(token)])
            expectProblem(again, status: .conflict, field: "resumeData")
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("identical retries of one resume, with one Idempotency-Key and sent at once, all answer the one task")
    func concurrentIdempotentResumes() async throws {
        let origin = try Self.trickling(TestOrigin.pattern(count: 600_000, seed: 6), etag: "\"strong-6\"")
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let (_, token) = try await Self.cancelledDownload(of: origin, by: tenant, in: session.id)
            let headers: HTTPFields = [try #require(HTTPField.Name("Idempotency-Key")): "resume-once"]
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks", json: ["kind": "download", "resumeData": .string(token)], headers: headers)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == .created || $0.status == .ok }, "\(replies.map(\.status))")
            #expect(Set(replies.compactMap { try? $0.decode(TaskReply.self).id }).count == 1, "\(replies)")
        }
    }

    @Test("resume data whose task's file was renamed into place, but whose end was never recorded, resumes from that whole file")
    func resumesFromAnUnrecordedFinishedFile() async throws {
        let body = TestOrigin.pattern(count: 600_000, seed: 4)
        let origin = try Self.trickling(body, etag: "\"strong-4\"")
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, ferry in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let (first, token) = try await Self.cancelledDownload(of: origin, by: tenant, in: session.id)
            // What an owner that died between renaming the finished file and recording the end
            // leaves (a default session's task is then completed with resume data, as here): the
            // whole file under the task's downloads name, no partial file.
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            let partial = try files.path(.partial, tenantID: tenant.tenantID, name: TenantFiles.partialName(taskID: first))
            #expect(FileManager.default.fileExists(atPath: partial))
            try FileManager.default.removeItem(atPath: partial)
            let finished = try files.path(.downloads, tenantID: tenant.tenantID, name: TenantFiles.downloadName(taskID: first))
            try Data(body).write(to: URL(fileURLWithPath: finished))

            let resumed = try await tenant.createTask(in: session.id, ["kind": "download", "resumeData": .string(token), "resume": true])
            let done = try await tenant.task(resumed.id, wait: 20)
            #expect(done.state == "completed")
            #expect(done.error == nil)
            #expect(try await tenant.file(resumed.id).body == body)
            // Continued after the whole file (answered 416: complete), not fetched again from 0.
            #expect(origin.requests(path: "/big").last?.header("Range") == "bytes=\(body.count)-")
        }
    }

    @Test("the task made from resume data has the original request whole, and times out by its timeoutInterval")
    func carriesTheWholeRequest() async throws {
        let body = TestOrigin.pattern(count: 600_000, seed: 5)
        let origin = try TestOrigin { request, responder in
            if request.header("Range") != nil {
                // The resumption stalls before answering: only the request's own timeout ends it.
                responder.pause(seconds: 60)
                return
            }
            try responder.serveResource(body, for: request, etag: "\"strong-2\"", bytesPerSecond: 100_000)
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let request: JSONValue = [
                "url": .string(origin.url("/big")), "timeoutInterval": 3, "cachePolicy": "reloadIgnoringLocalCacheData",
                "networkServiceType": "background",
            ]
            let first = try await tenant.createTask(in: session.id, ["kind": "download", "request": request, "resume": true])
            try await waitUntil(timeout: .seconds(10)) { try await tenant.task(first.id).countOfBytesReceived > 100_000 }
            let token = try #require(try await tenant.cancelByProducingResumeData(first.id))

            let resumed = try await tenant.createTask(in: session.id, ["kind": "download", "resumeData": .string(token), "resume": true])
            #expect(resumed.originalRequest["timeoutInterval"] == 3)
            #expect(resumed.originalRequest["cachePolicy"] == "reloadIgnoringLocalCacheData")
            #expect(resumed.originalRequest["networkServiceType"] == "background")
            #expect(resumed.originalRequest == first.originalRequest)
            // The session's timeoutIntervalForRequest is 60 s: a failure within the wait is the request's 3 s.
            let done = try await tenant.task(resumed.id, wait: 30)
            #expect(done.state == "completed")
            #expect(done.error?.code == -1001)
            #expect(origin.requests(path: "/big").last?.header("Range") != nil, "the resumption asked for the rest")
        }
    }

    /// Tokens a tenant could present that Ferry did not issue to it for a kept partial file.
    enum Forgery: String, CaseIterable, Sendable {
        case signedWithAnotherKey, tamperedPayload, tamperedSignature, anotherTenants, genuineButNothingKept

        var expectedStatus: HTTPResponse.Status { self == .genuineButNothingKept ? .conflict : .badRequest }

        func token(issuer: ResumeDataIssuer, tenantID: String, otherTenantID: String) -> String? {
            let checkpoint = TransferCheckpoint(
                partialFile: "tsk_gone.part", bytesOnDisk: 1000, validator: .strongETag("\"v1\""),
                url: "http://example.com/a", expectedTotalBytes: 5000
            )
            let request = TransferRequest(url: "http://example.com/a")
            func genuine(for tenant: String, by issuer: ResumeDataIssuer) -> String? {
                issuer.token(tenantID: tenant, taskID: "tsk_gone", originalRequest: request, checkpoint: checkpoint)
            }
            switch self {
            case .signedWithAnotherKey:
                return genuine(for: tenantID, by: ResumeDataIssuer(signingKey: [UInt8](repeating: 7, count: 32)))
            case .tamperedPayload:
                return genuine(for: tenantID, by: issuer).map { Self.flippingCharacter(in: $0, part: 1) }
            case .tamperedSignature:
                return genuine(for: tenantID, by: issuer).map { Self.flippingCharacter(in: $0, part: 2) }
            case .anotherTenants:
                return genuine(for: otherTenantID, by: issuer)
            case .genuineButNothingKept:
                return genuine(for: tenantID, by: issuer)
            }
        }

        private static func flippingCharacter(in token: String, part: Int) -> String {
            var parts = token.split(separator: ".").map(String.init)
            var characters = Array(parts[part])
            let middle = characters.count / 2
            characters[middle] = characters[middle] == "A" ? "B" : "A"
            parts[part] = String(characters)
            return parts.joined(separator: ".")
        }
    }

    @Test("forged or foreign resume data is refused naming resumeData, and nothing is written", arguments: Forgery.allCases)
    func refusesForgeries(_ forgery: Forgery) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let other = try await api.makeTenant(name: "other")
            let session = try await tenant.createSession()
            let token = try #require(forgery.token(issuer: api.services.resumeData, tenantID: tenant.tenantID, otherTenantID: other.tenantID))
            let before = try await api.rowCounts()

            let reply = try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks", json: ["kind": "download", "resumeData": .string(token)])

            expectProblem(reply, status: forgery.expectedStatus, field: forgery.expectedStatus == .badRequest ? "resumeData" : nil)
            #expect(!reply.text.contains(other.tenantID), "the problem does not reveal the other tenant")
            #expect(try await api.rowCounts() == before)
        }
    }
}

/// Polls `condition` until it holds, failing after `timeout`.
func waitUntil(timeout: Duration, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)")
            return
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}
