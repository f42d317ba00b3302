import FerryCore
import FerryStore
import Foundation
import Logging
import Synchronization

/// The engine's side of each session's URL cache: the decision before a transfer (answer from
/// the cache, revalidate, fetch, or fail with -1009), storing what may be stored after it, and
/// invalidation by unsafe methods. Default and background sessions keep the cache in
/// PostgreSQL and the tenant's cache folder; ephemeral sessions in this instance's memory.
final class URLCacheCoordinator: Sendable {
    let store: CacheStore
    let files: TenantFiles
    let folders: TenantFolders
    let blocking: BlockingPool
    let logger: Logger
    private let memory = Mutex<MemoryCaches>(MemoryCaches())
    /// All ephemeral sessions' caches together (a quarter of `FERRY_MEMORY_BUDGET_BYTES`):
    /// each session may keep `memoryCapacity`, but sessions that are never reset (or are
    /// invalidated and forgotten) would otherwise keep theirs for the life of the process.
    let ephemeralCapacity: Int64
    /// Entries stored by transfers that end together, one transaction (see `CacheStore.put`).
    private let puts: CoalescingQueue<CacheStore.Put, [String]>
    /// Entries stored after their transfers' ends are queued (finished downloads'): nothing
    /// waits on them, so they gather for 20 ms and share fewer transactions (a thousand small
    /// downloads took about 200 put transactions without it).
    private let deferredPuts: CoalescingQueue<CacheStore.Put, [String]>
    /// Lookups of transfers that start together, one statement (see `CacheStore.entries`).
    private let lookups: CoalescingQueue<CacheStore.Lookup, CachedResponse?>

    /// A session's disk cache; URLCache's default capacities are of this order.
    static let diskCapacity: Int64 = 64 * 1024 * 1024
    static let memoryCapacity: Int64 = 8 * 1024 * 1024
    /// Like URLCache, a response larger than a twentieth of the capacity is not cached.
    static func maximumEntrySize(ephemeral: Bool) -> Int64 { (ephemeral ? memoryCapacity : diskCapacity) / 20 }

    init(store: CacheStore, files: TenantFiles, folders: TenantFolders, blocking: BlockingPool, logger: Logger, ephemeralCapacity: Int64) {
        self.ephemeralCapacity = ephemeralCapacity
        self.store = store
        self.folders = folders
        self.puts = CoalescingQueue { try await store.put($0, capacity: Self.diskCapacity) }
        self.deferredPuts = CoalescingQueue(lingering: .milliseconds(20)) { try await store.put($0, capacity: Self.diskCapacity) }
        self.lookups = CoalescingQueue { try await store.entries($0) }
        self.files = files
        self.blocking = blocking
        self.logger = logger
    }

    /// The cache's decision for a task about to run; nil when the task does not use the cache
    /// (uploads, methods other than GET, tasks resuming a partial download).
    func decide(for job: TransferJob, cookies: CookieJar) async -> (decision: CacheDecision, context: CacheContext)? {
        let claim = job.claim
        guard claim.kind != .upload, claim.originalRequest.httpMethod.uppercased() == "GET", claim.checkpoint == nil else { return nil }
        let policy = claim.originalRequest.cachePolicy ?? claim.configuration.requestCachePolicy
        let key = CacheKey.make(for: claim.originalRequest.url, method: "GET")
        var request = claim.originalRequest
        request.allHTTPHeaderFields = RequestHeaders.effective(for: request, job: job, cookies: cookies, now: Date())
        let entry: CachedResponse?
        if claim.configuration.kind == .ephemeral {
            entry = memory.withLock { $0.sessions[claim.sessionID]?[key]?.entry }
        } else if !Self.isStorable(key) {
            entry = nil  // never stored
        } else {
            do {
                entry = try await lookups(CacheStore.Lookup(sessionID: claim.sessionID, key: key))
            } catch {
                logger.warning("reading the URL cache failed; fetching", metadata: ["error": "\(error)"])
                entry = nil
            }
        }
        let decision = CacheLookup.decide(policy: policy, request: request, entry: entry, now: Date())
        switch decision {
        case .revalidate(let headers):
            return (decision, CacheContext(key: key, entry: entry, conditionalHeaders: headers))
        case .useCached:
            return (decision, CacheContext(key: key, entry: entry, conditionalHeaders: nil))
        case .fetch, .failNotCached:
            return (decision, CacheContext(key: key, entry: nil, conditionalHeaders: nil))
        }
    }

