extension Duration {
    /// The duration as a floating-point number of seconds (attosecond precision is not needed
    /// for backoff arithmetic).
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
