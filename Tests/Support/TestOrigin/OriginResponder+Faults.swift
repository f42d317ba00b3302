/// Ways a response body can go wrong, to exercise a client's resume and timeout paths.
///
/// Byte counts are body bytes (not counting the head). When both `resetAfter` and
/// `closeAfter` are set, the smaller one ends the body; at equal counts the RST wins.
public struct BodyFaults: Sendable {
    /// Send this many body bytes, then abort with RST (clients report "recv failure", curl 56).
    public var resetAfter: Int?
    /// Send this many body bytes, then close with FIN (a short body, curl 18).
    public var closeAfter: Int?
    /// After `bytes` body bytes, stop writing for `seconds`, then continue.
    public var stallAfter: (bytes: Int, seconds: Double)?
    /// Throttle the body to about this rate, written in slices of a fiftieth of it.
    public var bytesPerSecond: Int?

    public init(
        resetAfter: Int? = nil,
        closeAfter: Int? = nil,
        stallAfter: (bytes: Int, seconds: Double)? = nil,
        bytesPerSecond: Int? = nil
    ) {
        self.resetAfter = resetAfter
        self.closeAfter = closeAfter
        self.stallAfter = stallAfter
        self.bytesPerSecond = bytesPerSecond
    }

    var isEmpty: Bool {
        resetAfter == nil && closeAfter == nil && stallAfter == nil && bytesPerSecond == nil
    }
}

extension OriginResponder {
    /// Writes `body` (after the head) with `faults` applied. Responses without a body (HEAD,
    /// 204, 304) send nothing and apply no fault.
    public func write(_ body: [UInt8], faults: BodyFaults) throws {
        guard hasBody else { return }
        guard !faults.isEmpty else {
            try write(body[...])
            return
        }
        let cut = [faults.resetAfter, faults.closeAfter].compactMap { $0 }.min().map { max(0, $0) }
        let limit = min(body.count, cut ?? body.count)
        let slice = faults.bytesPerSecond.map { max(1, $0 / 50) }
        var offset = 0
        var hasStalled = false
        while true {
            if let stall = faults.stallAfter, !hasStalled, offset >= stall.bytes {
                pause(seconds: stall.seconds)
                hasStalled = true
            }
            if offset >= limit { break }
            var end = limit
            if let stall = faults.stallAfter, !hasStalled { end = min(end, stall.bytes) }
            if let slice { end = min(end, offset + slice) }
            try write(body[offset..<end])
            if let rate = faults.bytesPerSecond {
                pause(seconds: Double(end - offset) / Double(rate))
            }
            offset = end
        }
        if let cut, cut == faults.resetAfter {
            reset()
        } else if cut != nil {
            close()
        }
    }
}
