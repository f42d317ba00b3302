@testable import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Tenants: API keys authenticate, are stored only as hashes, and record their use")
struct TenantStoreTests {
    @Test("a created tenant's key authenticates it; another tenant's key finds the other tenant")
    func keyAuthenticates() async throws {
        try await StoreFixture.with { fixture in
            let key = try #require(APIKey.parse(fixture.apiKey))
            let found = try await fixture.database.tenants.authenticate(key)
            #expect(found == fixture.tenant)
            #expect(fixture.tenant.name == "fixture")
            #expect(fixture.tenant.status == .active)

            let (other, otherKey) = try await fixture.database.tenants.create(
                name: "second", quotas: TenantQuotas(maxConcurrentTransfers: 3, maxStoredBytes: 1 << 40, requestsPerSecond: 2.5, maxTaskBytes: 99)
            )
            #expect(other.quotas == TenantQuotas(maxConcurrentTransfers: 3, maxStoredBytes: 1 << 40, requestsPerSecond: 2.5, maxTaskBytes: 99))
            #expect(try await fixture.database.tenants.authenticate(try #require(APIKey.parse(otherKey)))?.id == other.id)
            #expect(try await fixture.database.tenants.find(id: other.id) == other)
            #expect(try await fixture.database.tenants.find(id: "ten_missing") == nil)
        }
    }

    @Test("the operator's list of tenants pages in creation order and refuses a cursor that names no tenant")
    func listPagesAndRefusesUnknownCursors() async throws {
        try await StoreFixture.with { fixture in
            let second = try await fixture.database.tenants.create(name: "second", quotas: TenantQuotas()).tenant
            let first = try await fixture.database.tenants.list(limit: 1, after: nil)
            #expect(first.items.map(\.id) == [fixture.tenant.id])
            let next = try await fixture.database.tenants.list(limit: 1, after: first.nextCursor)
            #expect(next.items.map(\.id) == [second.id])
            #expect(next.nextCursor == nil)
            // (The tenants have no tenant_id: the check once asked for one, a 500.)
            await expectUnknownCursor { try await fixture.database.tenants.list(limit: 1, after: "0") }
        }
    }

    @Test("a different key with the same lookup prefix (and a valid checksum) does not authenticate")
    func samePrefixWrongKey() async throws {
        try await StoreFixture.with { fixture in
            let random = fixture.apiKey.dropFirst(APIKey.prefix.count).prefix(ChecksummedToken.randomLength)
            // Keep the first 8 symbols (the stored lookup prefix), change the rest.
            let changed = String(random.prefix(ChecksummedToken.lookupPrefixLength))
                + String(random.dropFirst(ChecksummedToken.lookupPrefixLength).map { $0 == "A" ? "B" : "A" })
            let forged = APIKey.prefix + changed + ChecksummedToken.checksum(of: changed)
            let parsed = try #require(APIKey.parse(forged))
            let genuine = try #require(APIKey.parse(fixture.apiKey))
            #expect(parsed.lookupPrefix == genuine.lookupPrefix)
            #expect(forged != fixture.apiKey)
            #expect(try await fixture.database.tenants.authenticate(parsed) == nil)
        }
    }

    @Test("a revoked key no longer authenticates")
    func revokedKey() async throws {
        try await StoreFixture.with { fixture in
            try await fixture.execute("UPDATE api_keys SET revoked_at = now() WHERE tenant_id = $1", [fixture.tenant.id])
            #expect(try await fixture.database.tenants.authenticate(try #require(APIKey.parse(fixture.apiKey))) == nil)
        }
    }

    @Test("no column of any table contains the key text; the key is kept as its SHA-256")
    func keyStoredOnlyAsHash() async throws {
        try await StoreFixture.with { fixture in
            let key = fixture.apiKey
            let secretPart = String(key.dropFirst(APIKey.prefix.count))
            for needle in [key, secretPart, String(secretPart.dropFirst(ChecksummedToken.lookupPrefixLength))] {
                let tables = try await fixture.rows(
                    """
                    SELECT table_name::text FROM information_schema.tables
                    WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
                      AND position($1 in query_to_xml(format('SELECT * FROM %I', table_name), true, false, '')::text) > 0
                    """,
                    [needle]
                ).map { try $0.decode(0, as: String.self) }
                #expect(tables.isEmpty, "the key text appears in \(tables)")
            }
            let stored = try await fixture.value("SELECT key_hash FROM api_keys WHERE tenant_id = $1", [fixture.tenant.id], as: [UInt8].self)
            #expect(stored == RequestFingerprint.of(Array(key.utf8)))  // SHA-256 of the key text
            #expect(stored != Array(key.utf8))
        }
    }

    @Test("lastUsedAt is set on first use and then written at most once a minute")
    func lastUsedAt() async throws {
        try await StoreFixture.with { fixture in
            let key = try #require(APIKey.parse(fixture.apiKey))
            let lastUsed = { try await fixture.value("SELECT last_used_at FROM api_keys WHERE tenant_id = $1", [fixture.tenant.id], as: Date?.self) }
            #expect(try await lastUsed() == nil)

            _ = try await fixture.database.tenants.authenticate(key)
            let first = try #require(try await lastUsed())
            try await Task.sleep(for: .milliseconds(20))
            _ = try await fixture.database.tenants.authenticate(key)
            #expect(try await lastUsed() == first)

            // 30 seconds ago: still fresh, not rewritten.
            try await fixture.execute("UPDATE api_keys SET last_used_at = now() - interval '30 seconds' WHERE tenant_id = $1", [fixture.tenant.id])
            let recent = try #require(try await lastUsed())
            _ = try await fixture.database.tenants.authenticate(key)
            #expect(try await lastUsed() == recent)

            // Over a minute ago: rewritten to now.
            try await fixture.execute("UPDATE api_keys SET last_used_at = now() - interval '61 seconds' WHERE tenant_id = $1", [fixture.tenant.id])
            _ = try await fixture.database.tenants.authenticate(key)
            let rewritten = try #require(try await lastUsed())
            #expect(abs(rewritten.timeIntervalSinceNow) < 5)
        }
    }
}

