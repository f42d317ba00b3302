import Foundation

extension OriginResponder {
    /// Checks the request's Basic credentials (RFC 7617). Returns true when they match;
    /// otherwise answers 401 with a `Basic` challenge and returns false, so a handler reads
    /// `guard try responder.requireBasicAuth(...) else { return }`.
    public func requireBasicAuth(user: String, password: String, realm: String = "TestOrigin") throws -> Bool {
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        if let sent = request.header("Authorization"), sent.trimmingCharacters(in: .whitespaces) == expected {
            return true
        }
        try challenge("Basic realm=\"\(realm)\", charset=\"UTF-8\"")
        return false
    }

    /// Checks Digest credentials (RFC 7616, `algorithm=MD5`, `qop=auth`): the nonce must be one
    /// this origin issued, the `uri` must be this request's target and the `response` must be
    /// the digest of the right password. Answers 401 with a fresh challenge otherwise.
    public func requireDigestAuth(user: String, password: String, realm: String = "TestOrigin") throws -> Bool {
        let opaque = MD5.hex("opaque:\(realm)")
        if let sent = request.header("Authorization"), isValidDigest(sent, user: user, password: password, realm: realm, opaque: opaque) {
            return true
        }
        let nonce = connection.core.issueNonce(realm: realm)
        try challenge("Digest realm=\"\(realm)\", qop=\"auth\", algorithm=MD5, nonce=\"\(nonce)\", opaque=\"\(opaque)\"")
        return false
    }

    private func challenge(_ value: String) throws {
        try respond(
            status: 401,
            headers: [("WWW-Authenticate", value), ("Content-Type", "text/plain")],
            body: Array("Unauthorized\n".utf8)
        )
    }

    private func isValidDigest(_ header: String, user: String, password: String, realm: String, opaque: String) -> Bool {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("digest ") else { return false }
        let fields = Self.authParameters(trimmed.dropFirst("digest ".count))
        guard fields["username"] == user, fields["realm"] == realm,
              let nonce = fields["nonce"], connection.core.isIssued(nonce: nonce),
              let uri = fields["uri"], uri == request.target,
              fields["qop"]?.lowercased() == "auth",
              let count = fields["nc"], let clientNonce = fields["cnonce"],
              let response = fields["response"]?.lowercased(),
              fields["opaque"] == nil || fields["opaque"] == opaque,
              fields["algorithm"].map({ $0.uppercased() == "MD5" }) ?? true else { return false }
        let secretHash = MD5.hex("\(user):\(realm):\(password)")
        let requestHash = MD5.hex("\(request.method):\(uri)")
        return response == MD5.hex("\(secretHash):\(nonce):\(count):\(clientNonce):auth:\(requestHash)")
    }

    /// Parses `name=token` / `name="quoted \"string\""` pairs separated by commas; names are
    /// lower-cased.
    static func authParameters(_ text: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = text
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { return result }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var isEscaped = false
                while let character = rest.popFirst() {
                    if isEscaped {
                        value.append(character)
                        isEscaped = false
                    } else if character == "\\" {
                        isEscaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            result[name] = value
        }
    }
}
