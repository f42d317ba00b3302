import Foundation

/// What a `Range` header asks of a representation of `total` bytes (RFC 9110 §14).
enum ByteRange: Equatable {
    /// No usable range: serve the whole representation with 200.
    case whole
    /// Serve these bytes with 206.
    case partial(first: Int, last: Int)
    /// Answer 416 with `Content-Range: bytes */total`.
    case unsatisfiable

    /// Evaluates a `Range` value. Syntax errors, other units and multiple ranges are ignored
    /// (RFC 9110 allows a server to ignore `Range`), which yields `.whole`.
    static func evaluate(_ header: String?, total: Int) -> ByteRange {
        guard let header else { return .whole }
        let trimmed = header.trimmingCharacters(in: [" ", "\t"])
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let specs = trimmed.dropFirst("bytes=".count).split(separator: ",")
        guard specs.count == 1 else { return .whole }
        let spec = specs[0].trimmingCharacters(in: [" ", "\t"])
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let firstText = String(parts[0]), lastText = String(parts[1])
        guard firstText.allSatisfy(\.isASCIIDigit), lastText.allSatisfy(\.isASCIIDigit) else { return .whole }

        if firstText.isEmpty {
            // Suffix range: the last N bytes.
            guard let suffix = Int(lastText) else { return .whole }
            guard suffix > 0, total > 0 else { return .unsatisfiable }
            return .partial(first: max(0, total - suffix), last: total - 1)
        }
        guard let first = Int(firstText) else { return .whole }
        if lastText.isEmpty {
            return first < total ? .partial(first: first, last: total - 1) : .unsatisfiable
        }
        guard let last = Int(lastText), last >= first else { return .whole }
        guard first < total else { return .unsatisfiable }
        return .partial(first: first, last: min(last, total - 1))
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