@Suite("Settings: the operator token and the resume-data signing key")
struct SettingsStoreTests {
    @Test("a configured operator token is the one accepted")
    func configuredToken() async throws {
        try await StoreFixture.with { fixture async throws in
            let settings = fixture.database.settings
            #expect(try await settings.isAdminToken("anything") == false)
            #expect(try await settings.ensureAdminToken(configured: "operator-secret") == nil)
            #expect(try await settings.isAdminToken("operator-secret"))
            #expect(try await settings.isAdminToken("operator-secreT") == false)
            #expect(try await settings.isAdminToken(fixture.apiKey) == false)
            // A later start without configuration keeps it and prints nothing.
            #expect(try await settings.ensureAdminToken(configured: nil) == nil)
            #expect(try await settings.isAdminToken("operator-secret"))
            // Configuring another token replaces it.
            #expect(try await settings.ensureAdminToken(configured: "rotated") == nil)
            #expect(try await settings.isAdminToken("rotated"))
            #expect(try await settings.isAdminToken("operator-secret") == false)
        }
    }

    @Test("the token last read opens the operator's routes at once while PostgreSQL is away; a refresh sees another instance's rotation")
    func tokenWhileTheDatabaseIsAway() async throws {
        try await StoreFixture.with { fixture async throws in
            let settings = fixture.database.settings
            _ = try await settings.ensureAdminToken(configured: "operator-secret")
            // Another process: its own memory, nothing read yet.
            let other = SettingsStore(pool: fixture.pool, adminTokens: AdminTokenMemory())
            try await fixture.test.beginOutage()
            await #expect(throws: (any Error).self, "nothing read yet: nothing to fall back on") {
                _ = try await other.isAdminToken("operator-secret")
            }
            #expect(try await settings.isAdminToken("operator-secret"))
            #expect(try await settings.isAdminToken("anything") == false)
            await settings.refreshAdminToken()
            #expect(try await settings.isAdminToken("operator-secret"), "a refresh that cannot reach the database forgot the token")
            try await fixture.test.endOutage()

            // The other instance starts with a new token: this one sees it at its next refresh.
            // (The pool reconnects after a pause.)
            func rotate() async -> Bool {
                do { _ = try await other.ensureAdminToken(configured: "rotated"); return true } catch { return false }
            }
            let back = ContinuousClock.now + .seconds(10)
            while await !rotate(), ContinuousClock.now < back {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await other.isAdminToken("rotated"))
            #expect(try await settings.isAdminToken("operator-secret"), "not read again before a refresh")
            await settings.refreshAdminToken()
            #expect(try await settings.isAdminToken("rotated"))
            #expect(try await settings.isAdminToken("operator-secret") == false)
        }
    }

    @Test("without configuration a token is generated exactly once, even when instances start together")
    func generatedOnce() async throws {
        try await StoreFixture.with(poolSize: 6) { fixture in
            let settings = fixture.database.settings
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<8 { group.addTask { try await settings.ensureAdminToken(configured: nil) } }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            let generated = answers.compactMap { $0 }
            #expect(generated.count == 1)
            let token = try #require(generated.first)
            #expect(token.hasPrefix(AdminToken.prefix))
            #expect(AdminToken.parse(token) != nil)
            #expect(try await settings.isAdminToken(token))
            #expect(try await settings.ensureAdminToken(configured: nil) == nil)
            #expect(try await settings.isAdminToken(token))
            let stored = try await fixture.value("SELECT value FROM settings WHERE key = 'admin_token_hash'", as: [UInt8].self)
            #expect(stored == AdminToken.hash(token))
        }
    }

    @Test("the resume-data signing key is made once and shared by every instance")
    func signingKeyShared() async throws {
        try await StoreFixture.with(poolSize: 6) { fixture in
            let first = try await fixture.database.settings.resumeDataSigningKey()
            #expect(first.count == 32)
            #expect(Set(first).count > 4)
            // Another "instance": a pool of its own on the same database.
            let other = FerryDatabase(pool: PostgresPoolFactory.pool(conninfo: fixture.test.conninfo))
            let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for index in 0..<8 {
                    let settings = index.isMultiple(of: 2) ? fixture.database.settings : other.settings
                    group.addTask { try await settings.resumeDataSigningKey() }
                }
                return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
            }
            await other.pool.close()
            #expect(keys.allSatisfy { $0 == first })
            #expect(try await fixture.value("SELECT count(*) FROM settings WHERE key = 'resume_data_signing_key'", as: Int.self) == 1)
        }
    }

    @Test("on a fresh database, concurrent first uses agree on one signing key")
    func signingKeyConcurrentFirstUse() async throws {
        let test = try await TestDatabase.make(poolSize: 6)
        let settings = test.database.settings
        let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<8 { group.addTask { try await settings.resumeDataSigningKey() } }
            return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
        }
        await test.close()
        #expect(Set(keys).count == 1)
    }
}
