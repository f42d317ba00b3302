import Logging
import Synchronization

/// Keeps what is logged through its `logger`, for tests that count log lines (a retry loop's
/// log must not grow with an outage's length).
public final class LogRecorder: Sendable {
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    /// A logger whose every line (trace and up) is kept here.
    public var logger: Logger {
        var logger = Logger(label: "ferry.test.recorded") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    public var all: [Entry] { entries.withLock { $0 } }

    /// How many lines say `message`.
    public func count(_ message: String) -> Int {
        entries.withLock { $0.filter { $0.message == message }.count }
    }

    fileprivate func keep(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.keep(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
