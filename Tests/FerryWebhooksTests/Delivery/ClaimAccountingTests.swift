import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// What a claim counts against an endpoint's `maximumInFlight`, on the ledger itself (no
/// service runs): streams sending, not leases held; and not what this instance saw answered.
@Suite("Claims count requests in flight, not leases")
struct ClaimAccountingTests {
    @Test("a stream's run counts once, and an answered delivery not yet recorded lets its stream go on")
    func runsAndAnsweredDeliveries() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await session(in: ferry, maximumInFlight: 2)
            // A: didCreateTask and three progress events; B, fanned out later (so due later):
            // didCreateTask and one.
            let ledger = ferry.database.webhookLedger(instanceID: "claims-test")
            let a = try await ferry.makeTask(in: session)
            for _ in 0..<3 { try await ferry.emit(.downloadTaskDidWriteData, task: a) }
            try await ledger.fanOutEverything()
            let b = try await ferry.makeTask(in: session)
            try await ferry.emit(.downloadTaskDidWriteData, task: b)
            try await ledger.fanOutEverything()
            func claim(room: Int, answered: [ClaimedDelivery] = []) async throws -> [ClaimedDelivery] {
                let limits = WebhookLedger.ClaimLimits(total: room, perEndpoint: 64, perTenant: 64, lease: .seconds(30))
                return try await ledger.claimDue(limits, answered: answered.map(\.deliveryID)).claimed
            }
            func names(_ claimed: [ClaimedDelivery]) -> [String] {
                claimed.map { "\($0.event.taskID == a.id ? "a" : "b")\($0.event.sequence)" }
            }

