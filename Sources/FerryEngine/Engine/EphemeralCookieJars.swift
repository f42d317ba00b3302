import FerryCore
import Foundation
import Synchronization

/// The cookie jars of ephemeral sessions, which URLSession keeps in memory only: they vanish
/// with the process (and are not shared with other instances, whose memory is their own).
/// A session's jar is dropped when it is reset or invalidated; jars idle for a day are dropped
/// too, for sessions that are never invalidated.
final class EphemeralCookieJars: Sendable {
    private struct Entry {
        var jar: CookieJar
        var lastUsed: Date
    }

    private let entries = Mutex<[String: Entry]>([:])
    static let idleLifetime: TimeInterval = 24 * 3600

    func jar(ofSession sessionID: String) -> CookieJar {
        entries.withLock { entries in
            entries[sessionID]?.lastUsed = Date()
            return entries[sessionID]?.jar ?? CookieJar()
        }
    }

    /// Sessions with a jar here.
    var sessionCount: Int { entries.withLock { $0.count } }

    func forgetSession(_ sessionID: String) {
        _ = entries.withLock { $0.removeValue(forKey: sessionID) }
    }

    func apply(_ update: CookieUpdate, handling: CookieHandling) {
        entries.withLock { entries in
            var entry = entries[update.sessionID] ?? Entry(jar: CookieJar(), lastUsed: Date())
            entry.jar.apply(update, handling: handling)
            entry.lastUsed = Date()
            let cutoff = Date().addingTimeInterval(-Self.idleLifetime)
            entries = entries.filter { $0.value.lastUsed > cutoff }
            entries[update.sessionID] = entry
        }
    }
}
