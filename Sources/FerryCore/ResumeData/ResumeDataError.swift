/// Why a resume data token was refused. The descriptions are safe to show the tenant: they name
/// neither the signing key nor another tenant.
public enum ResumeDataError: Error, Equatable, Sendable {
    /// Not a resume data token at all: wrong shape, bad base64url, or an unreadable payload.
    case malformed
    /// A token format this version of Ferry does not read (the version label, e.g. `frd9`).
    case unsupportedVersion(String)
    /// The signature does not match: the token was altered or forged.
    case badSignature
    /// A genuine token, but made for another tenant.
    case wrongTenant
}

extension ResumeDataError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .malformed:
            return "resumeData is not a resume data token"
        case .unsupportedVersion(let version):
            return "resumeData has an unsupported format version (\(version))"
        case .badSignature:
            return "resumeData was altered or was not produced by this service"
        case .wrongTenant:
            return "resumeData was not produced for this tenant"
        }
    }
}
