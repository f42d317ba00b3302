import FerryCore
import Testing

/// URLSessionTask's `priority` and `taskDescription`, and URLSession's `sessionDescription`,
/// can be changed after creation.
@Suite("PATCH changes a task's priority and taskDescription and a session's sessionDescription", .sharedHarnesses)
struct MutablePropertiesTests {
    @Test("a task's priority and description change, are shown back, and null clears the description")
    func patchTask() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"], "taskDescription": "first"])

            let changed = try await tenant.call(.patch, "/v1/tasks/\(task.id)", json: ["priority": 0.9, "taskDescription": "second"], expecting: .ok, as: TaskReply.self)
            #expect(changed.priority == 0.9)
            #expect(changed.taskDescription == "second")
            #expect(try await tenant.task(task.id).priority == 0.9)

            let onlyPriority = try await tenant.call(.patch, "/v1/tasks/\(task.id)", json: ["priority": 0.1], expecting: .ok, as: TaskReply.self)
            #expect(onlyPriority.priority == 0.1)
            #expect(onlyPriority.taskDescription == "second", "an absent member keeps its value")

            let cleared = try await tenant.call(.patch, "/v1/tasks/\(task.id)", json: ["taskDescription": nil], expecting: .ok, as: TaskReply.self)
            #expect(cleared.taskDescription == nil)
            #expect(cleared.priority == 0.1)
        }
    }

    @Test("a session's description changes, also once it is invalidated")
    func patchSession() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let changed = try await tenant.call(.patch, "/v1/sessions/\(session.id)", json: ["sessionDescription": "nightly"], expecting: .ok, as: SessionReply.self)
            #expect(changed.sessionDescription == "nightly")
            #expect(try await tenant.session(session.id).sessionDescription == "nightly")
            _ = try await tenant.send(.post, "/v1/sessions/\(session.id)/finishTasksAndInvalidate")
            let cleared = try await tenant.call(.patch, "/v1/sessions/\(session.id)", json: ["sessionDescription": nil], expecting: .ok, as: SessionReply.self)
            #expect(cleared.sessionDescription == nil)
        }
    }

    @Test("bad values are a 400 naming the field; another tenant's ids are 404")
    func badInput() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let other = try await api.makeTenant(name: "other")
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])
            let cases: [(JSONValue, String)] = [
                (["priority": 1.5], "priority"), (["priority": -0.1], "priority"), (["priority": "high"], "priority"),
                (["taskDescription": 7], "taskDescription"), (["taskDescription": .repeated("d", count: 4097)], "taskDescription"),
                (["state": "running"], "state"), (["kind": "download"], "kind"),
            ]
            for (body, field) in cases {
                expectProblem(try await tenant.send(.patch, "/v1/tasks/\(task.id)", json: body), status: .badRequest, field: field)
            }
            expectProblem(try await tenant.send(.patch, "/v1/tasks/\(task.id)", json: ["a"]), status: .badRequest)
            expectProblem(try await tenant.send(.patch, "/v1/tasks/\(task.id)"), status: .badRequest)
            expectProblem(try await tenant.send(.patch, "/v1/sessions/\(session.id)", json: ["sessionDescription": false]), status: .badRequest, field: "sessionDescription")
            expectProblem(try await tenant.send(.patch, "/v1/sessions/\(session.id)", json: ["configuration": ["kind": "default"]]), status: .badRequest, field: "configuration")
            expectProblem(try await other.send(.patch, "/v1/tasks/\(task.id)", json: ["priority": 1]), status: .notFound)
            expectProblem(try await other.send(.patch, "/v1/sessions/\(session.id)", json: ["sessionDescription": "x"]), status: .notFound)
            #expect(try await tenant.task(task.id).priority == 0.5)
        }
    }
}
