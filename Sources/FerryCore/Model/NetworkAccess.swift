/// `URLRequest.NetworkServiceType`, by its Swift case names. Ferry accepts and shows it back; it
/// has no effect here (there is no radio or traffic class to choose on a server).
public enum NetworkServiceType: String, Codable, Sendable, CaseIterable {
    case `default`
    case voip
    case video
    case background
    case voice
    case responsiveData
    case avStreaming
    case responsiveAV
    case callSignaling
}

/// `URLSessionConfiguration.MultipathServiceType`, by its Swift case names. Accepted and shown
/// back; no effect here (Multipath TCP is a device's choice between its interfaces).
public enum MultipathServiceType: String, Codable, Sendable, CaseIterable {
    case none
    case handover
    case interactive
    case aggregate
}
