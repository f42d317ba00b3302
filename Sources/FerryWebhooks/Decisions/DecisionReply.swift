import FerryCore

/// Reading a receiver's answer to a decision event, defensively: only a 2xx whose whole body
/// (at most `maximumBytes`) is a JSON object counts; anything else means URLSession's default.
enum DecisionReply {
    static let maximumBytes = 64 * 1024

    static func parse(statusCode: Int?, body: [UInt8], isTruncated: Bool) -> JSONValue? {
        guard let statusCode, (200..<300).contains(statusCode) else { return nil }
        guard !isTruncated, !body.isEmpty, body.count <= maximumBytes else { return nil }
        guard let value = try? JSONValue.parse(body), case .object = value else { return nil }
        return value
    }

    /// Why a reply did not count, for the attempt record (never the reply itself).
    static func rejection(statusCode: Int?, body: [UInt8], isTruncated: Bool) -> String {
        guard let statusCode else { return "no answer" }
        guard (200..<300).contains(statusCode) else { return "answered \(statusCode)" }
        if isTruncated || body.count > maximumBytes { return "the reply is larger than 64 KiB" }
        if body.isEmpty { return "the reply is empty" }
        return "the reply is not a JSON object"
    }
}
