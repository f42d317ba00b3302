import FerryCore
import Metrics
import Synchronization

/// The engine's metrics (swift-metrics; exported by whatever backend the process bootstrapped).
enum EngineMetrics {
    static let bytesReceived = Counter(label: "ferry_transfer_bytes_total", dimensions: [("direction", "received")])
    static let bytesSent = Counter(label: "ferry_transfer_bytes_total", dimensions: [("direction", "sent")])
    static let leaseTakeovers = Counter(label: "ferry_lease_takeovers_total")
    static let runningTransfers = Gauge(label: "ferry_running_transfers")

    /// The count of transfers that ended, and how long they took, by kind and how they ended.
    static func transfersEnded(kind: TaskKind, outcome: String) -> (count: Counter, duration: Metrics.Timer) {
        endedTransferMetrics.withLock { made in
            let key = EndedTransferKey(kind: kind, outcome: outcome)
            if let metrics = made[key] { return metrics }
            let metrics = (
                count: Counter(label: "ferry_transfers_total", dimensions: [("kind", kind.rawValue), ("outcome", outcome)]),
                duration: Metrics.Timer(
                    label: "ferry_transfer_duration_seconds", dimensions: [("kind", kind.rawValue), ("outcome", outcome)],
                    preferredDisplayUnit: .seconds
                )
            )
            made[key] = metrics
            return metrics
        }
    }

    /// Made once per kind and outcome: making a metric asks the backend's registry (a lock, the
    /// label set built and looked up) every time, a few per cent of the engine's CPU when a
    /// thousand small downloads end in a second.
    private static let endedTransferMetrics = Mutex<[EndedTransferKey: (count: Counter, duration: Metrics.Timer)]>([:])

    private struct EndedTransferKey: Hashable {
        var kind: TaskKind
        var outcome: String
    }

    static func tasks(state: TaskState, kind: TaskKind) -> Gauge {
        Gauge(label: "ferry_tasks", dimensions: [("state", state.rawValue), ("kind", kind.rawValue)])
    }

    static let queueDepth = Gauge(label: "ferry_queue_depth")

    /// How long transfers wait for a decision the receiver is asked about: from the transfer's
    /// pause to the decision handed back to it (its event written, its delivery and the task's
    /// earlier ones sent, the reply read), by who decided (`"default"`: no usable reply in time).
    static func decisionPause(decidedByReceiver: Bool) -> Metrics.Timer {
        decidedByReceiver ? decisionPauseForReceiver : decisionPauseForDefault
    }

    private static let decisionPauseForReceiver = Metrics.Timer(
        label: "ferry_decision_pause_seconds", dimensions: [("decided_by", "receiver")], preferredDisplayUnit: .seconds
    )
    private static let decisionPauseForDefault = Metrics.Timer(
        label: "ferry_decision_pause_seconds", dimensions: [("decided_by", "default")], preferredDisplayUnit: .seconds
    )
}
