import FerryCore
import Testing

@Suite("POST /v1/sessions/{id}/tasks: every field of the body and of request is a 4xx naming it, and nothing is written", .sharedHarnesses)
struct TaskCreationValidationTests {
    static let dataTask: JSONValue = ["kind": "data", "request": ["url": "http://example.com/a"]]
    static let uploadTask: JSONValue = ["kind": "upload", "request": ["url": "http://example.com/a"], "body": ["text": "hello"]]

    /// A data task with `path` set to `value`; the field at fault is `path` unless given.
    static func data(_ path: String, _ value: JSONValue?, field: String? = nil) -> BadInput {
        BadInput("\(path) = \(value?.serializedText ?? "absent")", dataTask.setting(path, to: value), field: field ?? path)
    }

    static func upload(_ path: String, _ value: JSONValue?, field: String? = nil) -> BadInput {
        BadInput("upload \(path) = \(value?.serializedText ?? "absent")", uploadTask.setting(path, to: value), field: field ?? path)
    }

    static func header(_ name: String, _ value: JSONValue) -> BadInput {
        data("request.allHTTPHeaderFields", [name: value], field: "request.allHTTPHeaderFields.\(name)")
    }

    static let bodyAndKind: [BadInput] = [
        data("kind", nil),
        data("kind", "stream"),
        data("kind", "Data"),
        data("kind", 3),
        data("kind", ["data"]),
        data("request", nil),
        data("request", "http://example.com/a"),
        data("request", [["url": "http://example.com/a"]]),
        data("resume", "yes"),
        data("resume", 1),
        data("priority", -0.1),
        data("priority", 1.5),
        data("priority", 1e308),
        data("priority", "high"),
        data("priority", true),
        data("taskDescription", 5),
        data("taskDescription", .repeated("t", count: 4097)),
        data("taskDescription", "nightly\u{0}report"),
        data("earliestBeginDate", "tomorrow"),
        data("earliestBeginDate", ""),
        data("earliestBeginDate", 1_767_225_600),
        data("earliestBeginDate", "2026-13-01T00:00:00Z"),
        data("earliestBeginDate", "2026-02-30T12:00:00Z"),
        data("earliestBeginDate", "2026-01-31T25:00:00Z"),
        data("earliestBeginDate", "2026-01-31 12:00:00"),
        data("earliestBeginDate", .string("2026-01-31T12:00:00Z" + String(repeating: "0", count: 50))),
        data("delegate", "https://hooks.example/"),
        data("delegate.url", "gopher://hooks.example/", field: "delegate.url"),
        data("delegate", ["url": "https://hooks.example/", "events": "all"], field: "delegate.events"),
        data("delegate", ["url": "https://hooks.example/", "secret": "whsec_!!!"], field: "delegate.secret"),
        data("delegate", ["url": "https://hooks.example/", "events": ["task.didCompleteWithError", 7]], field: "delegate.events[1]"),
        data("url", "http://example.com/a"),
        data("Kind", "data"),
        data("body", ["text": "a body"]),
        data("resumeData", "frd1.AAAA.AAAA"),
    ]

