import FerryCore
import Foundation
import Synchronization

/// The credential storage of ephemeral sessions, which URLSession keeps in memory only: here,
/// in this process, never in PostgreSQL. The API that sets them and the transfer engine that
/// answers challenges with them share it through `FerryDatabase`; the engine drops a session's
/// when the session is reset or invalidated. Like their cookies, they are this instance's.
public final class EphemeralCredentials: Sendable {
    private let sessions = Mutex<[String: [StoredCredential]]>([:])

    public init() {}

    /// Replaces the credential of the same protection space.
    func set(_ credential: StoredCredential, sessionID: String) {
        sessions.withLock { sessions in
            var list = sessions[sessionID] ?? []
            list.removeAll { $0.protectionSpace == credential.protectionSpace }
            list.append(credential)
            sessions[sessionID] = list
        }
    }

    public func credentials(ofSession sessionID: String) -> [StoredCredential] {
        sessions.withLock { $0[sessionID] ?? [] }
    }

    /// Whether the session had that credential.
    func remove(credentialID: String, sessionID: String) -> Bool {
        sessions.withLock { sessions in
            guard var list = sessions[sessionID], let index = list.firstIndex(where: { $0.id == credentialID }) else { return false }
            list.remove(at: index)
            sessions[sessionID] = list.isEmpty ? nil : list
            return true
        }
    }

    public func forgetSession(_ sessionID: String) {
        _ = sessions.withLock { $0.removeValue(forKey: sessionID) }
    }

    /// Sessions holding credentials here (for tests and memory accounting).
    public var sessionCount: Int { sessions.withLock { $0.count } }
}