    /// Bodies up to this size are kept in their entry's row rather than in a file of their own,
    /// as URLCache keeps small responses in its database. Creating, syncing and renaming a file
    /// for a response of a few bytes cost far more than its transfer: a quarter of Ferry's CPU
    /// in bench/decisions.sh's thousand small data tasks, and about 4 ms of every
    /// `willCacheResponse` between the delegate's answer and the task's end.
    static let inlineBodyLimit = 4 * 1024

    /// A cached entry's body.
    func body(of entry: CachedResponse, for claim: ClaimedTask) async throws -> [UInt8] {
        if let inlineBody = entry.inlineBody { return [UInt8](inlineBody) }
        if claim.configuration.kind == .ephemeral {
            guard let body = memory.withLock({ $0.sessions[claim.sessionID]?.first { $0.value.entry.bodyKey == entry.bodyKey }?.value.body }) else {
                throw FileFailure(operation: "read cached body", path: entry.bodyKey, errno: 2)
            }
            return body
        }
        let path = try files.path(.cache, tenantID: claim.tenantID, name: entry.bodyKey)
        let body = try await blocking.run { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
        // A body of another length is not the one the entry describes: never answer with it.
        guard body.count == entry.bodySize else {
            throw FileFailure(operation: "read cached body of \(entry.bodySize) bytes, found \(body.count)", path: path, errno: EIO)
        }
        return body
    }

    /// Keeps a response that may be cached: RFC 9111's rules, and a size bound.
    /// A response body to cache: in memory (a data task's), or a finished download's file.
    enum Body: Sendable {
        case bytes([UInt8])
        /// Linked into the cache folder for sessions that cache on disk: no copy, and no
        /// reading thousands of finished downloads into memory at once.
        case file(path: String, size: Int64)

        var size: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .file(_, let size): size
            }
        }
    }

    func storeIfAllowed(_ ended: EndedTransfer, body: Body, deferred: Bool, approve: (CachedResponse) async -> Bool) async {
        let claim = ended.job.claim
        guard let context = ended.job.cache, let head = ended.finalHead, ended.redirectFree,
              body.size <= Self.maximumEntrySize(ephemeral: claim.configuration.kind == .ephemeral)
        else { return }
        var request = claim.originalRequest
        request.allHTTPHeaderFields = ended.sentHeaders
        guard CachePolicy.isStorable(request: request, response: head) else { return }
        let bodyKey = IDs.make("cch")
        let entry = CachedResponse(
            url: claim.originalRequest.url, request: request, head: head, requestTime: ended.requestTime,
            responseTime: ended.responseTime, bodyKey: bodyKey, bodySize: body.size
        )
        guard await approve(entry) else { return }
        await put(entry, body: body, key: context.key, claim: claim, deferred: deferred)
    }

    /// Stores an entry revalidated by a 304 (same body, refreshed head).
    func replace(_ entry: CachedResponse, key: String, claim: ClaimedTask) async {
        if claim.configuration.kind == .ephemeral {
            memory.withLock { $0.update(entry, sessionID: claim.sessionID, key: key) }
            return
        }
        do {
            let dropped = try await puts(CacheStore.Put(sessionID: claim.sessionID, key: key, entry: entry))
            await removeBodies(dropped.filter { $0 != entry.bodyKey }, tenantID: claim.tenantID)
        } catch {
            logger.warning("updating the URL cache failed", metadata: ["error": "\(error)"])
        }
    }

    /// Drops the entries an unsafe request invalidates (RFC 9111 §4.4).
    func invalidate(after ended: EndedTransfer) async {
        let claim = ended.job.claim
        guard let head = ended.finalHead else { return }
        let keys = CacheInvalidation.invalidatedKeys(method: ended.currentRequest.httpMethod, requestURL: ended.currentRequest.url, response: head)
        guard !keys.isEmpty else { return }
        if claim.configuration.kind == .ephemeral {
            memory.withLock { caches in for key in keys { caches.remove(sessionID: claim.sessionID, key: key) } }
            return
        }
        do {
            await removeBodies(try await store.remove(sessionID: claim.sessionID, keys: keys), tenantID: claim.tenantID)
        } catch {
            logger.warning("invalidating the URL cache failed", metadata: ["error": "\(error)"])
        }
    }

    /// Forgets an ephemeral session's cache (its `reset`, its invalidation).
    func forgetSession(_ sessionID: String) {
        memory.withLock { caches in
            for key in caches.sessions[sessionID]?.keys.map({ $0 }) ?? [] { caches.remove(sessionID: sessionID, key: key) }
        }
    }

    /// Ephemeral sessions with a cache in memory here.
    var ephemeralSessionCount: Int { memory.withLock { $0.sessions.count } }

    /// The longest key (the request's URL) a session's cache in PostgreSQL stores: the key is
    /// part of its primary key, whose entries may not exceed about 2.7 KB. A longer one failed
    /// its put, and every other put (of any tenant) coalesced into the same statement.
    static let maximumStoredKeyBytes = 2048

    /// Whether a response under `key` is stored in PostgreSQL (an ephemeral session's memory takes any).
    private static func isStorable(_ key: String) -> Bool { key.utf8.count <= maximumStoredKeyBytes }

    private func put(_ entry: CachedResponse, body: Body, key: String, claim: ClaimedTask, deferred: Bool) async {
        guard claim.configuration.kind == .ephemeral || Self.isStorable(key) else { return }
        if claim.configuration.kind == .ephemeral {
            let bytes: [UInt8]
            switch body {
            case .bytes(let inMemory):
                bytes = inMemory
            case .file(let path, _):
                guard let read = try? await blocking.run({ Array(try Data(contentsOf: URL(fileURLWithPath: path))) }) else { return }
                bytes = read
            }
            let body = bytes
            let globalCapacity = ephemeralCapacity
            memory.withLock { caches in
                caches.store(
                    entry, body: body, key: key, sessionID: claim.sessionID, tenantID: claim.tenantID,
                    sessionCapacity: Self.memoryCapacity, totalCapacity: globalCapacity
                )
            }
            return
        }
        var entry = entry
        if case .bytes(let bytes) = body, bytes.count <= Self.inlineBodyLimit { entry.inlineBody = Data(bytes) }
        do {
            if entry.inlineBody == nil {
                try await writeBody(body, named: entry.bodyKey, tenantID: claim.tenantID)
            }
            let queue = deferred ? deferredPuts : puts
            let dropped = try await queue(CacheStore.Put(sessionID: claim.sessionID, key: key, entry: entry))
            await removeBodies(dropped, tenantID: claim.tenantID)
        } catch {
            logger.warning("storing in the URL cache failed", metadata: ["error": "\(error)"])
            if entry.inlineBody == nil { await removeBodies([entry.bodyKey], tenantID: claim.tenantID) }
        }
    }

    /// Puts a body in the tenant's cache folder under `name`.
    private func writeBody(_ body: Body, named name: String, tenantID: String) async throws {
        let path = try files.path(.cache, tenantID: tenantID, name: name)
        try await folders.ensure(tenantID)
        try await blocking.run {
            switch body {
            case .bytes(let bytes):
                try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            case .file(let source, _):
                // The download stays the tenant's to delete; the link keeps the cache's copy.
                if link(source, path) == 0 {
                    // Modified now (the download's file too: one inode), so that the data folder's
                    // reconciler, which spares files modified within its grace period, does not take
                    // the body of an entry whose row is about to be written for an orphan.
                    _ = utimensat(AT_FDCWD, path, nil, 0)
                } else {
                    try FileManager.default.copyItem(atPath: source, toPath: path)
                }
            }
        }
    }

    /// Removes the files of dropped entries' bodies (an inline body has none: its unlink fails,
    /// harmlessly).
    private func removeBodies(_ keys: [String], tenantID: String) async {
        let paths = keys.compactMap { try? files.path(.cache, tenantID: tenantID, name: $0) }
        guard !paths.isEmpty else { return }
        _ = try? await blocking.run { for path in paths { FileOperations.remove(path) } }
    }
}

extension EndedTransfer {
    /// Only a response to the request as first sent is cached under its key.
    var redirectFree: Bool { metrics.redirectCount == 0 }
}
