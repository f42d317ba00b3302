/// A header value of the form `essence; name=value; name="quoted value"` (Content-Type, Content-Disposition).
struct MediaType {
    /// The part before the first ";", lowercased ("text/html", "attachment").
    var essence: String
    /// Parameter names lowercased; quotes and escapes removed.
    var parameters: [String: String] = [:]

    init(_ value: String) {
        var parts = Self.splitParameters(value)
        essence = parts.isEmpty ? "" : parts.removeFirst().trimmingSpaces.lowercased()
        for part in parts {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let name = String(part[..<equals]).trimmingSpaces.lowercased()
            var raw = String(part[part.index(after: equals)...]).trimmingSpaces
            if raw.hasPrefix("\""), raw.hasSuffix("\""), raw.count >= 2 {
                raw = String(raw.dropFirst().dropLast()).replacingEscapes()
            }
            if parameters[name] == nil { parameters[name] = raw }
        }
    }

    /// Splits on ";" outside quoted strings.
    private static func splitParameters(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in value {
            if escaped {
                escaped = false
            } else if character == "\\", inQuotes {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ";", !inQuotes {
                parts.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        parts.append(current)
        return parts
    }
}

private extension String {
    func replacingEscapes() -> String {
        var result = ""
        var escaped = false
        for character in self {
            if escaped { result.append(character); escaped = false } else if character == "\\" { escaped = true } else { result.append(character) }
        }
        return result
    }
}