    static let request: [BadInput] = [
        data("request.url", nil),
        data("request.url", ""),
        data("request.url", 7),
        data("request.url", "ftp://example.com/a"),
        data("request.url", "file:///etc/passwd"),
        data("request.url", "javascript:alert(1)"),
        data("request.url", "gopher://example.com/"),
        data("request.url", "data:text/plain,hello"),
        data("request.url", "example.com/a"),
        data("request.url", "/relative/path"),
        data("request.url", "http://"),
        data("request.url", "http:///path-only"),
        data("request.url", "http:/example.com/a"),
        data("request.url", "http:example.com/a"),
        data("request.url", "http://exa mple.com/"),
        data("request.url", "http://example.com/\r\nX-Injected: 1"),
        data("request.url", "http://example.com/\u{0}"),
        data("request.url", "http://[::1"),
        data("request.url", "http://example.com:99999/"),
        // Names no resolver takes: they made a 500 (an index entry over PostgreSQL's limit) or a
        // task that failed at once.
        data("request.url", .string("http://" + Array(repeating: String(repeating: "a", count: 60), count: 50).joined(separator: ".") + "/")),
        data("request.url", .string("http://" + String(repeating: "a", count: 64) + ".example/")),
        data("request.url", "http://bücher.example/"),
        // curl will not send a NUL in credentials: the task failed with -1000 at its transfer.
        data("request.url", "http://u:p%00w@example.com/"),
        data("request.url", "http://u%00@example.com/"),
        data("request.url", .string("http://example.com/" + String(repeating: "a", count: 8200))),
        data("request.httpMethod", ""),
        data("request.httpMethod", 5),
        data("request.httpMethod", "GET /x"),
        data("request.httpMethod", "G\r\nET"),
        data("request.httpMethod", "CONNECT"),
        data("request.httpMethod", "trace"),
        data("request.httpMethod", .repeated("M", count: 33)),
        data("request.allHTTPHeaderFields", "X-A: 1"),
        data("request.allHTTPHeaderFields", [["X-A": "1"]]),
        header("X-A", true),
        header("X-A", "v\r\nX-Injected: 1"),
        header("X-A", "v\nX-Injected: 1"),
        header("X-A", "v\rb"),
        header("X-A", "v\u{0}"),
        header("X-A", "v\u{1}b"),
        header("X-A", "v\u{7F}b"),
        header("X(A)", "v"),
        header("X A", "v"),
        header("Transfer-Encoding", "chunked"),
        header("host", "evil.example"),
        header("Connection", "close"),
        header("X-Big", .repeated("b", count: 8193)),
        data("request.allHTTPHeaderFields", .object(Dictionary(uniqueKeysWithValues: (0...100).map { ("X-H\($0)", JSONValue.string("v")) }))),
        data("request.timeoutInterval", 0),
        data("request.timeoutInterval", -1),
        data("request.timeoutInterval", "10"),
        data("request.timeoutInterval", 1e9),
        data("request.cachePolicy", "never"),
        data("request.cachePolicy", 1),
        data("request.httpBody", "not base64!"),
        data("request.httpBody", 12),
        data("request.httpBody", ["text": "hello"]),
        data("request.headers", ["X-A": "1"]),
        data("request.body", "aGVsbG8="),
        data("request.allowsCellularAccess", "no"),
        data("request.allowsExpensiveNetworkAccess", 0),
        data("request.allowsConstrainedNetworkAccess", "true"),
        data("request.networkServiceType", "bulk"),
        data("request.networkServiceType", true),
        data("request.multipathServiceType", "handover"),
        data("countOfBytesClientExpectsToSend", -2),
        data("countOfBytesClientExpectsToSend", 1.5),
        data("countOfBytesClientExpectsToSend", "100"),
        data("countOfBytesClientExpectsToReceive", 1e300),
        data("countOfBytesClientExpectsToReceive", [100]),
    ]

    static let uploadBodies: [BadInput] = [
        upload("body", nil),
        upload("body", "hello"),
        upload("body", [:]),
        upload("body", ["text": "a", "base64": "YQ=="]),
        // null counts as absent, so the body names no source at all.
        upload("body", ["base64": nil], field: "body"),
        upload("body", ["base64": "!!not base64"], field: "body.base64"),
        upload("body", ["base64": 5], field: "body.base64"),
        upload("body", ["text": 5], field: "body.text"),
        upload("body", ["text": .repeated("x", count: 8 * 1024 * 1024 + 1)], field: "body.text"),
        upload("body", ["stream": false], field: "body.stream"),
        upload("body", ["stream": "yes"], field: "body.stream"),
        upload("body", ["blob": "file.txt"], field: "body.blob"),
        upload("body", ["blob": "blb_0123456789"], field: "body.blob"),
        upload("body", ["blob": ""], field: "body.blob"),
        upload("body", ["text": "a", "encoding": "utf-8"], field: "body.encoding"),
        upload("request.httpBody", "aGVsbG8="),
        upload("resumeData", "frd1.AAAA.AAAA"),
    ]

