extension TestOrigin {
    /// `count` deterministic, noise-like bytes (SplitMix64). The same seed always gives the
    /// same bytes; different seeds give unrelated streams (not shifted copies of each other),
    /// so a download spliced from two versions of a resource, or resumed at the wrong offset,
    /// never compares equal.
    public static func pattern(count: Int, seed: UInt8 = 0) -> [UInt8] {
        let count = max(0, count)
        var state = mix(UInt64(seed) &+ 0xD1B5_4A32_D192_ED03)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                state &+= 0x9E37_79B9_7F4A_7C15
                var word = mix(state)
                for _ in 0..<8 where index < count {
                    buffer[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
            initialized = count
        }
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
