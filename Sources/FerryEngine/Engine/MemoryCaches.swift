import FerryCore
import Foundation

/// Ephemeral sessions' URL caches, in this process's memory, and the bytes they hold: each
/// session's, each tenant's and in all.
struct MemoryCaches {
    private(set) var sessions: [String: [String: (entry: CachedResponse, body: [UInt8])]] = [:]
    private(set) var totalBytes: Int64 = 0
    private var tenantOfSession: [String: String] = [:]
    private(set) var bytesByTenant: [String: Int64] = [:]

    /// Stores an entry, then removes entries, least recently stored first, until the session's
    /// cache fits `sessionCapacity` and all of them `totalCapacity`. For the second, the entries
    /// that go are the tenant's holding the most: a tenant that fills the process's share pushes
    /// out its own entries, not those of tenants holding less, whose cached responses vanishing
    /// would both cost them and tell them of another tenant's work.
    mutating func store(
        _ entry: CachedResponse, body: [UInt8], key: String, sessionID: String, tenantID: String,
        sessionCapacity: Int64, totalCapacity: Int64
    ) {
        remove(sessionID: sessionID, key: key)
        sessions[sessionID, default: [:]][key] = (entry, body)
        tenantOfSession[sessionID] = tenantID
        bytesByTenant[tenantID, default: 0] += Int64(body.count)
        totalBytes += Int64(body.count)
        while let cache = sessions[sessionID],
              cache.values.reduce(0, { $0 + Int64($1.body.count) }) > sessionCapacity,
              let oldest = cache.min(by: { $0.value.entry.responseTime < $1.value.entry.responseTime }) {
            remove(sessionID: sessionID, key: oldest.key)
        }
        while totalBytes > totalCapacity, let heaviest = heaviestTenant(preferring: tenantID), let oldest = oldest(ofTenant: heaviest) {
            remove(sessionID: oldest.sessionID, key: oldest.key)
        }
    }

    /// Replaces a stored entry's response (a 304's merged headers), keeping its body.
    mutating func update(_ entry: CachedResponse, sessionID: String, key: String) {
        sessions[sessionID]?[key]?.entry = entry
    }

    mutating func remove(sessionID: String, key: String) {
        guard let removed = sessions[sessionID]?.removeValue(forKey: key) else { return }
        totalBytes -= Int64(removed.body.count)
        if let tenantID = tenantOfSession[sessionID] {
            bytesByTenant[tenantID, default: 0] -= Int64(removed.body.count)
            if bytesByTenant[tenantID] == 0 { bytesByTenant[tenantID] = nil }
        }
        if sessions[sessionID]?.isEmpty == true {
            sessions[sessionID] = nil
            tenantOfSession[sessionID] = nil
        }
    }

    /// The tenant holding the most bytes; `storing` when it holds as many as any (a tie must not
    /// let the tenant storing push out an equal one's entries).
    private func heaviestTenant(preferring storing: String) -> String? {
        guard let most = bytesByTenant.values.max() else { return nil }
        if bytesByTenant[storing] == most { return storing }
        return bytesByTenant.first { $0.value == most }?.key
    }

    /// The least recently stored entry of the tenant's sessions.
    private func oldest(ofTenant tenantID: String) -> (sessionID: String, key: String)? {
        var oldest: (sessionID: String, key: String, time: Date)?
        for (sessionID, cache) in sessions where tenantOfSession[sessionID] == tenantID {
            for (key, value) in cache where oldest.map({ value.entry.responseTime < $0.time }) ?? true {
                oldest = (sessionID, key, value.entry.responseTime)
            }
        }
        return oldest.map { ($0.sessionID, $0.key) }
    }
}
