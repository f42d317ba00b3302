import FerryCore
import Hummingbird

/// Typed access to query parameters; an invalid one is a 400 naming it (`query.limit`).
struct QueryParameters {
    let request: Request

    init(_ request: Request) {
        self.request = request
    }

    private func raw(_ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }

    func integer(_ name: String, in range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text = raw(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw APIError.badRequest("query.\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).", field: "query.\(name)")
        }
        return number
    }

    func number(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = raw(name) else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw APIError.badRequest(
                "query.\(name) must be a number of seconds from \(FieldReader.format(range.lowerBound)) to \(FieldReader.format(range.upperBound)).",
                field: "query.\(name)"
            )
        }
        return number
    }

    func string(_ name: String, maxLength: Int = 128) throws -> String? {
        guard let text = raw(name) else { return nil }
        guard !text.isEmpty, text.utf8.count <= maxLength else {
            throw APIError.badRequest("query.\(name) must be 1 to \(maxLength) characters long.", field: "query.\(name)")
        }
        return text
    }

    /// A comma-separated list of one enumeration's values (`?state=running,suspended`).
    func choices<T: RawRepresentable<String> & CaseIterable>(_ name: String, as type: T.Type) throws -> [T]? {
        guard let text = raw(name) else { return nil }
        return try text.split(separator: ",").map { item in
            guard let value = T(rawValue: String(item)) else {
                let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
                throw APIError.badRequest("query.\(name) must list values among \(allowed); \"\(item)\" is not one.", field: "query.\(name)")
            }
            return value
        }
    }

    /// `limit` and `after` of cursor pagination.
    func page() throws -> (limit: Int, after: String?) {
        (try integer("limit", in: 1...1000, default: 100), try string("after"))
    }
}
