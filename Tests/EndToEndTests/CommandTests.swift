import Foundation
import Testing

@Suite("ferry migrate and ferry tenant create, next to a running server")
struct CommandTests {
    @Test("migrate twice is fine; tenant create prints a key the running server accepts")
    func commands() async throws {
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("commands")
            let databaseURL = testbed.database?.conninfo

            for run in 1...2 {
                let migrate = try await FerryCommandLine.run(["migrate"], databaseURL: databaseURL, dataDirectory: testbed.dataDirectory)
                #expect(migrate.status == 0, "ferry migrate (run \(run)) failed:\n\(migrate.output)")
                #expect(migrate.output.contains("up to date"), "ferry migrate (run \(run)) printed:\n\(migrate.output)")
            }

            let created = try await FerryCommandLine.run(["tenant", "create", "cli tenant"], databaseURL: databaseURL, dataDirectory: testbed.dataDirectory)
            #expect(created.status == 0, "ferry tenant create failed:\n\(created.output)")
            let key = try #require(
                created.output.split(separator: "\n").first { $0.hasPrefix("API key (shown once): ") }
                    .map { String($0.dropFirst("API key (shown once): ".count)).trimmingCharacters(in: .whitespaces) },
                "no API key in:\n\(created.output)"
            )
            #expect(key.hasPrefix("fy_live_"))
            #expect(created.output.contains("\"cli tenant\""))

            let client = FerryClient(baseURL: ferry.baseURL, token: key)
            let (session, status) = try await client.createSession(["kind": "default"])
            #expect(status == 201)
            #expect(try await client.sessions().map(\.id) == [session.id])

            let stranger = FerryClient(baseURL: ferry.baseURL, token: key + "x")
            #expect(try await stranger.send("GET", "/v1/sessions").status == 401)
            #expect(try await FerryClient(baseURL: ferry.baseURL, token: nil).readiness().status == 200)
        }
    }

    @Test("a setting Ferry cannot use stops it at start, naming the variable", arguments: [
        ["FERRY_LOG_LEVEL": "DEBUG"], ["FERRY_MAX_DATA_TASK_BYTES": "0"], ["FERRY_MAX_DATA_TASK_BYTES": "16MiB"],
        ["FERRY_ADMIN_TOKEN": "operator-secret\n"],
    ])
    func unusableSettings(_ setting: [String: String]) async throws {
        try await Testbed.run { testbed in
            let result = try await FerryCommandLine.run(
                ["migrate"], databaseURL: testbed.database?.conninfo, dataDirectory: testbed.dataDirectory, environment: setting
            )
            #expect(result.status != 0)
            #expect(result.output.contains(try #require(setting.keys.first)), "printed:\n\(result.output)")
        }
    }

    @Test("ferry tenant create refuses an empty name")
    func emptyName() async throws {
        try await Testbed.run { testbed in
            let result = try await FerryCommandLine.run(["tenant", "create", ""], databaseURL: testbed.database?.conninfo, dataDirectory: testbed.dataDirectory)
            #expect(result.status != 0)
            #expect(result.output.contains("NAME"), "printed:\n\(result.output)")
        }
    }
}
