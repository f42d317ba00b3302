import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Sessions: background re-attachment, pagination, tenant isolation")
struct SessionStoreTests {
    private func background(_ identifier: String) -> SessionCreation {
        SessionCreation(configuration: SessionConfiguration(kind: .background, identifier: identifier), sessionDescription: "bg")
    }

    @Test("a background identifier re-attaches to the live session of the same tenant")
    func reattaches() async throws {
        try await StoreFixture.with { fixture in
            let sessions = fixture.database.sessions
            let first = try await sessions.create(tenantID: fixture.tenant.id, background("sync"))
            #expect(first.reattached == false)
            #expect(first.session.kind == .background)
            #expect(first.session.configuration.identifier == "sync")
            #expect(first.session.sessionDescription == "bg")

            let again = try await sessions.create(tenantID: fixture.tenant.id, background("sync"))
            #expect(again.reattached)
            #expect(again.session == first.session)

            // Another identifier, or a default session, is a new session.
            #expect(try await sessions.create(tenantID: fixture.tenant.id, background("other")).session.id != first.session.id)
            let plain = try await sessions.create(tenantID: fixture.tenant.id, SessionCreation(configuration: SessionConfiguration(kind: .default)))
            #expect(plain.reattached == false)
            #expect(try await fixture.value("SELECT count(*) FROM sessions WHERE identifier = 'sync'", as: Int.self) == 1)
        }
    }

    @Test("another tenant's identical identifier gets a session of its own")
    func reattachesOnlyWithinTenant() async throws {
        try await StoreFixture.with { fixture in
            let other = try await fixture.makeTenant()
            let mine = try await fixture.database.sessions.create(tenantID: fixture.tenant.id, background("shared-name"))
            let theirs = try await fixture.database.sessions.create(tenantID: other.id, background("shared-name"))
            #expect(theirs.reattached == false)
            #expect(theirs.session.id != mine.session.id)
            #expect(theirs.session.tenantID == other.id)
        }
    }

    @Test("only a valid session is re-attached: after invalidation (or while finishing) a new one is made")
    func reattachesOnlyWhileValid() async throws {
        try await StoreFixture.with { fixture in
            let sessions = fixture.database.sessions
            for state in ["finishing", "canceling", "invalidated"] {
                let old = try await sessions.create(tenantID: fixture.tenant.id, background("life-\(state)")).session
                try await fixture.execute("UPDATE sessions SET state = $2 WHERE id = $1", [old.id, state])
                let new = try await sessions.create(tenantID: fixture.tenant.id, background("life-\(state)"))
                #expect(new.reattached == false, "state \(state)")
                #expect(new.session.id != old.id, "state \(state)")
                #expect(new.session.state == .valid)
                #expect(try await sessions.find(tenantID: fixture.tenant.id, id: old.id).state.rawValue == state)
            }
        }
    }

    @Test("concurrent re-creations of one background session all attach to one session")
    func concurrentReattach() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let sessions = fixture.database.sessions
            let tenantID = fixture.tenant.id
            let creation = background("raced")
            // Hold each new session at COMMIT for a moment, so that the creations overlap.
            try await fixture.pool.withConnection { connection in
                try connection.executeScript("""
                    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$;
                    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON sessions
                        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
                    """)
            }
            let outcomes = await withTaskGroup(of: Result<String, any Error>.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do { return .success(try await sessions.create(tenantID: tenantID, creation).session.id) } catch { return .failure(error) }
                    }
                }
                return await group.reduce(into: [Result<String, any Error>]()) { $0.append($1) }
            }
            #expect(try await fixture.value("SELECT count(*) FROM sessions WHERE identifier = 'raced'", as: Int.self) == 1)
            let ids = outcomes.compactMap { try? $0.get() }
            #expect(ids.count == 8)
            #expect(Set(ids).count == 1)
        }
    }

    @Test("pages with `after` list every session once, oldest first, also when sessions are added between pages")
    func pagination() async throws {
        try await StoreFixture.with { fixture in
            var expected = [fixture.session.id]
            for _ in 0..<6 { expected.append(try await fixture.makeSession().id) }
            let sessions = fixture.database.sessions

            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await sessions.list(tenantID: fixture.tenant.id, limit: 3, after: cursor)
                #expect(page.items.count <= 3)
                seen += page.items.map(\.id)
                cursor = page.nextCursor
                pages += 1
                if pages == 1 { expected.append(try await fixture.makeSession().id) }  // arrives while paging
            } while cursor != nil && pages < 10
            #expect(seen == expected)
            #expect(pages == 3)

            // An exact multiple of the page size ends without an empty extra page.
            let all = try await sessions.list(tenantID: fixture.tenant.id, limit: 8, after: nil)
            #expect(all.items.map(\.id) == expected)
            #expect(all.nextCursor == nil)
            let firstFour = try await sessions.list(tenantID: fixture.tenant.id, limit: 4, after: nil)
            #expect(firstFour.nextCursor == expected[3])
        }
    }

    @Test("another tenant never sees a session: find, list and a foreign cursor")
    func tenantIsolation() async throws {
        try await StoreFixture.with { fixture in
            let other = try await fixture.makeTenant()
            let theirs = try await fixture.makeSession(tenantID: other.id)
            await expectStoreError(.notFound(resource: "session")) {
                try await fixture.database.sessions.find(tenantID: other.id, id: fixture.session.id)
            }
            await expectStoreError(.notFound(resource: "session")) {
                try await fixture.database.sessions.find(tenantID: fixture.tenant.id, id: theirs.id)
            }
            #expect(try await fixture.database.sessions.find(tenantID: other.id, id: theirs.id) == theirs)
            let theirList = try await fixture.database.sessions.list(tenantID: other.id, limit: 50, after: nil)
            #expect(theirList.items.map(\.id) == [theirs.id])
            // Another tenant's session as a cursor is refused as one that names nothing.
            await expectUnknownCursor { try await fixture.database.sessions.list(tenantID: other.id, limit: 50, after: fixture.session.id) }
            let myList = try await fixture.database.sessions.list(tenantID: fixture.tenant.id, limit: 50, after: nil)
            #expect(myList.items.map(\.id) == [fixture.session.id])
        }
    }
}
