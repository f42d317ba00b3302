import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("An instance cancelled while the database is away")
struct CancelledShutdownTests {
    /// Cancelled (a service beside it failed) while the database is away, the ledger writer
    /// gives up what is left, and the hand-back stops waiting for ends that will not be written.
    /// It used to wait out the whole grace period, and spin through it: a cancelled sleep
    /// returns at once.
    @Test("ends within moments, not at the end of its grace period", .timeLimit(.minutes(1)))
    func endsAtOnce() async throws {
        let body = TestOrigin.pattern(count: 3_000_000, seed: 7)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"c1\"", bytesPerSecond: 500_000)
        }
        defer { origin.stop() }
        let database = try await TestDatabase.make(poolSize: 6, connectTimeout: .milliseconds(100))
        let ferry = try await EngineHarness(database: database, configure: { $0.shutdownGracePeriod = .seconds(15) })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let session = try await ferry.makeSession()
        let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/c.bin"))
        _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 200_000 }

        try await database.beginOutage()
        let cancelledAt = ContinuousClock.now
        await ferry.cancel()
        let took = ContinuousClock.now - cancelledAt
        try await database.endOutage()
        await database.close()
        #expect(took < .seconds(5), "the cancelled instance took \(took) to end")
    }
}
