import FerryCore
import Hummingbird

/// Typed access to query parameters; an invalid one is a 400 naming it (`query.limit`), and
/// so is one the route does not know (`finish()`), as for body fields.
final class QueryParameters {
    let request: Request
    private var read: Set<String> = []

    init(_ request: Request) {
        self.request = request
    }

    private func raw(_ name: String) -> String? {
        read.insert(name)
        return request.uri.queryParameters[name[...]].map(String.init)
    }

    /// Rejects parameters nothing read: a misspelt `?limt=5` must not be silently ignored.
    func finish() throws {
        let names = Set(request.uri.queryParameters.map { String($0.key) })
        if let unknown = names.subtracting(read).sorted().first {
            throw APIError.badRequest("query.\(unknown) is not a known query parameter.", field: "query.\(unknown)")
        }
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
        let decimal = !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }
        guard decimal, let number = Double(text), number.isFinite, range.contains(number) else {
            throw APIError.badRequest(
                "query.\(name) must be a number of seconds from \(FieldReader.format(range.lowerBound)) to \(FieldReader.format(range.upperBound)).",
                field: "query.\(name)"
            )
        }
        return number
    }

    func string(_ name: String, maxLength: Int = 128) throws -> String? {
        guard let text = raw(name) else { return nil }
        guard !text.isEmpty, text.utf8.count <= maxLength, !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw APIError.badRequest("query.\(name) must be 1 to \(maxLength) characters long, without control characters.", field: "query.\(name)")
        }
        return text
    }

    /// A comma-separated list of one enumeration's values (`?state=running,suspended`).
    func choices<T: RawRepresentable<String> & CaseIterable>(_ name: String, as type: T.Type) throws -> [T]? {
        guard let text = raw(name) else { return nil }
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !items.contains(where: \.isEmpty) else {
            throw APIError.badRequest("query.\(name) must be a comma-separated list of values, without empty items.", field: "query.\(name)")
        }
        return try items.map { item in
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

    /// For routes whose only parameters are `limit` and `after`.
    static func page(of request: Request) throws -> (limit: Int, after: String?) {
        let query = QueryParameters(request)
        let page = try query.page()
        try query.finish()
        return page
    }
}
