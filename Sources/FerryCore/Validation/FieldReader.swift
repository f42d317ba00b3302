/// Reads the members of one JSON object, remembering which it read, so that `finish()` can
/// reject the ones nobody asked for. Every error names the field by its full dotted path.
///
/// A reference type because nested readers share nothing but their path; it is used on one
/// thread while one request is validated.
public final class FieldReader {
    public let path: String
    private let members: [String: JSONValue]
    private var consumed: Set<String> = []

    public init(_ value: JSONValue, path: String = "") throws {
        guard case .object(let members) = value else {
            throw ValidationError(field: path, message: "must be a JSON object, not \(value.typeDescription).")
        }
        self.path = path
        self.members = members
    }

    public func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// Whether the member is present with a value (null counts as absent, as everywhere here).
    public func contains(_ key: String) -> Bool {
        if let member = members[key] { return member != .null }
        return false
    }

    /// Whether the member is present as `null`: for PATCH bodies, where null clears a value
    /// and absence keeps it.
    public func isExplicitNull(_ key: String) -> Bool {
        consumed.insert(key)
        return members[key] == .null
    }

    /// The raw value; `null` counts as absent, as for every typed accessor below.
    public func value(_ key: String) -> JSONValue? {
        consumed.insert(key)
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    public func error(_ key: String, _ message: String) -> ValidationError {
        ValidationError(field: fieldPath(key), message: message)
    }

    /// Rejects members that were never read: a misspelt field must not be silently ignored.
    public func finish() throws {
        let unknown = Set(members.keys).subtracting(consumed).sorted()
        guard let first = unknown.first else { return }
        throw ValidationError(field: fieldPath(first), message: "is not a known field.")
    }

    // MARK: Typed accessors (nil when absent or null)

    public func string(_ key: String, maxLength: Int = 8192, allowEmpty: Bool = true) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw error(key, "must be a string, not \(value.typeDescription).") }
        guard text.utf8.count <= maxLength else { throw error(key, "must be at most \(maxLength) bytes long.") }
        guard allowEmpty || !text.isEmpty else { throw error(key, "must not be empty.") }
        guard !text.utf8.contains(0) else { throw error(key, "must not contain NUL characters.") }
        return text
    }

    public func requiredString(_ key: String, maxLength: Int = 8192) throws -> String {
        guard let text = try string(key, maxLength: maxLength, allowEmpty: false) else {
            throw error(key, "is required.")
        }
        return text
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "must be true or false, not \(value.typeDescription).") }
        return flag
    }

    public func number(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value else {
            throw error(key, "must be a number, not \(value.typeDescription).")
        }
        guard number.isFinite else {
            // 1e309 parses, as infinity: it is a number, only not one Ferry can hold.
            throw error(key, "must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound)); this number is too large to hold.")
        }
        guard range.contains(number) else {
            throw error(key, "must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound)), not \(Self.format(number)).")
        }
        return number
    }

    public func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value, number.isFinite, number.rounded() == number else {
            throw error(key, "must be a whole number, not \(value.typeDescription == "a number" ? "a fraction" : value.typeDescription).")
        }
        guard number >= Double(range.lowerBound), number <= Double(range.upperBound) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), not \(Self.format(number)).")
        }
        return Int(number)
    }

    /// One of a fixed set of strings; the error lists them.
    public func choice<T: RawRepresentable<String> & CaseIterable>(_ key: String, as type: T.Type) throws -> T? {
        guard let text = try string(key, maxLength: 64) else { return nil }
        guard let choice = T(rawValue: text) else {
            let allowed = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw error(key, "must be one of \(allowed), not \"\(text)\".")
        }
        return choice
    }

    public func object(_ key: String) throws -> FieldReader? {
        guard let value = value(key) else { return nil }
        return try FieldReader(value, path: fieldPath(key))
    }

    public func array(_ key: String, maxCount: Int) throws -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let elements) = value else { throw error(key, "must be an array, not \(value.typeDescription).") }
        guard elements.count <= maxCount else { throw error(key, "must have at most \(maxCount) elements.") }
        return elements
    }

    /// An object whose members are all strings, such as a set of HTTP headers.
    public func stringMap(_ key: String, maxCount: Int = 256, maxValueLength: Int = 8192) throws -> [String: String]? {
        guard let value = value(key) else { return nil }
        guard case .object(let members) = value else { throw error(key, "must be an object of strings, not \(value.typeDescription).") }
        guard members.count <= maxCount else { throw error(key, "must have at most \(maxCount) members.") }
        var result: [String: String] = [:]
        for (name, member) in members {
            guard case .string(let text) = member else {
                throw ValidationError(field: "\(fieldPath(key)).\(name)", message: "must be a string, not \(member.typeDescription).")
            }
            guard text.utf8.count <= maxValueLength else {
                throw ValidationError(field: "\(fieldPath(key)).\(name)", message: "must be at most \(maxValueLength) bytes long.")
            }
            guard !text.utf8.contains(0), !name.utf8.contains(0) else {
                throw ValidationError(field: "\(fieldPath(key)).\(name)", message: "must not contain NUL characters.")
            }
            result[name] = text
        }
        return result
    }

    public static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
