import FerryTestSupport
import Foundation
import Testing

@testable import FerryEngine

@Suite("DirectorySyncs: folder fsyncs shared by renames that land together")
struct DirectorySyncsTests {
    @Test("callers syncing at once all return; a missing folder fails only its own callers")
    func failuresStayWithTheirFolder() async throws {
        let folder = try TestScratch.folder(named: "dirsync")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let blocking = BlockingPool(name: "dirsync-test", threadCount: 2)
        defer { blocking.shutdown() }
        let syncs = DirectorySyncs(blocking: blocking)
        let outcomes = await withTaskGroup(of: (Bool, Bool).self) { group in
            for index in 0..<64 {
                let missing = index % 8 == 0
                let path = missing ? "\(folder)/gone/file-\(index)" : "\(folder)/file-\(index)"
                group.addTask { (missing, (try? await syncs.syncFolder(of: path)) != nil) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 64)
        #expect(outcomes.allSatisfy { missing, synced in synced == !missing })
    }
}
