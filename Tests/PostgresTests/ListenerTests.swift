import FerryTestSupport
import Postgres
import Testing

@Suite struct ListenerTests {
    @Test func deliversNotificationsAndReconnectsAfterItsBackendIsTerminated() async throws {
        try await withTestPool { pool, conninfo in
            let listener = PostgresListener(conninfo: conninfo, channels: ["task events", "other"], logger: testLogger, applicationName: "test-listener")
            let recorder = EventRecorder(listener.events)
            listener.start()
            do {
                try await exercise(recorder: recorder, pool: pool, conninfo: conninfo)
            } catch {
                await listener.close()
                throw error
            }
            await listener.close()
        }
    }

    /// Notifications arrive, and again after the listener's backend is terminated.
    private func exercise(recorder: EventRecorder<PostgresListenerEvent>, pool: PostgresPool, conninfo: String) async throws {
        try await recorder.wait(for: "the first .connected") { $0.contains(.connected) }
        try await pool.withConnection { try $0.execute("SELECT pg_notify($1, $2)", ["task events", "tsk_1 ünï"]) }
        try await recorder.wait(for: "the first notification") {
            $0.contains(.notification(channel: "task events", payload: "tsk_1 ünï"))
        }

        let listenerPID = try await pool.withConnection { connection in
            try connection.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'test-listener' AND datname = current_database()")
                .onlyRow().decode("pid", as: Int32.self)
        }
        try await terminate(backend: listenerPID, conninfo: conninfo)
        try await recorder.wait(for: ".connected after the reconnection") { events in
            events.filter { $0 == .connected }.count == 2
        }

        try await pool.withConnection { try $0.execute("SELECT pg_notify($1, $2)", ["other", "after"]) }
        try await recorder.wait(for: "a notification after reconnecting") {
            $0.contains(.notification(channel: "other", payload: "after"))
        }
        #expect(recorder.recorded.count == 4)
    }

    @Test("a consumer that falls behind loses only the oldest events, and is told so once, before those kept")
    func overflowIsAnnounced() async throws {
        try await withTestPool { pool, conninfo in
            let listener = PostgresListener(conninfo: conninfo, channels: ["c"], logger: testLogger, bufferLimit: 4)
            listener.start()
            var iterator = listener.events.makeAsyncIterator()
            #expect(await iterator.next() == .connected)
            // Nobody reads while ten arrive, each in its own transaction (one would be sent as one).
            for index in 1...10 {
                try await pool.withConnection { try $0.execute("SELECT pg_notify('c', $1)", ["\(index)"]) }
            }
            let canary = "after the flood"
            try await pool.withConnection { try $0.execute("SELECT pg_notify('c', $1)", [canary]) }
            // Reading would make room: read only once the listener's thread has had time to take
            // all eleven (it needs milliseconds), then up to the canary, the last one sent.
            try await Task.sleep(for: .seconds(2))
            var read: [PostgresListenerEvent] = []
            while let event = await iterator.next() {
                read.append(event)
                if event == .notification(channel: "c", payload: canary) { break }
            }
            await listener.close()
            // Told once, first, then the four newest.
            #expect(read.first == .overflowed, "\(read)")
            #expect(read.filter { $0 == .overflowed }.count == 1, "\(read)")
            #expect(read.count <= 5, "\(read)")
            #expect(!read.contains(.notification(channel: "c", payload: "1")))
        }
    }

    @Test func stopEndsTheStream() async throws {
        let conninfo = try await TestPostgres.makeDatabase()
        let listener = PostgresListener(conninfo: conninfo, channels: ["c"], logger: testLogger)
        listener.start()
        var iterator = listener.events.makeAsyncIterator()
        #expect(await iterator.next() == .connected)
        await listener.close()
        #expect(await iterator.next() == nil)
    }
}
