// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // C, quarantined: the system libraries and the typed shim over curl's variadic calls.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // OpenSSL's libcrypto, for one thing: decrypting client keys before libcurl sees them.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),

        // Swift wrappers that know nothing of Ferry.
        .target(name: "Curl", dependencies: ["CCurl"]),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The domain, without I/O.
        .target(
            name: "FerryCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "FerryStore",
            dependencies: [
                "FerryCore", "Postgres",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Migrations")]
        ),
        .target(
            name: "FerryEngine",
            dependencies: [
                "FerryCore", "FerryStore", "Curl", "COpenSSL", "Postgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "FerryWebhooks",
            dependencies: [
                "FerryCore", "FerryStore", "Curl", "Postgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "FerryAPI",
            dependencies: [
                "FerryCore", "FerryStore", "Curl",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("OpenAPI/openapi.json")]
        ),
        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryCore", "FerryStore", "FerryEngine", "FerryWebhooks", "FerryAPI", "Postgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Test support: an origin server with faults on loopback, and a throwaway PostgreSQL.
        .target(name: "TestOrigin", path: "Tests/Support/TestOrigin"),
        .target(
            name: "FerryTestSupport",
            dependencies: [
                "Postgres", "FerryStore", "FerryCore", "FerryEngine", "FerryWebhooks", "TestOrigin",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/Support/FerryTestSupport"
        ),

        .testTarget(name: "FerryCoreTests", dependencies: ["FerryCore", "FerryTestSupport"]),
        .testTarget(name: "CurlTests", dependencies: ["Curl", "TestOrigin", "FerryTestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "FerryTestSupport"]),
        .testTarget(name: "FerryStoreTests", dependencies: ["FerryStore", "FerryCore", "Postgres", "FerryTestSupport"]),
        .testTarget(name: "FerryEngineTests", dependencies: ["FerryEngine", "FerryStore", "FerryCore", "FerryTestSupport", "TestOrigin"]),
        .testTarget(
            name: "FerryWebhooksTests",
            dependencies: [
                "FerryWebhooks", "FerryAPI", "FerryStore", "FerryCore", "FerryTestSupport", "TestOrigin",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "FerryAPITests",
            dependencies: [
                "FerryAPI", "FerryStore", "FerryCore", "FerryTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["ferry", "FerryTestSupport", "TestOrigin"]),
    ],
    swiftLanguageModes: [.v6]
)
