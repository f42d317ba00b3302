import FerryCore
import FerryStore
import FerryTestSupport
import HTTPTypes
import Synchronization
import Testing

/// What the API writes to the data folder (blobs, streamed upload bodies) stops at the disk's
/// reserve, as downloads do: before, a tenant's upload could fill the disk every tenant's
/// transfers write to.
@Suite("Blobs and streamed bodies stop at the disk's reserve")
struct UploadDiskReserveTests {
    /// A disk with a reserve of 1 MiB whose free space the test sets, and which may fill up
    /// after a number of looks.
    final class SimulatedDisk: Sendable {
        static let reserve: Int64 = 1 << 20
        let free: Atomic<Int64>
        /// Looks answered with `free` before the disk is full (nil: never full).
        let looksBeforeFull: Int?
        private let looks = Atomic<Int>(0)

        init(free: Int64, looksBeforeFull: Int? = nil) {
            self.free = Atomic(free)
            self.looksBeforeFull = looksBeforeFull
        }

        var space: DiskSpace {
            DiskSpace(path: "/", reserveBytes: Self.reserve) { _ in
                let look = self.looks.add(1, ordering: .relaxed).newValue
                if let full = self.looksBeforeFull, look > full { return 0 }
                return self.free.load(ordering: .relaxed)
            }
        }
    }

    static let insufficientStorage = HTTPResponse.Status(code: 507)

    @Test("at the reserve, a blob and a streamed body are refused with 507, and nothing is stored")
    func atTheReserve() async throws {
        let disk = SimulatedDisk(free: SimulatedDisk.reserve / 2)
        try await APIHarness.runFresh(diskSpace: disk.space) { api in
            let tenant = try await api.makeTenant()
            let problem = expectProblem(try await tenant.send(.put, "/v1/blobs", raw: [1, 2, 3]), status: Self.insufficientStorage)
            #expect(problem?.detail.contains("reserve") == true)
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, [
                "kind": "upload", "request": ["url": "http://127.0.0.1:9/in", "httpMethod": "PUT"], "body": ["stream": true],
            ])
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: [1, 2, 3]), status: Self.insufficientStorage)
            #expect(try await tenant.send(.get, "/v1/blobs").decode(ListReply<IdentifiedReply>.self).data.isEmpty)

            // Space comes back: the same requests are taken.
            disk.free.store(SimulatedDisk.reserve * 10, ordering: .relaxed)
            #expect(try await tenant.send(.put, "/v1/blobs", raw: [1, 2, 3]).status == .created)
            #expect(try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: [1, 2, 3]).status == .ok)
        }
    }

    @Test("a body declared larger than the room above the reserve is refused at once; one that meets the reserve while written stops there")
    func declaredOrReachedWhileWriting() async throws {
        let body = [UInt8](repeating: 9, count: 10 << 20)
        let tight = SimulatedDisk(free: SimulatedDisk.reserve + (2 << 20))
        try await APIHarness.runFresh(diskSpace: tight.space) { api in
            let tenant = try await api.makeTenant()
            expectProblem(try await tenant.send(.put, "/v1/blobs", raw: body), status: Self.insufficientStorage)
        }
        // Room for the declared length at first; full from the second look on (4 MiB in).
        let filling = SimulatedDisk(free: 1 << 30, looksBeforeFull: 1)
        try await APIHarness.runFresh(diskSpace: filling.space) { api in
            let tenant = try await api.makeTenant()
            expectProblem(try await tenant.send(.put, "/v1/blobs", raw: body), status: Self.insufficientStorage)
            #expect(try await tenant.send(.get, "/v1/blobs").decode(ListReply<IdentifiedReply>.self).data.isEmpty)
        }
    }
}
