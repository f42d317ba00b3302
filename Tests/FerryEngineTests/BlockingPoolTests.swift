import Foundation
import Testing

@testable import FerryEngine

@Suite("BlockingPool: dedicated threads for blocking file work")
struct BlockingPoolTests {
    @Test("its threads carry their names in the kernel, as top -H and gdb show them")
    func threadsAreNamed() async throws {
        let blocking = BlockingPool(name: "pool-test", threadCount: 1)
        defer { blocking.shutdown() }
        let name = try await blocking.run { try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) }
        #expect(name.trimmingCharacters(in: .newlines) == "pool-test-0")
    }
}
