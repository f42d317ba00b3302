import Foundation

/// ISO 8601 dates as clients write them: with or without fractional seconds.
public enum ISO8601Parsing {
    public static func date(from text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// RFC 3339 with milliseconds in UTC, the form every timestamp Ferry writes takes.
    public static func string(from date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
