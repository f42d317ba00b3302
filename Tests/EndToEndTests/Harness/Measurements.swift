import Foundation

/// Figures the end-to-end tests measure (takeover times, bytes fetched twice), printed on one
/// recognisable line each so a run's output can be grepped for them: `E2E-MEASURE name: …`.
enum Measurements {
    static func report(_ name: String, _ figures: KeyValuePairs<String, String>) {
        let text = figures.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("E2E-MEASURE \(name): \(text)")
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.2fMiB", Double(bytes) / 1_048_576)
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2fs", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
