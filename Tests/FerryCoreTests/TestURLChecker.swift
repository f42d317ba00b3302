import FerryCore

/// A URL checker for unit tests: FerryCore's validation with a simple stand-in for curl's parser.
struct TestURLChecker: URLSyntaxChecker {
    func check(_ text: String, field: String) throws -> CheckedURL {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, ["http", "https"].contains(parts[0].lowercased()), parts[1].hasPrefix("//"), parts[1].count > 2 else {
            throw ValidationError(field: field, message: "must be an http or https URL.")
        }
        let host = parts[1].dropFirst(2).split(separator: "/").first.map(String.init) ?? ""
        return CheckedURL(url: text, scheme: String(parts[0]).lowercased(), host: host)
    }
}

/// Parses a JSON literal for a test.
func json(_ text: String) throws -> JSONValue {
    try JSONValue.parse(Array(text.utf8))
}
