/// The status line and header fields of one HTTP response, assembled from the raw lines curl delivers.
public struct ResponseHead: Sendable, Equatable {
    public var statusCode: Int
    public var httpVersion: String
    /// In order of arrival, names as the server spelled them.
    public var fields: [(name: String, value: String)]

    public init(statusCode: Int, httpVersion: String = "HTTP/1.1", fields: [(name: String, value: String)] = []) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
    }

    public func value(of name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }?.value
    }

    public func values(of name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// 1xx responses precede the real one (100 Continue, 103 Early Hints); 101 is a protocol switch.
    public var isInterim: Bool { (100...199).contains(statusCode) && statusCode != 101 }

    public var isRedirect: Bool { [301, 302, 303, 307, 308].contains(statusCode) }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.httpVersion == rhs.httpVersion
            && lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }
}

/// Builds `ResponseHead`s from header lines as curl hands them over: a status line, fields,
/// and a blank line, for each response of a transfer (interim 1xx ones included).
public struct ResponseHeadAccumulator: Sendable {
    private var current: ResponseHead?
    /// The most recent complete head.
    public private(set) var completed: ResponseHead?
    /// A head larger than this is refused, so a hostile server cannot grow memory without bound.
    public static let maximumHeadBytes = 256 * 1024
    private var headBytes = 0

    public init() {}

    public enum LineResult: Equatable {
        case more
        /// A blank line ended a head (interim or final).
        case headComplete(ResponseHead)
        case tooLarge
        case malformed
    }

    public mutating func consume(_ line: some Collection<UInt8>) -> LineResult {
        headBytes += line.count
        guard headBytes <= Self.maximumHeadBytes else { return .tooLarge }
        // Strip CR/LF as bytes: in a Swift String "\r\n" is one Character, so hasSuffix("\n") misses it.
        var bytes = Array(line)
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        let text = String(decoding: bytes, as: UTF8.self)

        if text.isEmpty {
            guard let head = current else { return .more }
            completed = head
            current = nil
            headBytes = 0
            return .headComplete(head)
        }
        if text.hasPrefix("HTTP/") {
            let parts = text.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let code = Int(parts[1]), (100...999).contains(code) else { return .malformed }
            current = ResponseHead(statusCode: code, httpVersion: String(parts[0]))
            return .more
        }
        guard current != nil else { return .malformed }
        if let first = text.first, first == " " || first == "\t" {
            // Obsolete line folding: a continuation of the previous field.
            if let last = current?.fields.popLast() {
                current?.fields.append((last.name, last.value + " " + text.trimmingSpaces))
            }
            return .more
        }
        guard let colon = text.firstIndex(of: ":") else { return .malformed }
        let name = String(text[..<colon])
        let value = String(text[text.index(after: colon)...]).trimmingSpaces
        current?.fields.append((name, value))
        return .more
    }
}
