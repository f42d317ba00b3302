import Foundation

extension FerryClient {
    // MARK: Operators

    /// `GET /healthz`: the status code.
    func health() async throws -> Int {
        try await send("GET", "/healthz").status
    }

    /// `GET /readyz`.
    func readiness() async throws -> (status: Int, readiness: ReadinessAnswer?) {
        let answer = try await send("GET", "/readyz")
        return (answer.status, try? JSONDecoder().decode(ReadinessAnswer.self, from: answer.body))
    }

    /// `POST /admin/v1/tenants` (this client's token must be the operator token).
    func createTenant(name: String) async throws -> TenantAnswer {
        try await send("POST", "/admin/v1/tenants", json: Self.json(["name": name]))
            .decode(TenantAnswer.self, expecting: [201], "creating tenant \(name)")
    }

    // MARK: Sessions

    /// `POST /v1/sessions`; `status` tells 201 (created) from 200 (a background session re-attached).
    func createSession(_ configuration: [String: Any]) async throws -> (session: SessionAnswer, status: Int) {
        let answer = try await send("POST", "/v1/sessions", json: Self.json(["configuration": configuration]))
        return (try answer.decode(SessionAnswer.self, expecting: [200, 201], "creating a session"), answer.status)
    }

    /// `GET /v1/sessions`.
    func sessions() async throws -> [SessionAnswer] {
        try await send("GET", "/v1/sessions").decode(ListAnswer<SessionAnswer>.self, expecting: [200], "listing sessions").data
    }

    /// `GET /v1/sessions/{id}/tasks`.
    func tasks(inSession sessionID: String) async throws -> [TaskAnswer] {
        try await send("GET", "/v1/sessions/\(sessionID)/tasks").decode(ListAnswer<TaskAnswer>.self, expecting: [200], "listing tasks").data
    }

    // MARK: Tasks

    /// `POST /v1/sessions/{id}/tasks` for a download of `url`, or from `resumeData`.
    func createDownload(in sessionID: String, url: String? = nil, resumeData: String? = nil, resume: Bool = true) async throws -> TaskAnswer {
        var body: [String: Any] = ["kind": "download"]
        if let url { body["request"] = ["url": url] }
        if let resumeData { body["resumeData"] = resumeData }
        if resume { body["resume"] = true }
        return try await send("POST", "/v1/sessions/\(sessionID)/tasks", json: Self.json(body))
            .decode(TaskAnswer.self, expecting: [201], "creating a download task")
    }

    /// `GET /v1/tasks/{id}`, long-polling up to `wait` seconds until it completes.
    func task(_ id: String, wait: Int? = nil) async throws -> TaskAnswer {
        let query = wait.map { "?wait=\($0)" } ?? ""
        return try await send("GET", "/v1/tasks/\(id)\(query)", timeout: TimeInterval((wait ?? 0) + 30))
            .decode(TaskAnswer.self, expecting: [200], "reading task \(id)")
    }

    /// Long-polls (asking again as often as needed) until the task completes or `timeout` passes.
    func completion(of id: String, timeout: Duration) async throws -> TaskAnswer {
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = deadline - ContinuousClock.now
            let wait = max(0, min(120, Int(left.components.seconds)))
            let task = try await task(id, wait: wait)
            if task.state == "completed" || ContinuousClock.now >= deadline { return task }
        }
    }

    /// `POST /v1/tasks/{id}/resume`, `/suspend`, `/cancel` without a body, as the README's curl
    /// sends them; `body` sends JSON instead (`{}` is also allowed).
    func command(_ name: String, task id: String, body: Data? = nil) async throws -> TaskAnswer {
        try await send("POST", "/v1/tasks/\(id)/\(name)", json: body).decode(TaskAnswer.self, expecting: [200], "\(name) of task \(id)")
    }

    /// `GET /v1/tasks/{id}/file`: the downloaded bytes.
    func file(of id: String) async throws -> Data {
        let answer = try await send("GET", "/v1/tasks/\(id)/file", timeout: 120)
        guard answer.status == 200 else { throw HarnessError("file of \(id): \(answer.status) \(answer.text.prefix(500))") }
        return answer.body
    }
}