    static let resumeDataValues: [BadInput] = [
        BadInput("resumeData with request", ["kind": "download", "request": ["url": "http://example.com/a"], "resumeData": "frd1.AAAA.AAAA"], field: "request"),
        BadInput("resumeData empty", ["kind": "download", "resumeData": ""], field: "resumeData"),
        BadInput("resumeData a number", ["kind": "download", "resumeData": 12], field: "resumeData"),
        BadInput("resumeData an object", ["kind": "download", "resumeData": ["url": "http://example.com/a"]], field: "resumeData"),
        BadInput("resumeData garbage", ["kind": "download", "resumeData": "garbage"], field: "resumeData"),
        BadInput("resumeData of a future version", ["kind": "download", "resumeData": "frd9.AAAA.AAAA"], field: "resumeData"),
        BadInput("resumeData with standard base64", ["kind": "download", "resumeData": "frd1.a+b/.c=="], field: "resumeData"),
        BadInput("resumeData with two parts", ["kind": "download", "resumeData": "frd1.AAAA"], field: "resumeData"),
        BadInput("resumeData 64 KiB + 1", ["kind": "download", "resumeData": .repeated("A", count: 64 * 1024 + 1)], field: "resumeData"),
    ]

    static let syntax: [BadInput] = [
        BadInput("a trailing comma", raw: #"{"kind":"data","request":{"url":"http://example.com/a"},}"#),
        BadInput(
            "kind twice", raw: #"{"kind":"data","kind":"download","request":{"url":"http://example.com/a"}}"#, field: "kind"
        ),
    ]

    static let cases = bodyAndKind + request + uploadBodies + resumeDataValues + syntax + BadInput.malformedBodies

    @Test("refused", arguments: cases)
    func refuses(_ input: BadInput) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            try await input.expectRefused(.post, "/v1/sessions/\(session.id)/tasks", with: tenant, in: api)
        }
    }

    @Test("bodies with every field set are accepted, and reported back as sent")
    func acceptsEveryField() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let data: JSONValue = [
                "kind": "data",
                "request": [
                    "url": "https://example.com/a?q=1", "httpMethod": "PATCH", "allHTTPHeaderFields": ["X-Trace": "t-1", "Accept": "*/*"],
                    "timeoutInterval": 12.5, "cachePolicy": "reloadIgnoringLocalCacheData", "httpBody": "aGVsbG8=",
                ],
                "priority": 0.75, "taskDescription": "nightly ☃ report", "earliestBeginDate": "2030-01-31T12:00:00Z", "resume": false,
            ]
            let upload: JSONValue = ["kind": "upload", "request": ["url": "http://example.com/up"], "body": ["base64": "AAEC"], "priority": 0]

            let created = try await tenant.createTask(in: session.id, data)
            let uploaded = try await tenant.createTask(in: session.id, upload)

            #expect(created.kind == "data")
            #expect(created.state == "suspended")
            #expect(created.priority == 0.75)
            #expect(created.taskDescription == "nightly ☃ report")
            #expect(created.originalRequest["httpMethod"] == "PATCH")
            #expect(created.originalRequest["allHTTPHeaderFields"] == ["X-Trace": "t-1", "Accept": "*/*"])
            #expect(created.originalRequest["timeoutInterval"] == 12.5)
            #expect(created.originalRequest["httpBodyLength"] == 5)
            #expect(created.taskIdentifier == 1)
            #expect(uploaded.originalRequest["httpMethod"] == "POST", "an upload without a method uses POST")
            #expect(uploaded.originalRequest["httpBodyLength"] == 3)
            #expect(uploaded.taskIdentifier == 2)
            let read = try await tenant.task(created.id)
            #expect(read.priority == 0.75)
            #expect(read.originalRequest == created.originalRequest)
        }
    }

    @Test("URLRequest's network access fields and the client's byte estimates are accepted and shown back")
    func networkAccessAndEstimates() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let request: JSONValue = [
                "url": "http://example.com/a", "allowsCellularAccess": false, "allowsExpensiveNetworkAccess": false,
                "allowsConstrainedNetworkAccess": true, "networkServiceType": "background",
            ]
            let created = try await tenant.call(
                .post, "/v1/sessions/\(session.id)/tasks",
                json: ["kind": "download", "request": request, "countOfBytesClientExpectsToSend": 200, "countOfBytesClientExpectsToReceive": 5_000_000],
                expecting: .created, as: JSONValue.self
            )
            let read = try await tenant.call(.get, "/v1/tasks/\(created["id"]?.stringValue ?? "")", expecting: .ok, as: JSONValue.self)
            for task in [created, read] {
                #expect(task["originalRequest"]?["allowsCellularAccess"] == false)
                #expect(task["originalRequest"]?["allowsExpensiveNetworkAccess"] == false)
                #expect(task["originalRequest"]?["allowsConstrainedNetworkAccess"] == true)
                #expect(task["originalRequest"]?["networkServiceType"] == "background")
                #expect(task["countOfBytesClientExpectsToSend"] == 200)
                #expect(task["countOfBytesClientExpectsToReceive"] == 5_000_000)
            }
            let plain = try await tenant.call(.post, "/v1/sessions/\(session.id)/tasks", json: Self.dataTask, expecting: .created, as: JSONValue.self)
            #expect(plain["countOfBytesClientExpectsToSend"] == -1)
            #expect(plain["countOfBytesClientExpectsToReceive"] == -1)
            #expect(plain["originalRequest"]?.objectValue?.keys.contains("networkServiceType") == false, "URLRequest's defaults are not spelt out")

            // URLSessionTask's estimates are settable later too.
            let id = created["id"]?.stringValue ?? ""
            let patched = try await tenant.call(.patch, "/v1/tasks/\(id)", json: ["countOfBytesClientExpectsToReceive": 7], expecting: .ok, as: JSONValue.self)
            #expect(patched["countOfBytesClientExpectsToReceive"] == 7)
            #expect(patched["countOfBytesClientExpectsToSend"] == 200)
            expectProblem(try await tenant.send(.patch, "/v1/tasks/\(id)", json: ["countOfBytesClientExpectsToSend": -5]), status: .badRequest, field: "countOfBytesClientExpectsToSend")
        }
    }

    @Test("a request.httpBody longer than the tenant's maxTaskBytes is refused naming it, alone or in a batch, and nothing is written")
    func httpBodyCountsAgainstMaxTaskBytes() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let patched = try await api.operatorClient.send(.patch, "/admin/v1/tenants/\(tenant.tenantID)", json: ["quotas": ["maxTaskBytes": 4]])
            #expect(patched.status == .ok)
            let session = try await tenant.createSession()
            // "aGVsbG8=" is "hello": five bytes.
            let task = Self.dataTask.setting("request.httpBody", to: "aGVsbG8=")
            try await BadInput("alone", task, field: "request.httpBody", status: .forbidden)
                .expectRefused(.post, "/v1/sessions/\(session.id)/tasks", with: tenant, in: api)
            try await BadInput("in a batch", ["tasks": [Self.dataTask, task]], field: "tasks[1].request.httpBody", status: .forbidden)
                .expectRefused(.post, "/v1/sessions/\(session.id)/tasks/batch", with: tenant, in: api)
            // Four bytes fit.
            _ = try await tenant.createTask(in: session.id, Self.dataTask.setting("request.httpBody", to: "aGVsbA=="))
        }
    }

    @Test("a priority is kept as sent, not rounded to a Float")
    func priorityIsKept() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()

            let task = try await tenant.createTask(in: session.id, Self.dataTask.setting("priority", to: 0.123456789))

            #expect(task.priority == 0.123456789)
        }
    }
}
