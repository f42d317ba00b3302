extension Duration {
    /// The duration as a floating-point number of seconds (attosecond precision is not needed
    /// for backoff arithmetic).
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole milliseconds (as attempt records keep it).
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
