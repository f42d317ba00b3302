import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Transfers survive shutdowns, and the data folder is reconciled after crashes")
struct DurabilityTests {
    @Test("a background download handed back at shutdown continues on the next instance from its checkpoint")
    func backgroundSurvivesShutdown() async throws {
        let body = TestOrigin.pattern(count: 4_000_000, seed: 3)
        let origin = try TestOrigin.slowly(serving: body, etag: "\"bg1\"", bytesPerSecond: 1_000_000)
        defer { origin.stop() }
        let database = try await TestDatabase.make(poolSize: 6)
        // Both instances use this folder, so it is the test's to remove, not theirs.
        let dataDirectory = try TestScratch.folder(named: "durable")
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }

        let first = try await EngineHarness(database: database, instanceID: "first", dataDirectory: dataDirectory)
        let session = try await first.makeSession(SessionConfiguration(kind: .background, identifier: "nightly"))
        let created = try await first.startTask(in: session, kind: .download, url: origin.url("/bg.bin"))
        // Wait until a checkpoint is on record, then shut the instance down gracefully.
        _ = try await first.task(created.id, timeout: .seconds(10)) { $0.countOfBytesReceived > 1_200_000 }
        await first.stop()
        let handedBack = try await first.tasks.find(tenantID: first.tenant.id, id: created.id)
        #expect(handedBack.state == .running)
        #expect(handedBack.countOfBytesReceived > 0)

        let second = try await EngineHarness(database: database, instanceID: "second", dataDirectory: dataDirectory, tenant: first.tenant)
        let task = try await second.completion(of: created.id)
        let events = try await second.eventTypes(of: created.id)
        await second.stop()
        await database.close()

