import FerryCore
import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// A full disk does not stay full: downloads stop at the free-space reserve and give their
/// space back, and partial files count toward the tenant's `maxStoredBytes`.
@Suite("The disk's free-space reserve and stored bytes")
struct DiskReserveTests {
    /// A disk of `capacity` bytes holding the data folder and nothing else: free space is the
    /// capacity less the files in the folder (the machine's real disk is shared and moves).
    static func simulatedDisk(capacity: Int64) -> @Sendable (String) -> Int64? {
        { path in
            var used: Int64 = 0
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let name = enumerator?.nextObject() as? String {
                let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)")
                if attributes?[.type] as? FileAttributeType == .typeRegular {
                    used += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
                }
            }
            return capacity - used
        }
    }

    @Test("a download that reaches the reserve fails with -3003, without resume data or partial file, and the next download succeeds")
    func reserveStopsADownloadAndTheDiskRecovers() async throws {
        let big = TestOrigin.pattern(count: 40 * 1024 * 1024, seed: 5)
        let small = TestOrigin.pattern(count: 2 * 1024 * 1024, seed: 6)
        let origin = try TestOrigin(TestOrigin.routes([
            "/big": { request, responder in try responder.serveResource(big, for: request, etag: "\"big\"") },
            "/small": { request, responder in try responder.serveResource(small, for: request, etag: "\"small\"") },
        ]))
        defer { origin.stop() }
        let megabyte: Int64 = 1024 * 1024
        try await EngineHarness.run(configure: { configuration in
            // 24 MiB of disk, 8 of them reserved: downloads may fill about 16.
            configuration.diskSpace = DiskSpace(
                path: configuration.dataDirectory, reserveBytes: 8 * megabyte, measure: Self.simulatedDisk(capacity: 24 * megabyte)
            )
        }) { ferry in
            let session = try await ferry.makeSession()

            let stopped = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/big")).id)
            let partials = try FileManager.default.contentsOfDirectory(
                atPath: try TenantFiles(dataDirectory: ferry.dataDirectory).directory(.partial, tenantID: ferry.tenant.id)
            )
            let next = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/small")).id)

            #expect(stopped.error?.code == URLErrorCode.cannotWriteToFile.rawValue, "\(String(describing: stopped.error))")
            #expect(stopped.error?.reason?.contains("reserve") == true)
            #expect(stopped.error?.resumeData == nil, "no resume data holds the space")
            #expect(partials.isEmpty, "the partial file is gone: \(partials)")
            #expect(next.error == nil, "the disk recovered by itself: \(String(describing: next.error))")
            #expect(try ferry.downloadedFile(of: next.id) == small)
        }
    }

    @Test("a partial file kept for resume data counts toward the tenant's stored bytes")
    func partialFilesAreStoredBytes() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 3_000_000), for: request, etag: "\"p1\"", resetAfter: 1_500_000)
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let before = try await ferry.database.database.tenants.storedBytes(tenantID: ferry.tenant.id)

            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/p")).id)
            let resumeData = try #require(task.error?.resumeData, "a reset download keeps its partial file for resume data")
            let token = try ferry.resumeData.decode(resumeData, tenantID: ferry.tenant.id)
            let after = try await ferry.database.database.tenants.storedBytes(tenantID: ferry.tenant.id)

            #expect(before == 0)
            #expect(token.bytesOnDisk > 0)
            #expect(after == token.bytesOnDisk, "stored bytes count the partial file")
        }
    }
}