            let first = try await claim(room: 1)
            #expect(names(first) == ["a1"])
            let run = try await ledger.claimNext(after: try #require(first.first), limit: 16, lease: .seconds(30)).run
            #expect(names(run) == ["a2", "a3", "a4"])
            // Four leases, one stream: the endpoint's second request may go to B.
            let second = try await claim(room: 10)
            #expect(names(second) == ["b1"])
            // A and B each have a request out: the endpoint's two.
            #expect(try await claim(room: 10).isEmpty)
            // b1 was answered (this instance knows; its record is not written): B's next event may
            // go now, and B's stream holds no request meanwhile.
            #expect(names(try await claim(room: 10, answered: second)) == ["b2"])
        }
    }

    @Test("a claim hands back the heads it left for want of room; a slot takes each once, skipping what is stale")
    func candidatesLeftByTheClaim() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await session(in: ferry, maximumInFlight: 1)
            let ledger = ferry.database.webhookLedger(instanceID: "claims-test")
            // Three streams, fanned out one after another (so due in this order): a, b (two events), c.
            var tasks: [String: String] = [:]
            var tasksByName: [String: TaskRecord] = [:]
            for name in ["a", "b", "c"] {
                let task = try await ferry.makeTask(in: session)
                if name == "b" { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
                tasks[task.id] = name
                tasksByName[name] = task
                try await ledger.fanOutEverything()
            }
            func names(_ claimed: [ClaimedDelivery]) -> [String] {
                claimed.map { "\(tasks[$0.streamID] ?? "?")\($0.event.sequence)" }
            }
            let limits = WebhookLedger.ClaimLimits(total: 10, perEndpoint: 64, perTenant: 64, lease: .seconds(30))
            let (claimed, left, full, _) = try await ledger.claimDue(limits)
            #expect(names(claimed) == ["a1"], "the endpoint allows one request at a time")
            #expect(left.map { "\(tasks[$0.streamID] ?? "?")\($0.sequence)" } == ["b1", "c1"])
            #expect(full == Set(left.map(\.endpointID)), "left for want of the endpoint's room")

            // a1 was answered and a has nothing more: its slot goes on with b, the whole run.
            let a1 = try #require(claimed.first)
            let answered = [a1.deliveryID]
            let (run, used) = try await ledger.claimNext(after: a1, limit: 16, lease: .seconds(30), orOneOf: left, answered: answered)
            #expect(names(run) == ["b1", "b2"])
            #expect(used == 1)
            // Offered again, b1 is stale (leased): skipped, and c1 taken.
            let (next, usedNext) = try await ledger.claimNext(after: a1, limit: 16, lease: .seconds(30), orOneOf: left, answered: answered)
            #expect(names(next) == ["c1"])
            #expect(usedNext == 2)
            // A stream that goes on takes no candidate.
            try await ferry.emit(.downloadTaskDidWriteData, task: try #require(tasksByName["c"]))
            try await ledger.fanOutEverything()
            let (own, usedOwn) = try await ledger.claimNext(
                after: try #require(next.first), limit: 16, lease: .seconds(30), orOneOf: left, answered: answered
            )
            #expect(names(own) == ["c2"])
            #expect(usedOwn == 0)
        }
    }

    @Test("after a task's didCompleteWithError, its last event, a slot does not look further in its stream")
    func nothingAfterTheLastEvent() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await session(in: ferry, maximumInFlight: 1)
            let ledger = ferry.database.webhookLedger(instanceID: "claims-test")
            let a = try await ferry.makeTask(in: session)
            try await ferry.emit(.taskDidCompleteWithError, task: a)
            try await ledger.fanOutEverything()
            let b = try await ferry.makeTask(in: session)
            try await ledger.fanOutEverything()
            let streams = [a.id: "a", b.id: "b"]
            func names(_ claimed: [ClaimedDelivery]) -> [String] {
                claimed.map { "\(streams[$0.streamID] ?? "?")\($0.event.sequence)" }
            }
            let limits = WebhookLedger.ClaimLimits(total: 10, perEndpoint: 64, perTenant: 64, lease: .seconds(30))
            let (claimed, left, _, _) = try await ledger.claimDue(limits)
            #expect(names(claimed) == ["a1"])
            let a1 = try #require(claimed.first)
            let completed = try await ledger.claimNext(after: a1, limit: 16, lease: .seconds(30)).run
            #expect(names(completed) == ["a2"])
            // Nothing follows a task's completion; were anything written after it, the slot
            // would not look for it (the next claim would find it), and takes b instead.
            try await ferry.emit(.downloadTaskDidWriteData, task: a)
            try await ledger.fanOutEverything()
            let (next, used) = try await ledger.claimNext(
                after: try #require(completed.first), limit: 16, lease: .seconds(30), orOneOf: left,
                answered: [a1.deliveryID, try #require(completed.first).deliveryID]
            )
            #expect(names(next) == ["b1"])
            #expect(used == 1)
        }
    }

    @Test("claimOneOf: full while the endpoint is at its limit; a candidate and its run once there is room; nothing from stale candidates")
    func claimOneOfOutcomes() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await session(in: ferry, maximumInFlight: 1)
            let ledger = ferry.database.webhookLedger(instanceID: "claims-test")
            var names: [String: String] = [:]
            for name in ["a", "b"] {
                let task = try await ferry.makeTask(in: session)
                try await ferry.emit(.downloadTaskDidWriteData, task: task)
                try await ledger.fanOutEverything()
                names[task.id] = name
            }
            func named(_ claimed: [ClaimedDelivery]) -> [String] { claimed.map { "\(names[$0.streamID] ?? "?")\($0.event.sequence)" } }
            let limits = WebhookLedger.ClaimLimits(total: 10, perEndpoint: 64, perTenant: 64, lease: .seconds(30))
            let (claimed, left, _, _) = try await ledger.claimDue(limits)
            #expect(named(claimed) == ["a1"])
            let a1 = try #require(claimed.first)
            func claimOneOf(answered: [String]) async throws -> (room: WebhookLedger.Room, candidatesUsed: Int) {
                try await ledger.claimOneOf(left, limit: 16, lease: .seconds(30), answered: answered, perEndpoint: 64, perTenant: 64)
            }

            // a's request is out: the endpoint's one.
            let full = try await claimOneOf(answered: [])
            guard case .full = full.room else { Issue.record("expected full, got \(full.room)"); return }
            #expect(full.candidatesUsed == 0)
            // a1 answered: room for b, taken with the rest of its stream.
            let taken = try await claimOneOf(answered: [a1.deliveryID])
            guard case .taken(let run) = taken.room else { Issue.record("expected taken, got \(taken.room)"); return }
            #expect(named(run) == ["b1", "b2"])
            #expect(taken.candidatesUsed == 1)
            // Room again (b's requests answered too), but b1 is leased: nothing to take, the candidate used up.
            let stale = try await claimOneOf(answered: [a1.deliveryID] + run.map(\.deliveryID))
            guard case .noCandidate = stale.room else { Issue.record("expected noCandidate, got \(stale.room)"); return }
            #expect(stale.candidatesUsed == 1)
        }
    }

    /// A session whose delegate (nobody listens at its URL: nothing is sent here) allows
    /// `maximumInFlight` requests at once.
    private func session(in ferry: WebhookHarness, maximumInFlight: Int) async throws -> SessionRecord {
        try await ferry.database.sessions.create(
            tenantID: ferry.tenant.id,
            SessionCreation(
                configuration: SessionConfiguration(kind: .default),
                delegate: DelegateSpec(url: "http://127.0.0.1:9/hooks", secret: WebhookHarness.newSecret(), maximumInFlight: maximumInFlight)
            )
        ).session
    }
}
