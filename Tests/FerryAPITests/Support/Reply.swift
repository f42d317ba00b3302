import FerryCore
import Foundation
import HTTPTypes
import HummingbirdTesting

/// One HTTP answer of the API, as a client sees it.
struct Reply: Sendable, CustomStringConvertible {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: [UInt8]

    init(_ response: TestResponse) {
        status = response.status
        headers = response.headers
        body = Array(response.body.readableBytesView)
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    var contentType: String? { headers[.contentType] }
    var requestID: String? { headers[HTTPField.Name("X-Request-ID")!] }
    var isProblem: Bool { contentType == "application/problem+json" }

    var description: String {
        "\(status.code) \(contentType ?? "-") \(text.prefix(600))"
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try JSONCoding.makeDecoder().decode(type, from: Data(body))
        } catch {
            throw UnexpectedReply(reply: self, expectation: "a \(type) body (\(error))")
        }
    }

    /// The problem+json document, when the body is one.
    var problem: ProblemReply? {
        guard isProblem else { return nil }
        return try? decode(ProblemReply.self)
    }
}

/// A reply a typed helper did not expect; its description carries the whole answer.
struct UnexpectedReply: Error, CustomStringConvertible {
    var reply: Reply
    var expectation: String

    var description: String { "expected \(expectation), got \(reply)" }
}
