import FerryCore
import FerryStore
import Foundation

/// The overview as aligned plain-text tables, for operators reading it in a terminal.
enum OverviewText {
    static func render(_ overview: OverviewStore.Overview) -> String {
        let states = ["suspended", "running", "canceling", "completed"]
        let tenants = table(
            ["TENANT", "NAME", "STATUS", "SESSIONS"] + states.map { $0.uppercased() } + ["BYTES TODAY", "FAILING HOOKS"],
            overview.tenants.map { line in
                [line.id, line.name, line.status, String(line.sessions)] + states.map { String(line.tasks[$0] ?? 0) }
                    + [String(line.bytesToday), String(line.failingWebhookEndpoints)]
            }
        )
        let instances = table(
            ["INSTANCE", "VERSION", "WORKERS", "RUNNING", "HEARTBEAT", "STATE"],
            overview.instances.map { line in
                [line.id, line.version, String(line.workers), String(line.runningTransfers),
                 ISO8601Parsing.string(from: line.heartbeatAt), line.isStale ? "gone" : "live"]
            }
        )
        return "\(tenants)\n\(instances)\nqueued transfers: \(overview.queueDepth)\n"
    }

    /// Columns padded to their widest cell; numbers right-aligned.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                let cell = row[column]
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return Int64(cell) != nil ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }
}
