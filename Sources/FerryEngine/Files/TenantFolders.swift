import FerryStore
import Synchronization

/// A tenant's folders, created once per process on the blocking pool: every transfer and
/// every cache put needs them, and Ferry never removes them.
final class TenantFolders: Sendable {
    private let files: TenantFiles
    private let blocking: BlockingPool
    private let created = Mutex<Set<String>>([])

    init(files: TenantFiles, blocking: BlockingPool) {
        self.files = files
        self.blocking = blocking
    }

    func ensure(_ tenantID: String) async throws {
        guard !created.withLock({ $0.contains(tenantID) }) else { return }
        let files = self.files
        try await blocking.run { try files.createDirectories(tenantID: tenantID) }
        created.withLock { _ = $0.insert(tenantID) }
    }
}
