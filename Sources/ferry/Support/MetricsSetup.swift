import Metrics
import Prometheus

/// swift-metrics, exported in Prometheus's text format at `/metrics`.
enum MetricsSetup {
    static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Libraries name metrics with dots ("http.server.request.duration"); Prometheus allows
        // only [a-zA-Z0-9_:] in names and [a-zA-Z0-9_] in label names.
        factory.nameAndLabelSanitizer = { name, labels in
            (sanitize(name), labels.map { (sanitize($0.0), $0.1) })
        }
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30),
            .seconds(60), .seconds(300), .seconds(1800),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }

    private static func sanitize(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}
