import Foundation

/// ISO 8601 dates as clients write them: with or without fractional seconds.
public enum ISO8601Parsing {
    /// Refuses what Foundation would roll over (February 30, hour 25) and years beyond 9999.
    public static func date(from text: String) -> Date? {
        guard hasValidFields(text) else { return nil }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `YYYY-MM-DDTHH:MM:SS…` with every field in range for its calendar date.
    static func hasValidFields(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return false }
        func field(_ range: Range<Int>) -> Int? {
            let slice = bytes[range]
            guard slice.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            return Int(String(decoding: slice, as: UTF8.self))
        }
        guard let year = field(0..<4), let month = field(5..<7), let day = field(8..<10),
              let hour = field(11..<13), let minute = field(14..<16), let second = field(17..<19),
              (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return false }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// RFC 3339 with milliseconds in UTC, the form every timestamp Ferry writes takes.
    public static func string(from date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
