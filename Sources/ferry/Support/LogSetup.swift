import Foundation
import Logging

/// Bootstraps swift-log once: human-readable lines, or JSON lines for log shippers.
enum LogSetup {
    /// FERRY_LOG_FORMAT and FERRY_LOG_LEVEL, as the settings read (and checked) them.
    static func bootstrap(_ settings: FerrySettings) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = settings.logsAsJSON ? JSONLineLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
    }
}

/// One JSON object per line on standard error: time, level, label, message, metadata.
struct JSONLineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [
            "time": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue,
            "label": label,
            "message": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = Self.plain(value)
        }
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): values.map(plain)
        case .dictionary(let values): values.mapValues(plain)
        }
    }
}
