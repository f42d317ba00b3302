import Foundation
import Testing

@Suite("ferry serve without DATABASE_URL runs and stops its own PostgreSQL")
struct EmbeddedDatabaseTests {
    @Test("the embedded cluster is created under FERRY_DATA_DIR, serves the walkthrough, and stops with SIGTERM", .timeLimit(.minutes(2)))
    func embeddedDefault() async throws {
        let origin = try RecordingOrigin(size: 1024 * 1024 + 3)
        defer { origin.stop() }
        try await Testbed.run(embedded: true) { testbed in
            let ferry = try await testbed.start("embedded", readinessTimeout: .seconds(40))
            let clusterDirectory = (testbed.dataDirectory as NSString).appendingPathComponent("postgres")
            #expect(FileManager.default.fileExists(atPath: (clusterDirectory as NSString).appendingPathComponent("PG_VERSION")))
            let postmaster = try #require(ProcessTable.postmaster(of: clusterDirectory), "no postmaster.pid under \(clusterDirectory)")
            #expect(ProcessTable.isAlive(postmaster))

            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session
            let task = try await client.createDownload(in: session.id, url: origin.url)
            let done = try await client.completion(of: task.id, timeout: .seconds(20))
            #expect(done.state == "completed")
            #expect(done.error == nil)
            #expect(try await client.file(of: task.id) == Data(origin.body))

            let stopped = try await ferry.terminate(timeout: .seconds(20))
            #expect(stopped.status == 0, "ferry exited with \(stopped.status)\n\(ferry.logTail())")
            let gone = try await eventually(timeout: .seconds(10), every: .milliseconds(100)) { () -> Bool? in
                !ProcessTable.isAlive(postmaster) && ProcessTable.processes(mentioning: clusterDirectory).isEmpty ? true : nil
            }
            #expect(gone == true, "PostgreSQL still runs for \(clusterDirectory) after ferry stopped: \(ProcessTable.processes(mentioning: clusterDirectory))")
            #expect(!FileManager.default.fileExists(atPath: (clusterDirectory as NSString).appendingPathComponent("postmaster.pid")))
            Measurements.report("embedded", ["stop": Measurements.seconds(stopped.elapsed)])
        }
    }

    @Test("after kill -9 the next ferry serve adopts the orphaned cluster, and its SIGTERM stops it", .timeLimit(.minutes(2)))
    func adoptsOrphanedCluster() async throws {
        try await Testbed.run(embedded: true) { testbed in
            let clusterDirectory = (testbed.dataDirectory as NSString).appendingPathComponent("postgres")
            var ferry = try await testbed.start("crashing", readinessTimeout: .seconds(40))
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session
            let postmaster = try #require(ProcessTable.postmaster(of: clusterDirectory))

            try await ferry.kill()
            #expect(ProcessTable.isAlive(postmaster), "the cluster died with its owner; expected it to outlive a kill -9")

            ferry = try await testbed.start("crashing", readinessTimeout: .seconds(40))
            #expect(ProcessTable.postmaster(of: clusterDirectory) == postmaster, "the restart started a second cluster")
            let again = FerryClient(baseURL: ferry.baseURL, token: client.token)
            #expect(try await again.sessions().map(\.id) == [session.id], "the data did not survive")

            let stopped = try await ferry.terminate(timeout: .seconds(20))
            #expect(stopped.status == 0, "ferry exited with \(stopped.status)\n\(ferry.logTail())")
            let gone = try await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
                ProcessTable.isAlive(postmaster) ? nil : true
            }
            #expect(gone == true, "the adopted cluster (postmaster \(postmaster)) still runs after SIGTERM")
        }
    }
}
