import FerryCore

extension JSONValue {
    /// A copy with the member at a dotted `path` ("request.url") set, or removed when `value` is nil.
    /// Missing intermediate objects are created, so any body can be derived from a valid one.
    func setting(_ path: String, to value: JSONValue?) -> JSONValue {
        setting(path.split(separator: ".").map(String.init)[...], to: value)
    }

    private func setting(_ keys: ArraySlice<String>, to value: JSONValue?) -> JSONValue {
        guard let key = keys.first else { return value ?? .null }
        var members = objectValue ?? [:]
        if keys.count == 1 {
            members[key] = value
        } else {
            members[key] = (members[key] ?? .object([:])).setting(keys.dropFirst(), to: value)
        }
        return .object(members)
    }

    /// `count` copies of `character`, for lengths just over a limit.
    static func repeated(_ character: Character, count: Int) -> JSONValue {
        .string(String(repeating: character, count: count))
    }
}
