import Foundation
import Hummingbird

/// `GET /openapi.json`: the OpenAPI 3.1 document of the whole API, public like the probes so
/// clients and tools can read the contract without a key. The document is written by hand and
/// kept true by a test that compares it with the routes this router registers.
struct OpenAPIRoutes {
    func register(on router: Router<FerryRequestContext>) {
        router.get("openapi.json") { _, _ in
            guard let document = OpenAPIDocument.bytes else {
                throw APIError.unavailable("The OpenAPI document is not installed next to the ferry binary (Ferry_FerryAPI.resources).")
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }
}

/// The document, read once from the FerryAPI target's resources.
public enum OpenAPIDocument {
    /// The bytes of `openapi.json`; nil when the resource bundle is missing (a binary copied
    /// without its `*.resources` folders).
    public static let bytes: [UInt8]? = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let data = try? Data(contentsOf: url)
        else { return nil }
        return Array(data)
    }()
}
