import FerryCore
import Metrics

/// The engine's metrics (swift-metrics; exported by whatever backend the process bootstrapped).
enum EngineMetrics {
    static let bytesReceived = Counter(label: "ferry_transfer_bytes_total", dimensions: [("direction", "received")])
    static let bytesSent = Counter(label: "ferry_transfer_bytes_total", dimensions: [("direction", "sent")])
    static let leaseTakeovers = Counter(label: "ferry_lease_takeovers_total")
    static let runningTransfers = Gauge(label: "ferry_running_transfers")

    /// How long transfers took, by kind and how they ended.
    static func transferDuration(kind: TaskKind, outcome: String) -> Metrics.Timer {
        Metrics.Timer(label: "ferry_transfer_duration_seconds", dimensions: [("kind", kind.rawValue), ("outcome", outcome)], preferredDisplayUnit: .seconds)
    }

    static func transfersEnded(kind: TaskKind, outcome: String) -> Counter {
        Counter(label: "ferry_transfers_total", dimensions: [("kind", kind.rawValue), ("outcome", outcome)])
    }

    static func tasks(state: TaskState, kind: TaskKind) -> Gauge {
        Gauge(label: "ferry_tasks", dimensions: [("state", state.rawValue), ("kind", kind.rawValue)])
    }

    static let queueDepth = Gauge(label: "ferry_queue_depth")
}
