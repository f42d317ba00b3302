import FerryStore
import Foundation
import Testing

@Suite("Lease renewals update a task's row in place")
struct LeaseRenewalInPlaceTests {
    /// What a heartbeat writes for every running transfer each second (`TransferLedger.heartbeat`;
    /// a checkpoint, response or request only now and then). An index covering any of them
    /// makes every renewal a new version of the row with an entry in every index of the table.
    private static let renewedEachBeat = [
        "lease_expires_at", "bytes_received", "bytes_sent", "bytes_expected_to_receive", "bytes_expected_to_send",
        "updated_at", "owner_losses",
    ]

    @Test("no index of tasks covers what a renewal writes, and its pages keep room for in-place updates")
    func noIndexCoversARenewal() async throws {
        try await StoreFixture.with { fixture in
            let definitions: [String] = try await fixture.rows(
                "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = 'tasks'::regclass"
            ).map { try $0.decode(0) }
            #expect(!definitions.isEmpty)
            for definition in definitions {
                let words = Set(definition.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
                #expect(words.isDisjoint(with: Self.renewedEachBeat), "\(definition)")
            }
            let options: String? = try await fixture.value("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'tasks'::regclass")
            #expect(options?.contains("fillfactor=50") == true)
        }
    }

    @Test("a heartbeat's renewal is a heap-only update")
    func renewalIsHeapOnly() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let ledger = fixture.ledger()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            let before: Int64 = try await fixture.value("SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'tasks'")
            for beat in 1...3 {
                _ = try await ledger.heartbeat([TransferProgress(
                    lease: lease, bytesReceived: Int64(beat) * 100, bytesSent: 0, bytesExpectedToReceive: 10_000, bytesExpectedToSend: 0
                )], workers: 1, version: "test")
            }
            // Each backend reports its counts when it goes idle, at most once a second (at the
            // latest ten seconds later).
            var hotUpdates = before
            let deadline = ContinuousClock.now + .seconds(15)
            while hotUpdates - before < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                hotUpdates = try await fixture.value("SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'tasks'")
            }
            #expect(hotUpdates - before >= 3)
        }
    }
}
