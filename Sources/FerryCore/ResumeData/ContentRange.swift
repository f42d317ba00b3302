/// A parsed `Content-Range` header of a byte range (RFC 9110 §14.4):
/// `bytes 500-999/1000`, `bytes 500-999/*` (length unknown), or `bytes */1000` (in a 416).
public struct ContentRange: Hashable, Sendable {
    /// The bytes this response carries; `nil` for `bytes */N` (unsatisfied range).
    public let range: ClosedRange<Int64>?
    /// The complete length of the representation; `nil` when the server wrote `*`.
    public let completeLength: Int64?

    public init(range: ClosedRange<Int64>?, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses the header value; `nil` for anything that is not a well-formed byte range
    /// (other units, `bytes */*`, a last byte before the first, a range past the length).
    public init?(_ header: String) {
        let text = header.trimmingASCIISpaces()
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let spec = text.dropFirst(6).trimmingASCIISpaces()
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }

        let length: Int64?
        if halves[1] == "*" {
            length = nil
        } else {
            guard let parsed = Self.number(halves[1]) else { return nil }
            length = parsed
        }

        if halves[0] == "*" {
            guard let length else { return nil }
            self.init(range: nil, completeLength: length)
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
              first <= last
        else { return nil }
        if let length, last >= length { return nil }
        self.init(range: first...last, completeLength: length)
    }

    /// A non-negative decimal without sign or spaces.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingASCIISpaces() -> Substring {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return Substring(text)
    }
}