        #expect(task.error == nil)
        #expect(try second.downloadedFile(of: created.id) == body)
        let requests = origin.requests(path: "/bg.bin")
        #expect(requests.count == 2)
        let range = try #require(requests.last?.header("Range"))
        let offset = Int(range.dropFirst("bytes=".count).dropLast()) ?? 0
        #expect(offset > 1_000_000, "resumed at \(range)")
        #expect(requests.last?.header("If-Range") == "\"bg1\"")
        #expect(events.contains("downloadTask.didResumeAtOffset"))
    }

    /// With no grace at all, the shutdown stops waiting at once, while the end (a checkpoint's
    /// fsync first) is still on its way to the writer: it is written all the same.
    @Test("a default session's transfer completes with -1005 and resume data at shutdown, whatever the grace period", arguments: [
        Duration.seconds(20), .zero,
    ])
    func defaultSessionAtShutdown(grace: Duration) async throws {
        let body = TestOrigin.pattern(count: 3_000_000, seed: 4)
        let origin = try TestOrigin.slowly(serving: body, etag: "\"d1\"", bytesPerSecond: 800_000)
        defer { origin.stop() }
        let ferry = try await EngineHarness(configure: { $0.shutdownGracePeriod = grace })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let session = try await ferry.makeSession()
        let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/d.bin"))
        _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 500_000 }
        await ferry.stop()
        let task = try await ferry.tasks.find(tenantID: ferry.tenant.id, id: created.id)
        await ferry.database.close()
        #expect(task.state == .completed, "the end was not written: the task is still \(task.state)")
        #expect(task.error?.code == -1005)
        let token = try ferry.resumeData.decode(try #require(task.error?.resumeData), tenantID: ferry.tenant.id)
        #expect(token.bytesOnDisk > 0)
    }

    @Test("at shutdown a default session's tasks claimed but not started (waiting for a connection) go back, unharmed")
    func unstartedTasksGoBackAtShutdown() async throws {
        let body = TestOrigin.pattern(count: 3_000_000, seed: 5)
        let origin = try TestOrigin.slowly(serving: body, etag: "\"d2\"", bytesPerSecond: 800_000)
        defer { origin.stop() }
        let ferry = try await EngineHarness()
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        var configuration = SessionConfiguration(kind: .default)
        configuration.httpMaximumConnectionsPerHost = 1
        let session = try await ferry.makeSession(configuration)
        let running = try await ferry.startTask(in: session, kind: .download, url: origin.url("/a.bin"))
        let waiting = [
            try await ferry.startTask(in: session, kind: .download, url: origin.url("/b.bin")),
            try await ferry.startTask(in: session, kind: .download, url: origin.url("/c.bin")),
        ]
        _ = try await ferry.task(running.id) { $0.countOfBytesReceived > 200_000 }
        // The others are claimed (a host's queue holds up to four times its limit) and wait.
        let leased = try await ferry.database.database.pool.withConnection { connection in
            try connection.query("SELECT count(*) FROM tasks WHERE id = ANY($1) AND lease_owner IS NOT NULL", [waiting.map(\.id)])
                .first?.decode(0, as: Int64.self)
        }
        #expect(leased == 2)
        await ferry.stop()
        let ended = try await ferry.tasks.find(tenantID: ferry.tenant.id, id: running.id)
        var handedBack: [TaskRecord] = []
        for task in waiting { handedBack.append(try await ferry.tasks.find(tenantID: ferry.tenant.id, id: task.id)) }
        let owners = try await ferry.database.database.pool.withConnection { connection in
            try connection.query("SELECT count(*) FROM tasks WHERE id = ANY($1) AND lease_owner IS NULL", [waiting.map(\.id)])
                .first?.decode(0, as: Int64.self)
        }
        await ferry.database.close()
        #expect(ended.error?.code == -1005, "the transfer under way ends as before")
        for task in handedBack {
            #expect(task.state == .running, "\(task.id) was never started: it waits for the next instance, not completed")
            #expect(task.error == nil)
        }
        #expect(owners == 2)
        #expect(origin.requests(path: "/b.bin").isEmpty && origin.requests(path: "/c.bin").isEmpty)
    }

    @Test("the reconciler removes orphans and restores a finished file that was never committed")
    func reconciler() async throws {
        // The instance's own reconciler stays off: this test runs one by hand.
        try await EngineHarness.run(configure: { $0.reconcilesStorage = false }) { ferry in
            let session = try await ferry.makeSession()
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            try files.createDirectories(tenantID: ferry.tenant.id)
            // A running download (suspended here so no engine touches it) whose finished file was
            // renamed into place before the instance died.
            let running = try await ferry.tasks.create(
                tenantID: ferry.tenant.id, sessionID: session.id,
                TaskCreation(kind: .download, request: TransferRequest(url: "http://127.0.0.1:9/x")),
                request: TransferRequest(url: "http://127.0.0.1:9/x"), host: "127.0.0.1", origin: .init()
            ).task
            let old = Date().addingTimeInterval(-600)
            func write(_ area: TenantFiles.Area, _ name: String) throws -> String {
                let path = try files.path(area, tenantID: ferry.tenant.id, name: name)
                try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
                return path
            }
            let orphanPartial = try write(.partial, "tsk_gone.part")
            let orphanDownload = try write(.downloads, "tsk_gone")
            let uncommitted = try write(.downloads, running.id)
            // A streamed body whose task is gone, and one of a task that has not ended.
            let orphanStream = try write(.streams, TenantFiles.streamName(taskID: "tsk_gone", generation: 1))
            let orphanStreamDone = try write(.streams, TenantFiles.streamDoneName(taskID: "tsk_gone", generation: 1))
            let liveStream = try write(.streams, TenantFiles.streamName(taskID: running.id, generation: 1))
            // An upload cut by a crash, a blob renamed into place whose row never committed, and
            // a blob with its row.
            let cutUpload = try write(.blobs, "blb_cut.uploading")
            let uncommittedBlob = try write(.blobs, "blb_uncommitted")
            let kept = try await ferry.database.database.blobs.create(id: "blb_kept", tenantID: ferry.tenant.id, size: 3, sha256: "00")
            let keptBlob = try write(.blobs, kept.id)
            // A cache body whose entry's row never committed, and one an entry has.
            let orphanCacheBody = try write(.cache, "cch_orphan")
            let cached = CachedResponse(
                url: "http://127.0.0.1:9/cached", request: TransferRequest(url: "http://127.0.0.1:9/cached"),
                head: ResponseHead(statusCode: 200, fields: []), requestTime: Date(), responseTime: Date(), bodyKey: "cch_kept", bodySize: 3
            )
            _ = try await ferry.database.database.cache.put(
                [CacheStore.Put(sessionID: session.id, key: "GET http://127.0.0.1:9/cached", entry: cached)], capacity: 1_000_000
            )
            let keptCacheBody = try write(.cache, "cch_kept")
            let freshOrphan = try files.path(.partial, tenantID: ferry.tenant.id, name: "tsk_new.part")
            try Data([9]).write(to: URL(fileURLWithPath: freshOrphan))
                // Tasks someone holds (under a lease that lasts: the harness's reaper takes lapsed
            // ones): a download whose finished file waits for its completion to be written (the
            // database away longer than the grace period), and a data task its delegate turned
            // into a download, with its partial file and its finished file.
            func held(_ kind: TaskKind) async throws -> String {
                let task = try await ferry.tasks.create(
                    tenantID: ferry.tenant.id, sessionID: session.id,
                    TaskCreation(kind: kind, request: TransferRequest(url: "http://127.0.0.1:9/y")),
                    request: TransferRequest(url: "http://127.0.0.1:9/y"), host: "127.0.0.1", origin: .init()
                ).task
                try await ferry.database.database.pool.withConnection { connection in
                    try connection.execute(
                        "UPDATE tasks SET state = 'running', lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 hour' WHERE id = $1",
                        [task.id]
                    )
                }
                return task.id
            }
            let finishing = try write(.downloads, try await held(.download))
            let converted = try await held(.data)
            let becameDownload = try write(.partial, TenantFiles.partialName(taskID: converted))
            let becameDownloadFinished = try write(.downloads, TenantFiles.downloadName(taskID: converted))

            let reconciler = StorageReconciler(
                files: files, storage: ferry.database.database.storage,
                blocking: BlockingPool(name: "test-files", threadCount: 1), logger: quietLogger
            )
            let report = try await reconciler.reconcile()
            #expect(report == .init(
                removedPartials: 1, restoredDownloads: 1, removedDownloads: 1, removedStreams: 2, removedBlobs: 2, removedCacheBodies: 1
            ))
            #expect(!FileManager.default.fileExists(atPath: orphanCacheBody))
            #expect(FileManager.default.fileExists(atPath: keptCacheBody))
            #expect(!FileManager.default.fileExists(atPath: cutUpload) && !FileManager.default.fileExists(atPath: uncommittedBlob))
            #expect(FileManager.default.fileExists(atPath: keptBlob))
            #expect(!FileManager.default.fileExists(atPath: orphanStream) && !FileManager.default.fileExists(atPath: orphanStreamDone))
            #expect(FileManager.default.fileExists(atPath: liveStream))
            #expect(!FileManager.default.fileExists(atPath: orphanPartial))
            #expect(!FileManager.default.fileExists(atPath: orphanDownload))
            #expect(!FileManager.default.fileExists(atPath: uncommitted))
            #expect(FileManager.default.fileExists(atPath: try files.path(.partial, tenantID: ferry.tenant.id, name: "\(running.id).part")))
            #expect(FileManager.default.fileExists(atPath: freshOrphan), "files younger than the grace period are left alone")
            #expect(FileManager.default.fileExists(atPath: finishing), "a held download's finished file stays where its completion will name it")
            #expect(FileManager.default.fileExists(atPath: becameDownload), "a held task's partial file stays")
            #expect(FileManager.default.fileExists(atPath: becameDownloadFinished), "a held data task's finished download stays")
        }
    }
}
