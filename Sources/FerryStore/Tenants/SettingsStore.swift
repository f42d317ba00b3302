import FerryCore
import Foundation
import Postgres

/// Installation-wide secrets kept in PostgreSQL so every instance shares them.
public struct SettingsStore: Sendable {
    let pool: PostgresPool
    let adminTokens: AdminTokenMemory

    public init(pool: PostgresPool, adminTokens: AdminTokenMemory) {
        self.pool = pool
        self.adminTokens = adminTokens
    }

    /// The key that signs resume data; made on first use, the same for every instance.
    public func resumeDataSigningKey() async throws -> [UInt8] {
        try await valueMadeOnce(key: "resume_data_signing_key", make: Self.randomKey)
    }

    /// The installation's key for the event cursors tenants see (`EventCursors`), made by the
    /// first instance that asks, so that every instance shows a tenant the same cursors.
    public func eventCursorKey() async throws -> [UInt8] {
        try await valueMadeOnce(key: "event_cursor_key", make: Self.randomKey)
    }

    /// Makes sure an operator token exists. With `FERRY_ADMIN_TOKEN` set, that token is the one;
    /// otherwise the first start generates one and returns it (to print once), later starts return nil.
    public func ensureAdminToken(configured: String?) async throws -> String? {
        if let configured {
            try await pool.withConnection { connection in
                try connection.execute(
                    """
                    INSERT INTO settings (key, value) VALUES ('admin_token_hash', $1)
                    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
                    """,
                    [AdminToken.hash(configured)]
                )
            }
            adminTokens.remember(AdminToken.hash(configured))
            return nil
        }
        var random = SystemRandomNumberGenerator()
        let token = AdminToken.generate(using: &random)
        let inserted = try await pool.withConnection { connection in
            try connection.execute(
                "INSERT INTO settings (key, value) VALUES ('admin_token_hash', $1) ON CONFLICT (key) DO NOTHING",
                [AdminToken.hash(token)]
            )
        }
        // Another instance's token, when this one's lost the race: read at the next check.
        if inserted == 1 { adminTokens.remember(AdminToken.hash(token)) } else { adminTokens.forget() }
        return inserted == 1 ? token : nil
    }

    /// Whether `presented` is the operator token: checked against the hash last read
    /// (`AdminTokenMemory`); only a process's first check waits for PostgreSQL (and fails while
    /// it is away).
    public func isAdminToken(_ presented: String) async throws -> Bool {
        let stored: [UInt8]?
        if let read = adminTokens.lastRead {
            stored = read
        } else {
            stored = try await readAdminTokenHash()
            adminTokens.remember(stored)
        }
        guard let stored else { return false }
        return constantTimeEquals(stored, AdminToken.hash(presented))
    }

    /// Reads the operator token's hash again. While the database is unreachable the hash read
    /// before stands; any other failure (a query refused, a row unreadable) forgets it, so that
    /// the next check reads, and fails, rather than trust it for good.
    public func refreshAdminToken() async {
        do {
            adminTokens.remember(try await readAdminTokenHash())
        } catch {
            if !FerryDatabase.isUnreachable(error) { adminTokens.forget() }
        }
    }

    private func readAdminTokenHash() async throws -> [UInt8]? {
        try await pool.withConnection { connection in
            try connection.query("SELECT value FROM settings WHERE key = 'admin_token_hash'").first?.decode(0, as: [UInt8].self)
        }
    }

    /// 256 random bits.
    private static func randomKey() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }

    private func valueMadeOnce(key: String, make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8] {
        try await pool.withConnection { connection in
            try connection.execute(
                "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                [key, make()]
            )
            return try connection.query("SELECT value FROM settings WHERE key = $1", [key]).firstRow().decode(0, as: [UInt8].self)
        }
    }
}
