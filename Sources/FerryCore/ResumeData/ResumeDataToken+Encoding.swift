import Crypto
import Foundation

/// The token's wire form: `frd1.<base64url payload>.<base64url HMAC-SHA256>`, no padding.
///
/// The MAC covers the version label and the payload text, so neither can be changed. The
/// version label stays visible so that a future format can be told apart before any parsing.
extension ResumeDataToken {
    static let versionLabel = "frd1"
    /// Longer texts are refused before any work: real tokens are far smaller.
    static let maximumEncodedLength = 64 * 1024

    /// The token as a string for the tenant. `signingKey` should be at least 32 random bytes,
    /// kept by the service and never shown.
    public func encode(signingKey: [UInt8]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .deferredToDate
        // Encoding strings, integers, dates and dictionaries of strings cannot fail.
        let payload = (try? encoder.encode(self)) ?? Data()
        let signedPart = Self.versionLabel + "." + Base64URL.encode(Array(payload))
        return signedPart + "." + Base64URL.encode(Self.mac(signedPart, signingKey: signingKey))
    }

    /// Reads and checks a token presented by a tenant: shape, version, signature (constant
    /// time), then tenant.
    public static func decode(_ text: String, signingKey: [UInt8], expectedTenantID: String) throws(ResumeDataError) -> ResumeDataToken {
        guard text.utf8.count <= maximumEncodedLength else { throw .malformed }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let version = parts.first, version.hasPrefix("frd"), version.count > 3,
              version.dropFirst(3).utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw .malformed }
        guard version == versionLabel else { throw .unsupportedVersion(String(version)) }
        guard parts.count == 3,
              let payload = Base64URL.decode(parts[1]),
              let presentedMAC = Base64URL.decode(parts[2])
        else { throw .malformed }

        let signedPart = String(version) + "." + String(parts[1])
        guard constantTimeEquals(presentedMAC, mac(signedPart, signingKey: signingKey)) else {
            throw .badSignature
        }

        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        guard let token = try? decoder.decode(ResumeDataToken.self, from: Data(payload)) else {
            throw .malformed
        }
        guard token.tenantID == expectedTenantID else { throw .wrongTenant }
        return token
    }

    static func mac(_ signedPart: String, signingKey: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(signedPart.utf8), using: SymmetricKey(data: signingKey)))
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        // Standard base64 characters and padding are not part of this alphabet.
        guard !text.contains(where: { $0 == "+" || $0 == "/" || $0 == "=" }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = standard.utf8.count % 4
        guard remainder != 1 else { return nil }
        if remainder != 0 { standard += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: standard).map(Array.init)
    }
}
